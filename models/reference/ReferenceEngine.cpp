// SPDX-License-Identifier: MIT
#include "models/reference/ReferenceEngine.hpp"

#include "models/link/CopyRendezvous.hpp"
#include "models/reference/RefLinkNetwork.hpp"
#include "models/timing/HostCallTiming.hpp"
#include "models/system/Kernel.hpp"

#include <fmt/format.h>
#include <systemc>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <tuple>

namespace ipusim {

std::vector<PhaseRecord> PhaseRecorder::byIpu() const
{
    std::vector<PhaseRecord> out(phases);
    std::stable_sort(out.begin(), out.end(), [](const PhaseRecord& a, const PhaseRecord& b) { return a.ipu < b.ipu; });
    return out;
}

std::string firstDifference(const std::vector<PhaseRecord>& a, const std::vector<PhaseRecord>& b)
{
    auto describe = [](const PhaseRecord& p) {
        return fmt::format("IPU {} {} \"{}\" [{}, {})", p.ipu, nameOf(p.kind), p.name, p.start, p.end);
    };
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
        if (i >= a.size())
            return "the reference engine has more phases, first extra: " + describe(b[i]);
        if (i >= b.size())
            return "the fast engine has more phases, first extra: " + describe(a[i]);
        if (!(a[i] == b[i]))
            return fmt::format("phase {}: fast {}, reference {}", i, describe(a[i]), describe(b[i]));
    }
    return "";
}

namespace {

/** Bytes a link moves in n cycles, at `bytesPerCycle`; done once it has moved them all. */
struct Stream
{
    long double bytesPerCycle = 1;
    uint64_t bytes = 0, cycles = 0;
    /** Another cycle of streaming; true when every byte has gone. */
    bool tick()
    {
        ++cycles;
        return done();
    }
    [[nodiscard]] bool done() const
    {
        return bytes == 0 || (long double)cycles * bytesPerCycle >= (long double)bytes - 1e-9L * bytesPerCycle;
    }
};

/** A transfer over a link: `latency` cycles (per hop, or the link's own), then the stream. */
struct Transfer
{
    uint64_t latency = 0;
    Stream stream;
    [[nodiscard]] bool done() const { return stream.bytes == 0 || (latency == 0 && stream.done()); }
    void tick()
    {
        if (stream.bytes == 0)
            return;
        if (latency > 0)
            --latency;
        else
            stream.tick();
    }
};

/** A step as one IPU executes it: the program flattened (loops unrolled, calls inlined). */
struct FlatStep
{
    const Step* step;
    uint64_t hostCall = 0;          // the host starting host call n (from 1), not a program step
    bool opensHostExchange = false; // a host transfer that syncs with the host first
};

void flatten(const Program& program, const std::vector<Step>& steps, std::vector<FlatStep>& out, std::map<uint32_t, uint64_t>& periodic)
{
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const Step& s = steps[i];
        if (auto* r = std::get_if<RepeatStep>(&s.op)) {
            for (uint64_t n = 0; n < r->count; ++n)
                flatten(program, r->body, out, periodic);
        } else if (auto* c = std::get_if<CallStep>(&s.op)) {
            if (c->period > 1 && ++periodic[c->fragment] % c->period != 0)
                continue;
            flatten(program, program.fragments.at(c->fragment), out, periodic);
        } else {
            out.push_back({&s, 0, std::holds_alternative<HostTransferStep>(s.op) && opensHostExchange(steps, i)});
        }
    }
}

/** The IPU-copy transfers listed so far, per edge (from, to) and side (listed as a send, or as a
 *  receive): the cycle each listing's IPU reached it. The n-th send of an edge pairs with its
 *  n-th receive; the transfer moves once both are there. */
using CopySide = std::tuple<uint32_t, uint32_t, bool>;
using CopyArrivals = std::map<CopySide, std::vector<uint64_t>>;

/** One IPU ticked cycle by cycle: tiles as workers, and the activity of the collective step
 *  (exchange, sync, transfer) all its tiles have reached. */
