// SPDX-License-Identifier: MIT
#include "models/ipu/LoopSkipper.hpp"

#include "models/common/SaturatingCycles.hpp"

#include <algorithm>
#include <utility>

namespace ipusim {

LoopSkipper::LoopSkipper(const Program& program, std::vector<const StatGroup*> stats, std::vector<Snapshottable*> parts,
                         IPhaseObserver::CycleRange observed, bool sharesLinks)
    : m_program(program), m_stats(std::move(stats)), m_parts(std::move(parts)), m_observed(observed),
      m_sharesLinks(sharesLinks)
{
}

std::unique_ptr<LoopSkipper::Loop> LoopSkipper::enter(const std::vector<Step>& steps, uint64_t count, uint64_t cycle)
{
    // Two iterations must run before a third can be found like the second, and one after.
    if (m_observed.everything() || count <= 2 || body(steps).periodic)
        return nullptr;
    auto loop = std::make_unique<Loop>();
    loop->body = &steps;
    loop->start = snapshot();
    loop->startCycle = cycle;
    return loop;
}

std::optional<ExternalSync::SkipOffer> LoopSkipper::offer(Loop& loop, uint64_t remaining, uint64_t arrival,
                                                          uint64_t firstReady)
{
    // The last barrier of a loop iteration: offer to skip the loop's remaining iterations (but
    // its last) if this iteration has so far grown exactly as the previous one.
    const Body& b = body(*loop.body);
    if (!b.endsExternal || b.periodic || !settled())
        return std::nullopt;
    std::vector<uint64_t> partial = snapshot();
    for (std::size_t i = 0; i < partial.size() && i < loop.start.size(); ++i)
        partial[i] -= loop.start[i];
    const uint64_t arrived = arrival - loop.startCycle;
    // Every participant limits its offer by the same trace window, so offers stay equal.
    const uint64_t next = loop.startCycle + loop.lastDuration; // where the next iteration would start
    uint64_t iterations = remaining > 2 ? unobserved(next, remaining - 2, loop.lastDuration, firstReady) : 0;
    if (loop.haveLast)
        iterations = room(loop.lastDelta, iterations);
    const bool offering = loop.haveLast && loop.havePartial && iterations > 0 && partial == loop.lastPartial &&
                          arrived == loop.lastArrival && partial.size() == loop.start.size();
    const ExternalSync::SkipOffer offer{iterations, loop.lastDuration, loop.startCycle, b.externalSyncs};
    loop.lastPartial = std::move(partial);
    loop.lastArrival = arrived;
    loop.havePartial = true;
    return offering ? std::optional<ExternalSync::SkipOffer>(offer) : std::nullopt;
}

LoopSkipper::Skip LoopSkipper::atIterationEnd(Loop& loop, uint64_t remaining, uint64_t cycle, uint64_t firstReady)
{
    // Skip all but the last remaining iterations when ExternalSync granted it (a loop ending at
    // an external barrier), or, in a loop without external syncs, when this iteration repeated
    // the previous one exactly.
    if (loop.resuming) { // woken after a skip, at the same iteration end
        loop.resuming = false;
        return {};
    }
    std::vector<uint64_t> now = snapshot();
    const std::vector<int64_t> state = shape(cycle);
    const uint64_t duration = cycle - loop.startCycle;
    std::vector<uint64_t> delta(now);
    for (std::size_t i = 0; i < delta.size() && i < loop.start.size(); ++i)
        delta[i] -= loop.start[i];
    const bool sameSize = now.size() == loop.start.size();
    const Body& b = body(*loop.body);
    uint64_t iterations = 0;
    if (m_grant > 0)
        iterations = m_grant;
    else if (!b.externalSync && settled() && (!b.linked || !m_sharesLinks) && loop.haveLast && sameSize &&
             delta == loop.lastDelta && duration == loop.lastDuration && state == loop.lastShape)
        iterations = room(delta, unobserved(cycle, remaining - 2, duration, firstReady));
    m_grant = 0;
    loop.lastDelta = std::move(delta);
    loop.lastDuration = duration;
    loop.lastShape = state;
    loop.haveLast = sameSize;
    if (iterations == 0 || !sameSize) {
        loop.start = std::move(now);
        loop.startCycle = cycle;
        return {};
    }
    return {iterations, saturatingMul(iterations, duration)};
}

void LoopSkipper::skip(Loop& loop, const Skip& skip, uint64_t cycle)
{
    // Each skipped iteration grew every counter as the one that just ended (loop.lastDelta).
    std::vector<std::size_t> starts;
    const std::vector<uint64_t*> refs = counters(&starts);
    for (std::size_t i = 0; i < refs.size(); ++i)
        *refs[i] += skip.iterations * loop.lastDelta[i];
    for (std::size_t p = 0; p < m_parts.size(); ++p)
        m_parts[p]->skipped(loop.lastDelta.data() + starts[p], skip.iterations, skip.cycles);
    m_skipped += skip.iterations;
    loop.start = snapshot();
    loop.startCycle = cycle;
    loop.resuming = true;
}

const LoopSkipper::Body& LoopSkipper::body(const std::vector<Step>& steps)
{
    auto it = m_bodies.find(&steps);
    if (it != m_bodies.end())
        return it->second;
    Body info;
    for (const auto& s : steps) {
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
            const Body& in = body(r->body);
            info.externalSync |= in.externalSync;
            info.linked |= in.linked;
            info.periodic |= in.periodic;
            info.externalSyncs += r->count * in.externalSyncs;
        } else if (auto* c = std::get_if<CallStep>(&s.op)) {
            const Body& in = body(m_program.fragments.at(c->fragment));
            info.externalSync |= in.externalSync;
            info.linked |= in.linked;
            info.periodic |= in.periodic || c->period > 1;
            info.externalSyncs += in.externalSyncs;
        }
    }
    if (!steps.empty())
        if (auto* sy = std::get_if<SyncStep>(&steps.back().op); sy && sy->kind == SyncKind::External)
            info.endsExternal = true;
    return m_bodies[&steps] = info;
}

