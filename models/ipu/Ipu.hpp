// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Snapshottable.hpp"
#include "models/exchange/Exchange.hpp"
#include "models/host/HostLink.hpp"
#include "models/host/StreamingMemory.hpp"
#include "models/host/HostProcess.hpp"
#include "models/ipu/HostPrefetch.hpp"
#include "models/ipu/LoopSkipper.hpp"
#include "models/link/CopyRendezvous.hpp"
#include "models/link/IpuLinks.hpp"
#include "models/link/LinkShare.hpp"
#include "models/sync/ExternalSync.hpp"
#include "models/hw/IpuParams.hpp"
#include "models/program/PhaseObserver.hpp"
#include "models/sync/Sync.hpp"
#include "models/tile/TileArray.hpp"

#include <systemc>

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

namespace ipusim {

/** What an IPU reaches outside itself (null in a one-IPU system without them). */
struct SystemPorts
{
    ExternalSync* sync = nullptr;
    IpuLinks* links = nullptr;
    CopyRendezvous* copies = nullptr;
    uint32_t syncSlot = 0; // this IPU's participant number at `sync` and `host` (programs need not be on IPUs 0..n-1)
    HostProcess* host = nullptr; // starts each host call; without it, each call starts as the last ends
};

/** One Mk2 IPU executing its program as BSP supersteps. A single SC_METHOD is the program
 *  sequencer: it runs steps back to back and sleeps only across steps that take time, so the
 *  kernel sees one timed notification per phase, never one per cycle. Loops skip identical
 *  iterations through a LoopSkipper, which sees this IPU's own figures (steps, breakdown,
 *  fragments, loops) as one Snapshottable part. */
class Ipu : public sc_core::sc_module, private Snapshottable
{
public:
    /** `memory`: the program's tile memory worked out ahead (TileArray), or null. */
    Ipu(sc_core::sc_module_name name, uint32_t index, const IpuParams& hw, const LinkParams& link,
        const Program& program, uint64_t hostCalls, sc_core::sc_time period, IPhaseObserver* observer,
        SystemPorts ports = {}, const StreamingMemoryParams& streaming = {}, std::shared_ptr<const TileMemory> memory = nullptr);

    TileArray tiles;
    Exchange exchange;
    Sync sync;
    HostLink host;
    StreamingMemory streamingMemory;