class RefIpu
{
public:
    RefIpu(const Program& program, const SystemParams& sys, uint64_t hostCalls, CopyArrivals& copies, RefLinkNetwork& links)
        : m_program(program), m_sys(sys), m_tiles(sys.ipu.tiles), m_copies(copies), m_links(links),
          m_hostSyncCycles(hostSyncCycles(sys.host, sys.ipu.clockHz)), m_prefetchRuns(prefetchRunsPerCall(program))
    {
        std::map<uint32_t, uint64_t> periodic;
        for (uint64_t c = 0; c < hostCalls; ++c) {
            m_flat.push_back({&m_hostCallStep, c + 1}); // a step of its own, which every tile reaches before the call
            flatten(program, program.steps, m_flat, periodic);
        }
        m_pc.assign(m_tiles, 0);
        m_busy.assign(m_tiles, 0);
        m_done.assign(m_flat.size(), 0);
        m_startOf.assign(m_flat.size(), 0);
        m_endOf.assign(m_flat.size(), 0);
    }

    [[nodiscard]] bool finished() const { return m_released == m_flat.size() && allTilesAtEnd(); }
    [[nodiscard]] bool atExternalBarrier() const { return m_active && m_activeKind == Activity::Barrier; }
    /** Every tile is at the next host call, which the host has not started yet. */
    [[nodiscard]] bool atHostCall() const { return m_active && m_activeKind == Activity::HostCall && !m_hostCallGranted; }
    /** The host starts the call this IPU waits at (at the current cycle every IPU is back). */
    void startHostCall(const HostCallClock::Call& call, uint64_t cycle)
    {
        m_hostCallGranted = true;
        m_countdown = call.start - cycle;
        m_hostCalls[m_released] = call;
    }
    /** At an IPU copy, a transfer's partner not yet there: only another IPU's move frees it. */
    [[nodiscard]] bool waitingForCopyPartner() const
    {
        return m_active && m_activeKind == Activity::Copy &&
               std::any_of(m_copy.begin(), m_copy.end(), [&](const CopyTransfer& x) { return !partnerArrived(x); });
    }
    /** At a collective whose ring waits for members still to come. */
    [[nodiscard]] bool waitingForRingMembers() const
    {
        return m_active && m_activeKind == Activity::Ring && !m_links.started(m_ringId);
    }
    [[nodiscard]] uint32_t ipu() const { return m_program.ipu; }

    /** One cycle of work: busy tiles work, the activity counts down. */
    void tick(uint64_t cycle)
    {
        for (uint32_t t = 0; t < m_tiles; ++t)
            if (m_busy[t] > 0 && --m_busy[t] == 0) {
                const std::size_t k = m_pc[t]++; // the compute set it worked on
                m_done[k] = std::max(m_done[k], cycle);
                m_tileMoved = true;
            }
        if (m_active)
            tickActivity();
    }

