// SPDX-License-Identifier: MIT
#include "models/ipu/Ipu.hpp"

#include "models/common/SaturatingCycles.hpp"
#include "models/system/ClockPeriod.hpp"

#include <fmt/format.h>

#include <utility>

namespace ipusim {

Ipu::Ipu(sc_core::sc_module_name name, uint32_t index, const IpuParams& hw, const LinkParams& link,
         const Program& program, uint64_t hostCalls, sc_core::sc_time period, IPhaseObserver* observer,
         SystemPorts ports, const StreamingMemoryParams& streaming, std::shared_ptr<const TileMemory> memory)
    : sc_module(name),
      tiles("tiles", hw, program, std::move(memory)),
      exchange("exchange", hw, program.numPoints),
      sync("sync", hw),
      host("host_link", link, hw.clockHz),
      streamingMemory("streaming_memory", streaming, hw.clockHz),
      m_index(index),
      m_hw(hw),
      m_program(program),
      m_hostCalls(hostCalls),
      m_period(period),
      m_cycleLimit(lastCycle(period)),
      m_observer(observer),
      m_observed(observer ? observer->observedCycles() : IPhaseObserver::CycleRange{1, 0}),
      m_ports(ports),
      m_prefetchRuns(prefetchRunsPerCall(program))
{
    m_stepsTotal = saturatingMul(hostCalls, stepsExecuted(program));
    m_fragmentStats.resize(program.fragments.size());
    forEachProgramStep(program, [&](const Step& s) {
        if (auto* r = std::get_if<RepeatStep>(&s.op))
            m_loopIndex.emplace(r, m_loopIndex.size());
    });
    m_loopStats.resize(m_loopIndex.size());
    m_stats.add("compute_sets_run", m_computeSetsRun, "compute sets", "compute sets executed");
    SC_HAS_PROCESS(Ipu);
    SC_METHOD(sequence);
    sensitive << m_wake;
}

void Ipu::phase(PhaseKind kind, const std::string& name, uint64_t end)
{
    const uint64_t cycles = end - m_cycle;
    m_breakdown[kind] += cycles;
    if (m_observer && cycles)
        m_observer->phase(m_index, kind, name, m_cycle, end, m_stack.empty() ? 0 : m_stack.back().iteration);
}

void Ipu::traceTo(sc_core::sc_trace_file* file)
{
    m_traced = true;
    const std::string base = std::string(name());
    sc_core::sc_trace(file, m_activity, base + ".activity");
    sc_core::sc_trace(file, m_linkBytes, base + ".link_bytes");
}

uint64_t Ipu::endPhaseOnAllTiles(PhaseKind kind, const std::string& name, uint64_t end)
{
    tiles.align(end);
    phase(kind, name, end);
    return end;
}

uint64_t Ipu::execute(const Step& step)
{
    if (m_traced)
        traceStepStart(step);
    return std::visit([this](const auto& op) { return exec(op); }, step.op);
}

void Ipu::traceStepStart(const Step& step)
{
    // Traced state changes when a step starts: the sequencer runs at that simulated time.
    // Loops and calls take no time of their own and leave it as it is. Only a VCD reads it.
    const auto kind = phaseKindOf(step);
    if (!kind)
        return;
    m_activity = 1 + int(*kind);
    if (m_ports.links)
        m_ports.links->clearFrom(m_index);
    m_linkBytes = 0;
    if (auto* c = std::get_if<IpuCopyStep>(&step.op)) {
        for (const auto& t : c->send) {
            m_ports.links->setActive(m_index, t.peer, t.bytes);
            m_linkBytes += int64_t(t.bytes);
        }
        for (const auto& t : c->recv)
            m_linkBytes += int64_t(t.bytes);
    } else if (auto* r = std::get_if<CollectiveStep>(&step.op)) {
        m_linkBytes = int64_t(r->bytes);
        // Every ring member sends a 1/R share to its successor on the physical ring at each step.
        const auto ring = m_ports.links->topology().alongRing(r->ring);
        for (std::size_t i = 0; i < ring.size(); ++i)
            if (ring[i] == m_index)
                m_ports.links->setActive(m_index, ring[(i + 1) % ring.size()], r->bytes / ring.size());
    }
}

uint64_t Ipu::exec(const ComputeStep& c)
{
    ++m_computeSetsRun;
    const uint64_t end = std::max(tiles.compute(c, m_index, m_observer), m_cycle);
    tiles.recordPhase(c, end - m_cycle);
    phase(PhaseKind::Compute, c.name, end);
    return end;
}

uint64_t Ipu::exec(const SyncStep& s)
{
    if (s.kind == SyncKind::External && m_ports.sync) {
        const auto offer = skipOffer();
        m_ports.sync->arrive(m_ports.syncSlot, tiles.lastReady(), [this](uint64_t at, uint64_t now, uint64_t grant) { release(at, now, grant); },
                             offer ? &*offer : nullptr);
        return kWait;
    }
    return endPhaseOnAllTiles(PhaseKind::Sync, "sync", sync.release(tiles.lastReady()));
}

std::optional<ExternalSync::SkipOffer> Ipu::skipOffer()
{
    // The last barrier of a loop iteration: offer to skip the loop's remaining iterations (but
    // its last) if this iteration has so far grown exactly as the previous one.
    Frame& f = m_stack.back();
    if (!f.loop || f.pc != f.steps->size() || !bodyInfo(*f.steps).endsExternal || bodyInfo(*f.steps).periodic ||
        !fetchesAllowSkip())
        return std::nullopt;
    LoopState& loop = *f.loop;
    std::vector<uint64_t> partial = snapshot();
    for (std::size_t i = 0; i < partial.size() && i < loop.start.size(); ++i)
        partial[i] -= loop.start[i];
    const uint64_t arrival = tiles.lastReady() - loop.startCycle;
    // Every participant limits its offer by the same trace window, so offers stay equal.
    uint64_t iterations =
        f.remaining > 2 ? skippable(loop.startCycle + loop.lastDuration, f.remaining - 2, loop.lastDuration) : 0;
    if (loop.haveLast)
        iterations = withinFetchesLeft(loop.lastDelta, iterations);
    const bool offering = loop.haveLast && loop.havePartial && iterations > 0 && partial == loop.lastPartial &&
                          arrival == loop.lastArrival && partial.size() == loop.start.size();
    const ExternalSync::SkipOffer offer{iterations, loop.lastDuration, loop.startCycle, bodyInfo(*f.steps).externalSyncs};
    loop.lastPartial = std::move(partial);
    loop.lastArrival = arrival;
    loop.havePartial = true;
    return offering ? std::optional<ExternalSync::SkipOffer>(offer) : std::nullopt;
}

// Exchanges and transfers are statically scheduled: they start once every tile is ready
// (tiles.lastReady(), never later than m_cycle).

uint64_t Ipu::exec(const ExchangeStep& x)
{
    const uint64_t end = tiles.lastReady() + exchange.phaseCycles(x);
    exchange.account(x);
    return endPhaseOnAllTiles(PhaseKind::Exchange, x.name, end);
}

uint64_t Ipu::exec(const HostTransferStep& h)
{
    // A prefetching step's data was fetched into the IO tiles while earlier micro-batches ran
    // (the first time, nothing was: fetch it now); other host transfers start now, or, the first
    // of a host exchange, once the host has answered the IPU's sync.
    const Frame& f = m_stack.back();
    const auto fetched = m_prefetching.find(&h);
    const bool ahead = fetched != m_prefetching.end() && !fetched->second.empty();
    if (const uint64_t syncCycles = hostSyncCycles(); !ahead && syncCycles > 0 && opensHostExchange(*f.steps, f.pc - 1)) {
        host.countSync(syncCycles);
        m_syncedFor = &h;
        m_activity = 1 + int(PhaseKind::HostWait);
        return endPhaseOnAllTiles(PhaseKind::HostWait, "host sync", saturatingAdd(m_cycle, syncCycles));
    }
    return awaitHostTransfer(h);
}

uint64_t Ipu::awaitHostTransfer(const HostTransferStep& h)
{
    host.account(h.direction, h.bytes);
    auto it = m_prefetching.find(&h);
    IpuLinks::TransferKey key;
    if (it != m_prefetching.end() && !it->second.empty()) { // the oldest fetch ahead is this micro-batch's
        key = it->second.front();
        it->second.pop_front();
    } else {
        key = startHostTransfer(h);
    }
    m_activity = 1 + int(PhaseKind::Host);
    m_ports.links->awaitTransfers({key}, [this, &h](const std::vector<uint64_t>& ends) { finishHostTransfer(h, ends.at(0)); });
    return kWait;
}

uint64_t Ipu::hostSyncCycles() const { return m_ports.host ? m_ports.host->syncLatencyCycles() : 0; }

IpuLinks::TransferKey Ipu::startHostTransfer(const HostTransferStep& h, uint64_t delay)
{
    if (h.prefetch && m_fetchesLeft[&h] > 0)
        --m_fetchesLeft[&h];
    IpuLinks::LinkBytes sent;
    const auto key = m_ports.links->startHostTransfer(m_index, h.direction, h.bytes, ++m_hostTransfers, sent, delay);
    for (const auto& [edge, bytes] : sent)
        m_linkSent[edge] += bytes;
    return key;
}

void Ipu::finishHostTransfer(const HostTransferStep& h, uint64_t ready)
{
    const uint64_t now = nowCycle();
    m_cycle = endPhaseOnAllTiles(PhaseKind::Host, h.name, std::max(ready, m_cycle));
    if (h.prefetch) // consumed: its buffer takes the next micro-batch's data
        m_fetchNext.push_back(&h);
    wakeAt(std::max(m_cycle, now), now);
}

uint64_t Ipu::exec(const IpuCopyStep& c)
{
    const uint64_t ready = tiles.lastReady();
    std::vector<CopyRendezvous::End> ends;
    for (const auto& t : c.send)
        ends.push_back({m_index, t.peer, true, t.bytes});
    for (const auto& t : c.recv)
        ends.push_back({t.peer, m_index, false, t.bytes});
    if (ends.empty())
        return endPhaseOnAllTiles(PhaseKind::IpuCopy, c.name, ready);
    m_activity = 1 + int(PhaseKind::Sync); // traced: waiting until every partner is there (the VCD keeps
                                           // to step granularity; the breakdown splits the copy exactly)
    m_ports.copies->arrive(m_index, c.name, std::move(ends), ready,
                           [this, &c, ready](const std::vector<uint64_t>& partnerReady, const std::vector<uint64_t>& numbers) {
                               awaitCopy(c, ready, partnerReady, numbers);
                           });
    return kWait;
}

void Ipu::awaitCopy(const IpuCopyStep& c, uint64_t ready, const std::vector<uint64_t>& partnerReady, const std::vector<uint64_t>& numbers)
{
    // Every partner is there; each transfer started when its two ends were (IpuLinks runs them).
    m_activity = 1 + int(PhaseKind::IpuCopy);
    std::vector<IpuLinks::TransferKey> keys;
    for (const auto& t : c.send)
        keys.emplace_back(m_index, t.peer, numbers.at(keys.size()));
    for (const auto& t : c.recv)
        keys.emplace_back(t.peer, m_index, numbers.at(keys.size()));
    m_ports.links->awaitTransfers(std::move(keys), [this, &c, ready, partnerReady](const std::vector<uint64_t>& ends) {
        finishCopy(c, ready, partnerReady, ends);
    });
}

void Ipu::finishCopy(const IpuCopyStep& c, uint64_t ready, const std::vector<uint64_t>& partnerReady, const std::vector<uint64_t>& ends)
{
    // Each transfer started when both its ends were ready.
    std::vector<std::pair<uint64_t, uint64_t>> spans;
    auto transfer = [&] {
        const uint64_t start = std::max(ready, partnerReady.at(spans.size()));
        spans.push_back({start, std::max(start, ends.at(spans.size()))});
        return spans.back();
    };
    for (const auto& t : c.send) {
        const auto [start, end] = transfer();
        for (const auto& [edge, bytes] : m_ports.links->accountRoute(m_index, t.peer, t.bytes))
            m_linkSent[edge] += bytes;
        if (m_observer && end > start)
            m_observer->linkSpan("IPU " + std::to_string(m_index) + " -> IPU " + std::to_string(t.peer), c.name, start, end, t.bytes);
    }
    for (std::size_t i = 0; i < c.recv.size(); ++i)
        transfer();
    const uint64_t now = nowCycle();
    m_activity = 1 + int(PhaseKind::IpuCopy);
    for (const auto& p : CopyRendezvous::phases(m_cycle, std::move(spans))) {
        phase(p.copying ? PhaseKind::IpuCopy : PhaseKind::Sync, p.copying ? c.name : c.name + " wait", p.end);
        m_cycle = p.end;
    }
    tiles.align(m_cycle);
    wakeAt(std::max(m_cycle, now), now);
}

uint64_t Ipu::nowCycle() const { return sc_core::sc_time_stamp().value() / std::max<uint64_t>(m_period.value(), 1); }

uint64_t Ipu::exec(const StreamingMemoryStep& r)
{
    const uint64_t end = tiles.lastReady() + streamingMemory.transfer(r.direction, r.bytes);
    return endPhaseOnAllTiles(PhaseKind::StreamingMemory, r.name, end);
}

uint64_t Ipu::exec(const CollectiveStep& c)
{
    // The ring starts once its programmed members are all there (IpuLinks); replicas' IPUs
    // move in lockstep with the one they copy.
    if (!m_ports.links)
        return endPhaseOnAllTiles(PhaseKind::Collective, c.name, tiles.lastReady());
    m_activity = 1 + int(PhaseKind::Sync); // traced: waiting for the ring's other members
    m_ports.links->joinRing(
        m_index, c, [this] { m_activity = 1 + int(PhaseKind::Collective); },
        [this, &c](uint64_t start, uint64_t end, const IpuLinks::LinkBytes& bytes) { finishCollective(c, start, end, bytes); });
    return kWait;
}

void Ipu::finishCollective(const CollectiveStep& c, uint64_t start, uint64_t end, const IpuLinks::LinkBytes& bytes)
{
    for (const auto& [edge, b] : bytes) // one member counts the ring's traffic
        m_linkSent[edge] += b;
    if (m_observer && end > start) {
        std::string ring;
        for (uint32_t i : m_ports.links->topology().alongRing(c.ring))
            ring += (ring.empty() ? "ring " : "-") + std::to_string(i);
        m_observer->linkSpan(ring, c.name, start, end, c.bytes);
    }
    const uint64_t now = nowCycle();
    if (start > m_cycle) { // waiting for the ring's other members
        phase(PhaseKind::Sync, c.name + " wait", start);
        m_cycle = start;
    }
    m_activity = 1 + int(PhaseKind::Collective);
    m_cycle = endPhaseOnAllTiles(PhaseKind::Collective, c.name, end);
    wakeAt(std::max(m_cycle, now), now);
}

uint64_t Ipu::exec(const CallStep& call)
{
    // Counted per fragment: a pipeline reaches one fragment through several call steps.
    if (call.period > 1 && ++m_periodicCalls[call.fragment] % call.period != 0)
        return m_cycle;
    const auto& body = m_program.fragments.at(call.fragment);
    ++m_fragmentStats.at(call.fragment).calls;
    const uint64_t loop = m_stack.empty() ? 0 : m_stack.back().iteration;
    const int64_t microBatch = call.microBatch < 0 ? -1 : call.microBatch + (call.perIteration ? int64_t(loop) : 0);
    if (!body.empty())
        m_stack.push_back({&body, 0, 1, loop, int(call.fragment), m_cycle, microBatch, nullptr});
    return m_cycle;
}

uint64_t Ipu::exec(const RepeatStep& r)
{
    if (r.count == 0 || r.body.empty())
        return m_cycle;
    m_stack.push_back({&r.body, 0, r.count, 0, -1, m_cycle, -1, nullptr});
    m_stack.back().repeat = int(m_loopIndex.at(&r));
    LoopStats& stats = m_loopStats[std::size_t(m_stack.back().repeat)];
    ++stats.runs;
    stats.iterations += r.count;
    const bool recording = m_recordMicroBatches && m_callsStarted == 1;
    if (m_fastForward && !m_observed.everything() && !m_traced && !recording && r.count > 2 && !bodyInfo(r.body).periodic) {
        m_stack.back().loop = std::make_unique<LoopState>();
        m_stack.back().loop->start = snapshot();
        m_stack.back().loop->startCycle = m_cycle;
    }
    return m_cycle;
}

const Ipu::BodyInfo& Ipu::bodyInfo(const std::vector<Step>& body)
{
    auto it = m_bodies.find(&body);
    if (it != m_bodies.end())
        return it->second;
    BodyInfo info;
    for (const auto& s : body) {
        if (auto* copy = std::get_if<IpuCopyStep>(&s.op)) {
            info.linked |= !copy->send.empty() || !copy->recv.empty();
        } else if (auto* ring = std::get_if<CollectiveStep>(&s.op)) {
            info.linked |= ring->ring.size() > 1; // even without bytes, its members wait for each other
        } else if (std::holds_alternative<HostTransferStep>(s.op)) {
            info.linked = true; // other IPUs' transfers share its gateway's link to the host
        } else if (auto* sy = std::get_if<SyncStep>(&s.op); sy && sy->kind == SyncKind::External) {
            info.externalSync = true;
            ++info.externalSyncs;
        } else if (auto* r = std::get_if<RepeatStep>(&s.op)) {
            const BodyInfo& in = bodyInfo(r->body);
            info.externalSync |= in.externalSync;
            info.linked |= in.linked;
            info.periodic |= in.periodic;
            info.externalSyncs += r->count * in.externalSyncs;
        } else if (auto* c = std::get_if<CallStep>(&s.op)) {
            const BodyInfo& in = bodyInfo(m_program.fragments.at(c->fragment));
            info.externalSync |= in.externalSync;
            info.linked |= in.linked;
            info.periodic |= in.periodic || c->period > 1;
            info.externalSyncs += in.externalSyncs;
        }
    }
    if (!body.empty())
        if (auto* sy = std::get_if<SyncStep>(&body.back().op); sy && sy->kind == SyncKind::External)
            info.endsExternal = true;
    return m_bodies[&body] = info;
}

std::vector<uint64_t*> Ipu::counterRefs()
{
    // Every registered statistic, then the state a loop iteration grows that no summary field
    // counts directly: the breakdown, fragment, loop and compute-set figures, steps, link bytes,
    // prefetches left in the call.
    std::vector<uint64_t*> c;
    for (const StatGroup* g : statGroups())
        g->counters(c);
    c.push_back(&m_stepsRun);
    for (uint64_t& cycles : m_breakdown.cycles)
        c.push_back(&cycles);
    for (auto& f : m_fragmentStats) {
        c.push_back(&f.calls);
        c.push_back(&f.cycles);
    }
    for (auto& l : m_loopStats) {
        c.push_back(&l.runs);
        c.push_back(&l.iterations);
        c.push_back(&l.cycles);
    }
    tiles.counters(c);
    for (auto& [edge, bytes] : m_linkSent)
        c.push_back(&bytes);
    for (auto& [step, left] : m_fetchesLeft) // counts down: a skip subtracts (modulo 2^64) what each iteration fetched
        c.push_back(&left);
    return c;
}

std::vector<uint64_t> Ipu::snapshot()
{
    std::vector<uint64_t> v;
    for (const uint64_t* p : counterRefs())
        v.push_back(*p);
    return v;
}

std::vector<int64_t> Ipu::shape() const
{
    std::vector<int64_t> s;
    tiles.shape(m_cycle, s);
    s.push_back(int64_t(m_linkSent.size()));
    return s;
}

bool Ipu::skipIterations(const std::vector<uint64_t>& delta, uint64_t times, uint64_t duration)
{
    const uint64_t shift = saturatingMul(times, duration);
    if (!withinTimeLimit(m_cycle + shift, "skipping a loop's iterations"))
        return false;
    // Links are shared: add this IPU's share of their bytes there too.
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> before(m_linkSent);
    auto refs = counterRefs();
    for (std::size_t i = 0; i < refs.size(); ++i)
        *refs[i] += times * delta[i];
    if (m_ports.links)
        for (const auto& [edge, bytes] : m_linkSent)
            m_ports.links->account(edge.first, edge.second, bytes - before[edge]);
    m_cycle += shift;
    tiles.shift(shift);
    m_skipped += times;
    return true;
}

uint64_t Ipu::skippable(uint64_t from, uint64_t count, uint64_t duration) const
{
    // Skipped iterations cover [from, from + k * duration): they must end by the first cycle the
    // observer records, or start after its last. Tiles need not be aligned at an iteration's
    // end: a tile may start its next compute as early as the earliest ready time.
    const uint64_t earliest = std::min(from, tiles.firstReady());
    if (m_observed.empty() || earliest > m_observed.last || duration == 0)
        return count;
    if (from >= m_observed.first)
        return 0;
    return std::min(count, (m_observed.first - from) / duration);
}

bool Ipu::withinTimeLimit(uint64_t cycle, const char* doing)
{
    if (cycle <= m_cycleLimit)
        return true;
    if (m_failure.empty())
        m_failure = fmt::format("IPU {} would reach cycle {} {}, past cycle {}, where SystemC's 64-bit femtosecond clock "
                                "ends at {:.6g} GHz: simulate fewer iterations, samples or steps",
                                m_index, cycle, doing, m_cycleLimit, m_hw.clockHz / 1e9);
    sc_core::sc_stop();
    return false;
}

uint64_t Ipu::withinFetchesLeft(const std::vector<uint64_t>& delta, uint64_t iterations) const
{
    // The last counters are the fetches left in the call, counting down: an iteration that
    // fetched and one past the call's last fetch differ, so skip only as far as they last.
    if (delta.size() < m_fetchesLeft.size())
        return 0;
    std::size_t i = delta.size() - m_fetchesLeft.size();
    for (const auto& [step, left] : m_fetchesLeft) {
        const uint64_t used = uint64_t(0) - delta[i++]; // per iteration (a count down, modulo 2^64)
        if (used > 0)
            iterations = std::min(iterations, left / used);
    }
    return iterations;
}

bool Ipu::fetchesAllowSkip() const
{
    // A prefetch still on the links would not move with the skip: skip only once every fetch
    // is in (then its end is past, like any other).
    const uint64_t now = nowCycle();
    return std::all_of(m_prefetching.begin(), m_prefetching.end(), [&](const auto& fetches) {
        return std::all_of(fetches.second.begin(), fetches.second.end(),
                           [&](const IpuLinks::TransferKey& key) { return m_ports.links->transferEndedBy(key, now); });
    });
}

bool Ipu::wakeAt(uint64_t cycle, uint64_t nowCycle)
{
    if (!withinTimeLimit(cycle, "at its next step"))
        return false;
    m_wake.notify(m_period * double(cycle - nowCycle));
    return true;
}

bool Ipu::fastForward(Frame& f)
{
    // An iteration just ended and another follows. Skip all but the last remaining ones when
    // ExternalSync granted it (a loop ending at an external barrier), or, in a loop without
    // external syncs, when this iteration repeated the previous one exactly.
    LoopState& loop = *f.loop;
    if (loop.resuming) { // woken after a skip, at the same iteration end
        loop.resuming = false;
        return false;
    }
    std::vector<uint64_t> now = snapshot();
    const std::vector<int64_t> state = shape();
    const uint64_t duration = m_cycle - loop.startCycle;
    std::vector<uint64_t> delta(now);
    for (std::size_t i = 0; i < delta.size() && i < loop.start.size(); ++i)
        delta[i] -= loop.start[i];
    const bool sameSize = now.size() == loop.start.size();
    uint64_t skip = 0;
    if (m_grant > 0)
        skip = m_grant;
    else if (!bodyInfo(*f.steps).externalSync && fetchesAllowSkip() &&
             (!bodyInfo(*f.steps).linked || m_ports.links->programmedIpus() == 1) && loop.haveLast && sameSize && delta == loop.lastDelta &&
             duration == loop.lastDuration && state == loop.lastShape)
        skip = withinFetchesLeft(delta, skippable(m_cycle, f.remaining - 2, duration));
    m_grant = 0;
    loop.lastDelta = delta;
    loop.lastDuration = duration;
    loop.lastShape = state;
    loop.haveLast = sameSize;
    if (skip == 0 || !sameSize) {
        loop.start = std::move(now);
        loop.startCycle = m_cycle;
        return false;
    }
    const uint64_t from = m_cycle;
    if (!skipIterations(delta, skip, duration))
        return true; // the run stops at the time limit
    f.remaining -= skip;
    f.iteration += skip;
    loop.start = snapshot();
    loop.startCycle = m_cycle;
    loop.resuming = true;
    wakeAt(m_cycle, from);
    return true;
}

void Ipu::release(uint64_t releaseCycle, uint64_t nowCycle, uint64_t grant)
{
    m_grant = grant;
    // Waiting for the other IPUs counts as sync: from this IPU's arrival to the release.
    phase(PhaseKind::Sync, "external sync", releaseCycle);
    tiles.align(releaseCycle);
    m_cycle = releaseCycle;
    wakeAt(releaseCycle, nowCycle);
}

void Ipu::startCall(const HostCallClock::Call& call)
{
    // From this IPU's end of the last call.
    for (const auto& w : HostCallClock::waitsBefore(call, m_callsStarted))
        if (w.end > m_cycle) {
            phase(w.kind, w.name, w.end);
            m_cycle = w.end;
        }
    tiles.align(m_cycle);
    wakeAt(m_cycle, nowCycle());
}

void Ipu::sequence()
{
    // Woken where prefetched data was consumed: the host fills the free buffers, each fetch ending
    // once it has answered (its data takes the links at once).
    for (const HostTransferStep* h : m_fetchNext)
        for (auto& ahead = m_prefetching[h]; ahead.size() < h->prefetchDepth && m_fetchesLeft[h] > 0;)
            ahead.push_back(startHostTransfer(*h, hostSyncCycles()));
    m_fetchNext.clear();
    if (const HostTransferStep* h = std::exchange(m_syncedFor, nullptr)) { // woken as the host answered
        awaitHostTransfer(*h);
        return;
    }
    const uint64_t now = nowCycle(); // where SystemC's time is: m_cycle runs ahead of it through local steps
    while (true) {
        const Frame* top = m_stack.empty() ? nullptr : &m_stack.back();
        const bool ahead = top && top->pc < top->steps->size() && runsAhead((*top->steps)[top->pc]);
        if (m_cycle > now && !ahead) {
            wakeAt(m_cycle, now); // catch up first: what comes next happens at m_cycle for every process
            return;
        }
        if (m_stack.empty()) {
            if (m_callsStarted == m_hostCalls) {
                m_finished = true;
                m_activity = 0;
                m_linkBytes = 0;
                return;
            }
            m_stack.push_back({&m_program.steps, 0, 1, m_callsStarted++, -1, 0, -1, nullptr});
            m_prefetching.clear(); // a call's data comes with it: nothing is fetched past a call's end
            m_fetchesLeft = m_prefetchRuns;
            if (m_ports.host) { // the host starts the call: wait for it
                m_activity = 1 + int(PhaseKind::HostWait);
                m_ports.host->arrive(m_ports.syncSlot, std::max(m_cycle, tiles.lastReady()),
                                     [this](const HostCallClock::Call& call) { startCall(call); });
                return;
            }
        }
        Frame& f = m_stack.back();
        if (f.pc == f.steps->size()) {
            if (f.loop && f.remaining > 1 && fastForward(f))
                return; // the sequencer wakes when the skipped iterations have passed
            if (--f.remaining > 0) {
                f.pc = 0;
                ++f.iteration;
            } else {
                if (f.fragment >= 0) {
                    m_fragmentStats[std::size_t(f.fragment)].cycles += m_cycle - f.entered;
                    if (m_recordMicroBatches && m_callsStarted == 1 && f.microBatch >= 0) {
                        auto [it, fresh] = m_microBatches.try_emplace(f.microBatch, f.entered, m_cycle);
                        it->second.first = std::min(it->second.first, f.entered);
                        it->second.second = std::max(it->second.second, m_cycle);
                    }
                    if (m_observer && m_cycle > f.entered)
                        m_observer->fragmentSpan(m_index, m_program.fragmentNames.at(std::size_t(f.fragment)), f.entered,
                                                 m_cycle, f.microBatch);
                }
                if (f.repeat >= 0)
                    m_loopStats[std::size_t(f.repeat)].cycles += m_cycle - f.entered;
                m_stack.pop_back();
                if (m_stack.empty()) {
                    m_callEnds.push_back(m_cycle);
                    m_computeAtCallEnds.push_back(m_breakdown[PhaseKind::Compute]);
                }
            }
            continue;
        }
        const Step& step = (*f.steps)[f.pc++];
        ++m_stepsRun;
        const uint64_t end = execute(step);
        if (end == kWait)
            return; // release() wakes us
        if (end > m_cycle) {
            if (ahead) {
                if (!withinTimeLimit(end, "at its next step"))
                    return;
                m_cycle = end;
                continue;
            }
            if (wakeAt(end, m_cycle))
                m_cycle = end;
            return;
        }
    }
}

bool Ipu::runsAhead(const Step& step) const
{
    if (m_traced)
        return false;
    if (const auto* s = std::get_if<SyncStep>(&step.op))
        return s->kind == SyncKind::Internal;
    return std::holds_alternative<ComputeStep>(step.op) || std::holds_alternative<ExchangeStep>(step.op) ||
           std::holds_alternative<CallStep>(step.op);
}

} // namespace ipusim