std::vector<uint64_t*> LoopSkipper::counters(std::vector<std::size_t>* starts) const
{
    std::vector<uint64_t*> c;
    for (const StatGroup* g : m_stats)
        g->counters(c);
    for (Snapshottable* part : m_parts) {
        if (starts)
            starts->push_back(c.size());
        part->counters(c);
    }
    return c;
}

std::vector<uint64_t> LoopSkipper::snapshot() const
{
    std::vector<uint64_t> v;
    for (const uint64_t* p : counters())
        v.push_back(*p);
    return v;
}

std::vector<int64_t> LoopSkipper::shape(uint64_t cycle) const
{
    std::vector<int64_t> s;
    for (const Snapshottable* part : m_parts)
        part->shape(cycle, s);
    return s;
}

bool LoopSkipper::settled() const
{
    return std::all_of(m_parts.begin(), m_parts.end(), [](const Snapshottable* part) { return part->settled(); });
}

uint64_t LoopSkipper::room(const std::vector<uint64_t>& growth, uint64_t iterations) const
{
    std::vector<std::size_t> starts;
    if (counters(&starts).size() != growth.size())
        return 0;
    for (std::size_t p = 0; p < m_parts.size(); ++p)
        iterations = m_parts[p]->room(growth.data() + starts[p], iterations);
    return iterations;
}

uint64_t LoopSkipper::unobserved(uint64_t from, uint64_t count, uint64_t duration, uint64_t firstReady) const
{
    // Skipped iterations cover [from, from + k * duration): they must end by the first cycle the
    // observer records, or start after its last. Tiles need not be aligned at an iteration's
    // end: a tile may start its next compute as early as the earliest ready time.
    const uint64_t earliest = std::min(from, firstReady);
    if (m_observed.empty() || earliest > m_observed.last || duration == 0)
        return count;
    if (from >= m_observed.first)
        return 0;
    return std::min(count, (m_observed.first - from) / duration);
}

} // namespace ipusim