    /** Everything that takes no time at `cycle`: tiles move through compute sets they have
     *  nothing to do in, start the next one, or reach a collective step; a collective step
     *  starts once all tiles are there, ends when its activity has run out. Returns whether
     *  anything changed. */
    bool settle(uint64_t cycle)
    {
        bool changed = false;
        // Tiles move only when one finished its work or a collective step let them go.
        for (uint32_t t = 0; t < m_tiles && m_tileMoved; ++t)
            while (m_busy[t] == 0 && m_pc[t] < m_flat.size()) {
                const std::size_t k = m_pc[t];
                auto* c = std::get_if<ComputeStep>(&m_flat[k].step->op);
                if (!c)
                    break; // waits at a collective step
                const uint64_t work = cyclesOf(*c, t);
                changed = true;
                if (work == 0) {
                    m_done[k] = std::max(m_done[k], cycle);
                    ++m_pc[t];
                } else {
                    m_busy[t] = work;
                    break;
                }
            }
        const bool moved = m_tileMoved;
        m_tileMoved = false;
        if (moved && !m_active && m_released < m_flat.size()) {
            // The next collective step, once every tile has reached it.
            std::size_t k = m_released;
            while (k < m_flat.size() && std::holds_alternative<ComputeStep>(m_flat[k].step->op))
                ++k;
            if (k < m_flat.size() && std::all_of(m_pc.begin(), m_pc.end(), [&](std::size_t pc) { return pc == k; }) &&
                std::all_of(m_busy.begin(), m_busy.end(), [](uint64_t b) { return b == 0; })) {
                m_released = k;
                m_startOf[k] = cycle;
                start(m_flat[k], cycle);
                changed = true;
            } else if (k == m_flat.size() && allTilesAtEnd()) {
                m_released = k;
            }
        }
        if (m_active && m_syncingFor && m_countdown == 0) { // the host answered: the data moves
            m_hostKey = startHostTransfer(*m_syncingFor, cycle);
            m_syncEnd[m_released] = cycle;
            m_syncingFor = nullptr;
        }
        if (m_active && activityDone(cycle)) {
            m_active = false;
            if (m_activeKind == Activity::HostTransfer && m_prefetchStep) {
                // consumed: the host fills the free buffers, each fetch ending once it has answered
                for (auto& ahead = m_fetching[m_prefetchStep];
                     ahead.size() < m_prefetchStep->prefetchDepth && m_fetchesLeft[m_prefetchStep] > 0;)
                    ahead.push_back(startHostTransfer(*m_prefetchStep, cycle, m_hostSyncCycles));
                m_prefetchStep = nullptr;
            }
            m_endOf[m_released] = cycle;
            if (m_activeKind == Activity::Copy)
                m_copyPhases[m_released] = copyPhases(m_startOf[m_released]);
            if (m_activeKind == Activity::Ring)
                m_ringStart[m_released] = m_links.startCycle(m_ringId);
            for (auto& pc : m_pc)
                ++pc;
            ++m_released;
            m_tileMoved = changed = true;
        }
        if (changed)
            m_tileMoved = true; // look again: a zero-time move may enable another
        return changed;
    }

    /** The external barrier this IPU waits at has released (at the current cycle). */
    void releaseBarrier() { m_barrierDone = true; }