    /** Adds this IPU's activity (a PhaseKind code + 1; 0 idle) and the bytes its current step
     *  moves over IPU-Links to a SystemC trace file (VCD). */
    void traceTo(sc_core::sc_trace_file* file);
    [[nodiscard]] bool finished() const { return m_finished; }
    [[nodiscard]] uint64_t cycle() const { return m_cycle; }
    [[nodiscard]] const PhaseBreakdown& breakdown() const { return m_breakdown; }
    [[nodiscard]] uint64_t computeSetsRun() const { return m_computeSetsRun; }
    /** The statistics of this IPU and its modules, as the summary reports them per IPU. */
    [[nodiscard]] std::vector<const StatGroup*> statGroups() const
    {
        return {&m_stats, &exchange.stats(), &sync.stats(), &host.stats(), &streamingMemory.stats()};
    }
    /** Steps executed so far, and in the whole run (loops unrolled), for progress. */
    [[nodiscard]] uint64_t stepsRun() const { return m_stepsRun; }
    [[nodiscard]] uint64_t stepsTotal() const { return m_stepsTotal; }
    /** Per fragment: times called and cycles spent inside (fragments are not nested). */
    struct FragmentStats
    {
        uint64_t calls = 0, cycles = 0;
    };
    [[nodiscard]] const std::vector<FragmentStats>& fragments() const { return m_fragmentStats; }
    /** What each Repeat of the program took: times entered, iterations run, cycles inside. */
    struct LoopStats
    {
        uint64_t runs = 0, iterations = 0, cycles = 0;
    };
    [[nodiscard]] const LoopStats& loopStats(const RepeatStep& r) const { return m_loopStats.at(m_loopIndex.at(&r)); }
    /** Cycle at which each host call's program finished, and the compute cycles by then. */
    [[nodiscard]] const std::vector<uint64_t>& hostCallEnds() const { return m_callEnds; }
    [[nodiscard]] const std::vector<uint64_t>& computeAtCallEnds() const { return m_computeAtCallEnds; }
    /** Records when each micro-batch's fragments (calls numbered with one) begin and end, over
     *  the first host call; its loops then run every iteration (a skip would hide some). */
    void recordMicroBatches() { m_recordMicroBatches = true; }
    /** Per micro-batch of the first host call: its first fragment's start, its last one's end. */
    [[nodiscard]] const std::map<int64_t, std::pair<uint64_t, uint64_t>>& microBatchSpans() const { return m_microBatches; }
    /** Simulate every loop iteration (the default skips identical ones, outside any trace window). */
    void disableFastForward() { m_fastForward = false; }
    /** Loop iterations skipped as identical to the one before. */
    [[nodiscard]] uint64_t iterationsSkipped() const { return m_skipper.skipped(); }
    /** Why the IPU stopped before finishing its program (its time passed SystemC's clock), or empty. */
    [[nodiscard]] const std::string& failure() const { return m_failure; }

private:
    void sequence();
    /** A step that meets nothing outside this IPU (compute sets, exchanges, internal syncs,
     *  calls): the sequencer runs on through such steps without waiting for SystemC's time to
     *  reach each one's end, and lets it catch up before anything else (a step, a body's end)
     *  that other processes may see. Not with a VCD, whose signals change as time passes. */
    [[nodiscard]] bool runsAhead(const Step& step) const;
    static constexpr uint64_t kWait = UINT64_MAX;
    /** Executes one step from m_cycle; returns the cycle at which it ends, or kWait when the
     *  IPU sleeps until an external barrier releases it. */
    uint64_t execute(const Step& step);
    /** The VCD's activity and link bytes for a step starting now. */
    void traceStepStart(const Step& step);
    /** One step of each kind, as execute() runs it. */
    uint64_t exec(const ComputeStep& step);
    uint64_t exec(const SyncStep& step);
    uint64_t exec(const ExchangeStep& step);
    uint64_t exec(const HostTransferStep& step);
    uint64_t exec(const IpuCopyStep& step);
    uint64_t exec(const StreamingMemoryStep& step);
    uint64_t exec(const CollectiveStep& step);
    uint64_t exec(const CallStep& step);
    uint64_t exec(const RepeatStep& step);
    void release(uint64_t releaseCycle, uint64_t nowCycle, uint64_t grant);
    /** The host started the next host call (HostProcess): account the wait, then run it. */
    void startCall(const HostCallClock::Call& call);
    /** Once every partner of copy `c` is there: waits for its transfers (IpuLinks). */
    void awaitCopy(const IpuCopyStep& c, uint64_t ready, const std::vector<uint64_t>& partnerReady, const std::vector<uint64_t>& numbers);
    /** Once every transfer of copy `c` has ended (`ends`): its phases, each transfer from when
     *  both ends were ready (`ready` this IPU's), and the sequencer woken at the copy's end. */
    void finishCopy(const IpuCopyStep& c, uint64_t ready, const std::vector<uint64_t>& partnerReady, const std::vector<uint64_t>& ends);
    /** Collective `c` ran over [start, end) once its members were there; `bytes` is its
     *  traffic if this IPU counts it. */
    void finishCollective(const CollectiveStep& c, uint64_t start, uint64_t end, const IpuLinks::LinkBytes& bytes);
    /** Host transfer `h` has its data in (or out) at `ready`: its phase ends then (or now). */
    void finishHostTransfer(const HostTransferStep& h, uint64_t ready);
    /** Host transfer `h` starts now (or its prefetch is taken): the sequencer sleeps until its
     *  data is in; returns kWait. */
    uint64_t awaitHostTransfer(const HostTransferStep& h);
    /** Starts host transfer `h` now over the links, ending `delay` cycles late; returns its key. */
    IpuLinks::TransferKey startHostTransfer(const HostTransferStep& h, uint64_t delay = 0);
    /** Cycles the host takes to answer a host exchange (0 without a host). */
    [[nodiscard]] uint64_t hostSyncCycles() const;
    /** SystemC's present time in cycles (at or after m_cycle). */
    [[nodiscard]] uint64_t nowCycle() const;
    /** A phase every tile waits out (sync, exchange, transfers): all are ready at `end`. */
    uint64_t endPhaseOnAllTiles(PhaseKind kind, const std::string& name, uint64_t end);
    void phase(PhaseKind kind, const std::string& name, uint64_t end);

