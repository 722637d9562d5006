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
      m_ports(ports),
      m_prefetch(program, ports.links, period),
      m_linkShare(ports.links),
      // Loops skip only outside what the observer records.
      m_skipper(program, statGroups(), {this, &tiles, &m_linkShare, &m_prefetch},
                observer ? observer->observedCycles() : IPhaseObserver::CycleRange{1, 0},
                ports.links && ports.links->programmedIpus() != 1)
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
        const auto offer = skipOffer(tiles.lastReady());
        m_ports.sync->arrive(m_ports.syncSlot, tiles.lastReady(), [this](uint64_t at, uint64_t now, uint64_t grant) { release(at, now, grant); },
                             offer ? &*offer : nullptr);
        return kWait;
    }
    return endPhaseOnAllTiles(PhaseKind::Sync, "sync", sync.release(tiles.lastReady()));
}

std::optional<ExternalSync::SkipOffer> Ipu::skipOffer(uint64_t arrival)
{
    // Only the barrier that ends a loop's iteration (the body's last step) may offer a skip.
    Frame& f = m_stack.back();
    if (!f.loop || f.pc != f.steps->size())
        return std::nullopt;
    return m_skipper.offer(*f.loop, f.remaining, arrival, tiles.firstReady());
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
    if (const uint64_t syncCycles = hostSyncCycles(); !m_prefetch.ahead(h) && syncCycles > 0 && opensHostExchange(*f.steps, f.pc - 1)) {
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
    std::optional<IpuLinks::TransferKey> key = m_prefetch.take(h); // the oldest fetch ahead is this micro-batch's
    if (!key) {
        m_prefetch.started(h);
        key = startHostTransfer(h);
    }
    m_activity = 1 + int(PhaseKind::Host);
    m_ports.links->awaitTransfers({*key}, [this, &h](const std::vector<uint64_t>& ends) { finishHostTransfer(h, ends.at(0)); });
    return kWait;
}

uint64_t Ipu::hostSyncCycles() const { return m_ports.host ? m_ports.host->syncLatencyCycles() : 0; }

IpuLinks::TransferKey Ipu::startHostTransfer(const HostTransferStep& h, uint64_t delay)
{
    IpuLinks::LinkBytes sent;
    const auto key = m_ports.links->startHostTransfer(m_index, h.direction, h.bytes, ++m_hostTransfers, sent, delay);
    m_linkShare.add(sent);
    return key;
}

void Ipu::finishHostTransfer(const HostTransferStep& h, uint64_t ready)
{
    const uint64_t now = nowCycle();
    m_cycle = endPhaseOnAllTiles(PhaseKind::Host, h.name, std::max(ready, m_cycle));
    m_prefetch.consumed(h);
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
        m_linkShare.add(m_ports.links->accountRoute(m_index, t.peer, t.bytes));
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

uint64_t Ipu::nowCycle() const { return presentCycle(m_period); }

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
    m_linkShare.add(bytes); // one member counts the ring's traffic
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
    // Every iteration runs when asked to, under a VCD (its signals change as time passes) and
    // while micro-batches are recorded (a skip would hide some).
    const bool recording = m_recordMicroBatches && m_callsStarted == 1;
    if (m_fastForward && !m_traced && !recording)
        m_stack.back().loop = m_skipper.enter(r.body, r.count, m_cycle);
    return m_cycle;
}

void Ipu::counters(std::vector<uint64_t*>& out)
{
    // What a loop iteration grows here that no statistic counts: steps, the breakdown, the
    // fragment and loop figures.
    out.push_back(&m_stepsRun);
    for (uint64_t& cycles : m_breakdown.cycles)
        out.push_back(&cycles);
    for (auto& f : m_fragmentStats) {
        out.push_back(&f.calls);
        out.push_back(&f.cycles);
    }
    for (auto& l : m_loopStats) {
        out.push_back(&l.runs);
        out.push_back(&l.iterations);
        out.push_back(&l.cycles);
    }
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

bool Ipu::wakeAt(uint64_t cycle, uint64_t nowCycle)
{
    if (!withinTimeLimit(cycle, "at its next step"))
        return false;
    m_wake.notify(m_period * double(cycle - nowCycle));
    return true;
}

bool Ipu::fastForward(Frame& f)
{
    // An iteration just ended and another follows: the skipper decides, the sequencer moves its
    // clock past the skipped iterations and sleeps until SystemC's time has caught up.
    const LoopSkipper::Skip skip = m_skipper.atIterationEnd(*f.loop, f.remaining, m_cycle, tiles.firstReady());
    if (skip.iterations == 0)
        return false;
    if (!withinTimeLimit(m_cycle + skip.cycles, "skipping a loop's iterations"))
        return true; // the run stops at the time limit
    const uint64_t from = m_cycle;
    m_cycle += skip.cycles;
    m_skipper.skip(*f.loop, skip, m_cycle);
    f.remaining -= skip.iterations;
    f.iteration += skip.iterations;
    wakeAt(m_cycle, from);
    return true;
}

void Ipu::release(uint64_t releaseCycle, uint64_t nowCycle, uint64_t grant)
{
    m_skipper.granted(grant);
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
    m_prefetch.refill([this](const HostTransferStep& h) { return startHostTransfer(h, hostSyncCycles()); });
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
            m_prefetch.startCall(); // a call's data comes with it: nothing is fetched past a call's end
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
                leave();
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

void Ipu::leave()
{
    // The body on top has run its last iteration.
    const Frame& f = m_stack.back();
    if (f.fragment >= 0) {
        m_fragmentStats[std::size_t(f.fragment)].cycles += m_cycle - f.entered;
        if (m_recordMicroBatches && m_callsStarted == 1 && f.microBatch >= 0) {
            auto [it, fresh] = m_microBatches.try_emplace(f.microBatch, f.entered, m_cycle);
            it->second.first = std::min(it->second.first, f.entered);
            it->second.second = std::max(it->second.second, m_cycle);
        }
        if (m_observer && m_cycle > f.entered)
            m_observer->fragmentSpan(m_index, m_program.fragmentNames.at(std::size_t(f.fragment)), f.entered, m_cycle,
                                     f.microBatch);
    }
    if (f.repeat >= 0)
        m_loopStats[std::size_t(f.repeat)].cycles += m_cycle - f.entered;
    m_stack.pop_back();
    if (m_stack.empty()) { // the host call's program has ended
        m_callEnds.push_back(m_cycle);
        m_computeAtCallEnds.push_back(m_breakdown[PhaseKind::Compute]);
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