    /** Phases in program order, as the fast engine reports them: a compute set from the end
     *  of the previous phase to when its last tile is done; any other step from when the last
     *  tile reached it to when its activity ran out. Zero-length phases are not reported. */
    void report(std::vector<PhaseRecord>& out) const
    {
        uint64_t now = 0;
        for (std::size_t k = 0; k < m_flat.size(); ++k) {
            const Step& s = *m_flat[k].step;
            PhaseRecord r;
            r.ipu = m_program.ipu;
            r.start = now;
            if (auto* c = std::get_if<ComputeStep>(&s.op)) {
                r.kind = PhaseKind::Compute;
                r.name = c->name;
                r.end = std::max(now, m_done[k]);
            } else if (m_flat[k].hostCall) {
                // Waiting for the other IPUs, then the host's data loader, then its dispatch; the
                // last ends when this IPU's countdown ran out.
                auto waits = HostCallClock::waitsBefore(m_hostCalls.at(k), m_flat[k].hostCall);
                waits.back().end = m_endOf[k];
                uint64_t from = m_startOf[k];
                for (const auto& w : waits)
                    if (w.end > from) {
                        out.push_back({m_program.ipu, w.kind, w.name, from, w.end});
                        from = w.end;
                    }
                now = std::max(now, m_endOf[k]);
                continue;
            } else if (auto* c = std::get_if<CollectiveStep>(&s.op); c && m_ringStart.count(k)) {
                // Waiting for the ring's other members, then the collective.
                const uint64_t start = m_ringStart.at(k);
                if (start > m_startOf[k])
                    out.push_back({m_program.ipu, PhaseKind::Sync, c->name + " wait", m_startOf[k], start});
                if (m_endOf[k] > start)
                    out.push_back({m_program.ipu, PhaseKind::Collective, c->name, start, m_endOf[k]});
                now = std::max(now, m_endOf[k]);
                continue;
            } else if (auto* h = std::get_if<HostTransferStep>(&s.op); h && m_syncEnd.count(k)) {
                // The host answering the exchange's sync, then the transfer.
                out.push_back({m_program.ipu, PhaseKind::HostWait, "host sync", m_startOf[k], m_syncEnd.at(k)});
                if (m_endOf[k] > m_syncEnd.at(k))
                    out.push_back({m_program.ipu, PhaseKind::Host, h->name, m_syncEnd.at(k), m_endOf[k]});
                now = std::max(now, m_endOf[k]);
                continue;
            } else if (auto* c = std::get_if<IpuCopyStep>(&s.op); c && m_copyPhases.count(k)) {
                for (const auto& p : m_copyPhases.at(k))
                    out.push_back({m_program.ipu, p.copying ? PhaseKind::IpuCopy : PhaseKind::Sync,
                                   p.copying ? c->name : c->name + " wait", p.start, p.end});
                now = std::max(now, m_endOf[k]);
                continue;
            } else {
                r.start = m_startOf[k];
                r.end = m_endOf[k];
                r.kind = phaseKindOf(s).value_or(PhaseKind::Compute);
                r.name = std::visit([](const auto& op) -> std::string {
                    using T = std::decay_t<decltype(op)>;
                    if constexpr (std::is_same_v<T, SyncStep>)
                        return op.kind == SyncKind::External ? "external sync" : "sync";
                    else if constexpr (std::is_same_v<T, RepeatStep> || std::is_same_v<T, CallStep> || std::is_same_v<T, ComputeStep>)
                        return "";
                    else
                        return op.name;
                }, s.op);
            }
            if (r.end > r.start)
                out.push_back(r);
            now = std::max(now, r.end);
        }
    }
    [[nodiscard]] uint64_t lastCycle() const
    {
        uint64_t last = 0;
        for (std::size_t k = 0; k < m_flat.size(); ++k)
            last = std::max({last, m_done[k], m_endOf[k]});
        return last;
    }

private:
    enum class Activity { Countdown, Exchange, Transfers, HostTransfer, Copy, Ring, Barrier, HostCall };

    /** One transfer of an IPU copy as this IPU lists it, and where its partner's listing is. */
    struct CopyTransfer
    {
        RefLinkNetwork::TransferKey key;
        uint64_t bytes = 0;
        CopySide partner;
        std::size_t index; // the partner's listing that pairs with this one
    };
    /** The transfer has moved its last byte by `cycle`. */
    [[nodiscard]] bool transferDone(const CopyTransfer& x, uint64_t cycle) const
    {
        const auto end = m_links.transferEnd(x.key);
        return end && *end <= cycle;
    }
    [[nodiscard]] bool partnerArrived(const CopyTransfer& x) const
    {
        auto it = m_copies.find(x.partner);
        return it != m_copies.end() && it->second.size() > x.index;
    }
    /** The current copy's phases: each transfer ran from when both its ends were there (this
     *  IPU `arrived`) until its last byte was in. */
    [[nodiscard]] std::vector<CopyRendezvous::Phase> copyPhases(uint64_t arrived) const
    {
        std::vector<std::pair<uint64_t, uint64_t>> spans;
        for (const auto& x : m_copy) {
            const uint64_t start = std::max(arrived, m_copies.at(x.partner).at(x.index));
            spans.push_back({start, std::max(start, *m_links.transferEnd(x.key))});
        }
        return CopyRendezvous::phases(arrived, std::move(spans));
    }