    /** This IPU's own figures that loop iterations grow (Snapshottable, for the skipper). */
    void counters(std::vector<uint64_t*>& out) override;
    /** True when `cycle` is within SystemC's clock; otherwise records the failure and stops
     *  the simulation (a wrapped clock would order events wrongly). */
    bool withinTimeLimit(uint64_t cycle, const char* doing);
    /** Wakes the sequencer at `cycle`, `nowCycle` being the present; false past the time limit. */
    bool wakeAt(uint64_t cycle, uint64_t nowCycle);

    struct Frame
    {
        const std::vector<Step>* steps;
        std::size_t pc;
        uint64_t remaining;
        uint64_t iteration;
        int fragment = -1;     // set when the frame is a called fragment
        uint64_t entered = 0;  // cycle the fragment was entered
        int64_t microBatch = -1;
        std::unique_ptr<LoopSkipper::Loop> loop; // repeat loops, when fast-forward is on
        int repeat = -1;                         // set when the frame is a Repeat: its LoopStats index
    };
    /** At the end of a loop iteration: skips identical iterations; true when it did (the
     *  sequencer then sleeps until they have passed). */
    bool fastForward(Frame& f);
    /** At an external sync, this IPU arriving at `arrival`: the skip it offers, when the sync
     *  ends an iteration like the last. */
    std::optional<ExternalSync::SkipOffer> skipOffer(uint64_t arrival);
    /** Pops the frame on top, whose body has ended: its fragment's and loop's figures, and the
     *  host call's end when it was the program's. */
    void leave();

    uint32_t m_index;
    const IpuParams& m_hw;
    const Program& m_program;
    uint64_t m_hostCalls;
    uint64_t m_callsStarted = 0;
    sc_core::sc_time m_period;
    uint64_t m_cycleLimit; // the last cycle SystemC's clock holds
    std::string m_failure;
    IPhaseObserver* m_observer;
    SystemPorts m_ports;
    std::vector<Frame> m_stack;
    uint64_t m_cycle = 0;
    bool m_finished = false;
    uint64_t m_computeSetsRun = 0;
    StatGroup m_stats;
    uint64_t m_stepsRun = 0;
    uint64_t m_stepsTotal = 0;
    std::vector<FragmentStats> m_fragmentStats;
    std::unordered_map<const RepeatStep*, std::size_t> m_loopIndex;
    std::vector<LoopStats> m_loopStats;
    std::vector<uint64_t> m_callEnds;
    std::vector<uint64_t> m_computeAtCallEnds;
    HostPrefetch m_prefetch;                          // the IO tiles' fetches ahead
    uint64_t m_hostTransfers = 0;                     // numbers this IPU's host transfers
    const HostTransferStep* m_syncedFor = nullptr;    // the host answers this transfer's sync as the sequencer wakes
    bool m_traced = false;   // only a VCD needs the link activity kept up to date
    int m_activity = 0;      // traced: what the IPU is doing now
    int64_t m_linkBytes = 0; // traced: bytes the current step moves over IPU-Links
    std::map<uint32_t, uint64_t> m_periodicCalls; // per fragment: times a periodic call reached it
    PhaseBreakdown m_breakdown;
    sc_core::sc_event m_wake;
    bool m_fastForward = true;
    bool m_recordMicroBatches = false;
    std::map<int64_t, std::pair<uint64_t, uint64_t>> m_microBatches;
    LinkShare m_linkShare; // link bytes this IPU accounted
    LoopSkipper m_skipper; // after every part it sees
};

} // namespace ipusim