    /** Host transfers run on the links. A prefetching one (IO tiles) the first time fetches its
     *  data now; as each is consumed, the host fetches in the background until its depth is
     *  ahead (none past the call's last run), and a later run of the step takes the oldest. */
    RefLinkNetwork::TransferKey startHostTransfer(const HostTransferStep& h, uint64_t cycle, uint64_t delay = 0)
    {
        if (h.prefetch && m_fetchesLeft[&h] > 0)
            --m_fetchesLeft[&h];
        return m_links.startHostTransfer(m_program.ipu, h.direction, h.bytes, ++m_hostTransfers, cycle, delay);
    }

    [[nodiscard]] bool allTilesAtEnd() const
    {
        return std::all_of(m_pc.begin(), m_pc.end(), [&](std::size_t pc) { return pc == m_flat.size(); }) &&
               std::all_of(m_busy.begin(), m_busy.end(), [](uint64_t b) { return b == 0; });
    }

    uint64_t cyclesOf(const ComputeStep& c, uint32_t tile)
    {
        auto it = m_dense.find(&c);
        if (it == m_dense.end()) {
            std::vector<uint64_t> v(m_tiles, 0);
            for (const auto& r : c.cycles.runs())
                for (uint32_t t = r.first; t < r.end() && t < m_tiles; ++t)
                    v[t] = r.value;
            it = m_dense.emplace(&c, std::move(v)).first;
        }
        return it->second[tile];
    }

    Transfer linkOf(double bytesPerSecond, double efficiency, uint64_t latency, uint64_t bytes) const
    {
        Transfer x;
        if (bytes == 0)
            return x;
        x.latency = latency;
        x.stream = {(long double)bytesPerSecond * efficiency / m_sys.ipu.clockHz, bytes, 0};
        return x;
    }

    void start(const FlatStep& flat, uint64_t cycle)
    {
        const Step& s = *flat.step;
        m_active = true;
        m_countdown = 0;
        m_transfers.clear();
        m_copy.clear();
        m_barrierDone = false;
        if (flat.hostCall) {
            m_activeKind = Activity::HostCall; // RefSystem starts it once every IPU is here
            m_hostCallGranted = false;
            m_fetching.clear(); // a call's data comes with it: nothing is fetched past a call's end
            m_fetchesLeft = m_prefetchRuns;
        } else if (auto* sy = std::get_if<SyncStep>(&s.op)) {
            if (sy->kind == SyncKind::External) {
                m_activeKind = Activity::Barrier;
            } else {
                m_activeKind = Activity::Countdown;
                m_countdown = m_sys.ipu.internalSyncCycles;
            }
        } else if (auto* x = std::get_if<ExchangeStep>(&s.op)) {
            // Per tile: bytes still to send, and receive-bus units still to arrive (a tile's own
            // data takes the bus for itself; data every tile on the bus wants arrives once).
            m_activeKind = Activity::Exchange;
            m_send.assign(m_tiles, 0);
            m_recv.assign(m_tiles, 0);
            const uint64_t k = m_sys.ipu.tilesPerReceiveBus;
            bool any = false;
            for (const auto& r : x->bytes.runs())
                for (uint32_t t = r.first; t < r.end() && t < m_tiles; ++t) {
                    m_send[t] = r.value.send;
                    m_recv[t] = r.value.recv * k + r.value.recvShared;
                    any |= m_send[t] || m_recv[t];
                }
            // After the last byte leaves its tile, the path's latency: the fixed part, then a
            // hop per row of tiles.
            m_countdown = any ? m_sys.ipu.exchangeLatencyBase + uint64_t(m_sys.ipu.exchangeLatencyPerRow) *
                                                                     ((m_tiles + m_sys.ipu.columns - 1) / m_sys.ipu.columns - 1)
                              : 0;
            m_bytesLeft = any;
        } else if (auto* h = std::get_if<HostTransferStep>(&s.op)) {
            // A background fetch, or the transfer starting now; or, the first of a host exchange
            // (the step before was no host transfer), once the host has answered the IPU's sync.
            m_activeKind = Activity::HostTransfer;
            m_prefetchStep = h->prefetch ? h : nullptr;
            if (auto fetch = m_fetching.find(h); fetch != m_fetching.end() && !fetch->second.empty()) {
                m_hostKey = fetch->second.front(); // the oldest fetch ahead is this micro-batch's
                fetch->second.pop_front();
            } else if (flat.opensHostExchange && m_hostSyncCycles > 0) {
                m_countdown = m_hostSyncCycles;
                m_syncingFor = h;
            } else {
                m_hostKey = startHostTransfer(*h, cycle);
            }
        } else if (auto* m = std::get_if<StreamingMemoryStep>(&s.op)) {
            m_activeKind = Activity::Transfers;
            const auto& p = m_sys.streamingMemory;
            m_transfers.push_back(linkOf(p.bandwidthBytesPerSecond, p.efficiency, p.latencyCycles, m->bytes));
        } else if (auto* c = std::get_if<IpuCopyStep>(&s.op)) {
            // A transfer takes its links once its partner's listing is there too: the later of
            // the two listings starts it.
            m_activeKind = Activity::Copy;
            auto list = [&](uint32_t from, uint32_t to, bool sending, uint64_t bytes) {
                auto& mine = m_copies[{from, to, sending}];
                const CopyTransfer x{{from, to, uint64_t(mine.size())}, bytes, {from, to, !sending}, mine.size()};
                mine.push_back(cycle);
                if (partnerArrived(x))
                    m_links.startTransfer(x.key, bytes, cycle);
                m_copy.push_back(x);
            };
            for (const auto& t : c->send)
                list(m_program.ipu, t.peer, true, t.bytes);
            for (const auto& t : c->recv)
                list(t.peer, m_program.ipu, false, t.bytes);
        } else if (auto* c = std::get_if<CollectiveStep>(&s.op)) {
            m_activeKind = Activity::Ring;
            m_ringId = m_links.join(*c, cycle);
        }
    }

    void tickActivity()
    {
        switch (m_activeKind) {
        case Activity::Countdown:
        case Activity::Barrier:
        case Activity::HostCall:
            if (m_countdown > 0)
                --m_countdown;
            break;
        case Activity::HostTransfer: // the host answering the exchange's sync; then the links tick on their own
            if (m_countdown > 0)
                --m_countdown;
            break;
        case Activity::Exchange:
            if (m_bytesLeft) {
                const uint64_t k = m_sys.ipu.tilesPerReceiveBus;
                bool left = false;
                for (uint32_t t = 0; t < m_tiles; ++t) {
                    m_send[t] -= std::min<uint64_t>(m_send[t], m_sys.ipu.sendBytesPerCycle);
                    m_recv[t] -= std::min<uint64_t>(m_recv[t], k * m_sys.ipu.recvBytesPerCycle);
                    left |= m_send[t] || m_recv[t];
                }
                m_bytesLeft = left;
            } else if (m_countdown > 0) {
                --m_countdown;
            }
            break;
        case Activity::Transfers:
            for (auto& x : m_transfers)
                x.tick();
            break;
        case Activity::Copy: break; // the links tick on their own
        case Activity::Ring: break; // the links tick on their own
        }
    }

    [[nodiscard]] bool activityDone(uint64_t cycle) const
    {
        switch (m_activeKind) {
        case Activity::Countdown: return m_countdown == 0;
        case Activity::Barrier: return m_barrierDone;
        case Activity::HostCall: return m_hostCallGranted && m_countdown == 0;
        case Activity::Exchange: return !m_bytesLeft && m_countdown == 0;
        case Activity::Transfers:
            return std::all_of(m_transfers.begin(), m_transfers.end(), [](const Transfer& x) { return x.done(); });
        case Activity::Copy:
            return std::all_of(m_copy.begin(), m_copy.end(), [&](const CopyTransfer& x) { return partnerArrived(x) && transferDone(x, cycle); });
        case Activity::Ring: return m_links.done(m_ringId);
        case Activity::HostTransfer: {
            if (m_syncingFor)
                return false;
            const auto end = m_links.transferEnd(m_hostKey);
            return end && *end <= cycle;
        }
        }
        return true;
    }

    const Program& m_program;
    const SystemParams& m_sys;
    uint32_t m_tiles;
    std::vector<FlatStep> m_flat;
    std::vector<std::size_t> m_pc;   // per tile: the step it is at
    std::vector<uint64_t> m_busy;    // per tile: cycles of work left
    std::vector<uint64_t> m_done;    // per step: when its last tile was done (compute)
    std::vector<uint64_t> m_startOf, m_endOf; // per step: collective start and end
    std::size_t m_released = 0;      // collective steps before this one are over
    std::map<const ComputeStep*, std::vector<uint64_t>> m_dense;
    bool m_active = false;
    Activity m_activeKind = Activity::Countdown;
    uint64_t m_countdown = 0;
    bool m_bytesLeft = false, m_barrierDone = false;
    std::vector<uint64_t> m_send, m_recv;
    std::vector<Transfer> m_transfers;
    CopyArrivals& m_copies;
    const Step m_hostCallStep{SyncStep{SyncKind::Internal}}; // where a host call's entry points: not a compute set
    bool m_hostCallGranted = false;
    std::map<std::size_t, HostCallClock::Call> m_hostCalls; // per host call entry: how the host started it
    std::vector<CopyTransfer> m_copy;          // the current IPU copy's transfers
    std::map<std::size_t, std::vector<CopyRendezvous::Phase>> m_copyPhases; // per copy step
    RefLinkNetwork& m_links;
    std::size_t m_ringId = 0;                            // the ring the current collective waits for
    std::map<std::size_t, uint64_t> m_ringStart;          // per collective step: when its ring started
    bool m_tileMoved = true; // something may move at the next settle
    std::map<const HostTransferStep*, std::deque<RefLinkNetwork::TransferKey>> m_fetching; // per prefetching step: its fetches ahead, oldest first
    RefLinkNetwork::TransferKey m_hostKey;                                     // the host transfer the IPU waits for
    uint64_t m_hostTransfers = 0;
    const HostTransferStep* m_prefetchStep = nullptr;
    uint64_t m_hostSyncCycles;                      // the host's answer to each host exchange's sync
    const HostTransferStep* m_syncingFor = nullptr; // the host transfer waiting for the host's answer
    std::map<std::size_t, uint64_t> m_syncEnd;      // per host transfer step that synced: when the host answered
    std::map<const HostTransferStep*, uint64_t> m_prefetchRuns; // per prefetching step: its runs in a host call
    std::map<const HostTransferStep*, uint64_t> m_fetchesLeft;  // of those, not fetched yet in this call
};

/** The clocked system: every rising edge is one tile cycle for every IPU. */
class RefSystem : public sc_core::sc_module
{
public:
    SC_HAS_PROCESS(RefSystem);
    RefSystem(sc_core::sc_module_name name, const Schedule& schedule, const SystemParams& sys, uint64_t hostCalls,
              const DataLoaderParams& loader)
        : sc_module(name), clock("clock", sc_core::sc_time(1, sc_core::SC_NS)), m_sys(sys),
          m_host(sys.host, loader, schedule.samplesPerHostCall, sys.ipu.clockHz), m_links(sys, programmedIpus(schedule), replicaCopies(schedule))
    {
        const uint32_t replicas = schedule.strategy ? schedule.strategy->replicas : 1;
        const uint32_t extent = uint32_t(schedule.programs.size()) * replicas;
        for (const auto& p : schedule.programs)
            m_ipus.push_back(std::make_unique<RefIpu>(p, sys, hostCalls, m_copies, m_links));
        // The barrier's signal crosses the sync network and back: 1 + (IPUs / 2) / 2 hops.
        m_barrierSeconds = 2.0L * sys.syncHopSeconds * (1 + (extent / 2) / 2);
        SC_METHOD(edge);
        sensitive << clock.posedge_event();
        dont_initialize();
    }

    sc_core::sc_clock clock;
    [[nodiscard]] const std::vector<std::unique_ptr<RefIpu>>& ipus() const { return m_ipus; }
    [[nodiscard]] uint64_t cycles() const { return m_cycle; }
    [[nodiscard]] bool stuck() const { return m_stuck; }

private:
    void edge()
    {
        if (m_started)
            ++m_cycle;
        m_started = true;
        m_links.tick(m_cycle);
        for (auto& ipu : m_ipus)
            ipu->tick(m_cycle);
        if (m_barrierCounting) {
            ++m_barrierElapsed;
            // Released on the first cycle by which the round trip has passed.
            if ((long double)m_barrierElapsed / m_sys.ipu.clockHz >= m_barrierSeconds - 1e-18L)
                releaseBarrier();
        }
        bool changed = true;
        while (changed) {
            changed = false;
            for (auto& ipu : m_ipus)
                changed |= ipu->settle(m_cycle);
            if (std::all_of(m_ipus.begin(), m_ipus.end(), [](const auto& i) { return i->atHostCall(); })) {
                const HostCallClock::Call call = m_host.next(m_cycle); // every IPU is back now
                for (auto& ipu : m_ipus)
                    ipu->startHostCall(call, m_cycle);
                changed = true;
            }
            if (!m_barrierCounting && std::all_of(m_ipus.begin(), m_ipus.end(), [](const auto& i) { return i->atExternalBarrier(); })) {
                m_barrierCounting = true; // every IPU is at the barrier: the signal goes out now
                m_barrierElapsed = 0;
                if (m_barrierSeconds <= 0) {
                    releaseBarrier();
                    changed = true;
                }
            }
        }
        m_links.reshare();
        const bool allDone = std::all_of(m_ipus.begin(), m_ipus.end(), [](const auto& i) { return i->finished(); });
        // Nothing can move when every IPU is done or waits for another: at a barrier some IPU
        // never reaches, or at a copy whose partner never comes.
        const bool blocked = !m_barrierCounting && std::all_of(m_ipus.begin(), m_ipus.end(), [](const auto& i) {
            return i->finished() || i->atExternalBarrier() || i->waitingForCopyPartner() || i->atHostCall() || i->waitingForRingMembers();
        });
        if (allDone || blocked) {
            m_stuck = !allDone;
            sc_core::sc_stop();
        }
    }

    void releaseBarrier()
    {
        m_barrierCounting = false;
        for (auto& ipu : m_ipus)
            ipu->releaseBarrier();
    }

    const SystemParams& m_sys;
    HostCallClock m_host;
    static std::set<uint32_t> programmedIpus(const Schedule& schedule)
    {
        std::set<uint32_t> out;
        for (const auto& p : schedule.programs)
            out.insert(p.ipu);
        return out;
    }

    RefLinkNetwork m_links; // before the IPUs, which hold it
    CopyArrivals m_copies; // before the IPUs, which hold it
    std::vector<std::unique_ptr<RefIpu>> m_ipus;
    uint64_t m_cycle = 0;
    bool m_started = false;
    long double m_barrierSeconds = 0;
    bool m_barrierCounting = false;
    uint64_t m_barrierElapsed = 0;
    bool m_stuck = false;
};

} // namespace

ReferenceResult runReference(const Schedule& schedule, const SystemParams& system, uint64_t hostCalls, const DataLoaderParams& loader)
{
    KernelContext kernel; // before the system: its modules unregister from it when they go
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING); // "stopped by user"
    const auto t0 = std::chrono::steady_clock::now();
    RefSystem sys("reference", schedule, system, hostCalls, loader);
    sc_core::sc_start();
    ReferenceResult r;
    r.deadlocked = sys.stuck();
    r.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.cyclesTicked = sys.cycles();
    for (const auto& ipu : sys.ipus()) {
        ipu->report(r.phases);
        r.totalCycles = std::max(r.totalCycles, ipu->lastCycle());
    }
    return r;
}

} // namespace ipusim
