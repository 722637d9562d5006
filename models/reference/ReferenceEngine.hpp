// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/PhaseObserver.hpp"
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "models/timing/HostCallClock.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim {

/** One phase of one IPU as an engine reports it: what the fast engine tells its observer. */
struct PhaseRecord
{
    uint32_t ipu = 0;
    PhaseKind kind = PhaseKind::Compute;
    std::string name;
    uint64_t start = 0, end = 0;
    bool operator==(const PhaseRecord& o) const
    {
        return ipu == o.ipu && kind == o.kind && name == o.name && start == o.start && end == o.end;
    }
};

struct ReferenceResult
{
    bool deadlocked = false;            // IPUs wait at an external sync not all reach
    uint64_t totalCycles = 0;
    uint64_t cyclesTicked = 0;          // clock edges the per-cycle model ran
    std::vector<PhaseRecord> phases;    // per IPU in program order, IPUs one after the other
    double wallSeconds = 0;
};

/** The per-cycle reference engine: a SystemC clock ticks every tile, exchange, sync, IPU-Link,
 *  host link and Streaming Memory transfer one cycle at a time over the same Schedule the fast
 *  engine runs. Tiles are workers with their own position in the program: a tile stays busy
 *  while its compute-set work remains and then moves on to its next compute set; at any other
 *  step it waits until every tile of its IPU arrives, and the step's activity then counts its
 *  bytes down per cycle (exchange: per tile; host link and Streaming Memory: at the link's
 *  bytes per cycle after its latency; IPU copies and collectives: RefLinkNetwork, each flow at
 *  its max-min share of its links, then its route's latency) or its latency down (syncs).
 *  Nothing here uses the fast engine's duration formulas; it is the oracle the fast engine is
 *  tested against. The engines share only rules that are not about time: the host-call clock
 *  (the host's side is not ticked: when each host call starts, once every IPU has ended the
 *  previous one, comes from HostCallClock), the max-min rate rule (maxMinRates), the routes
 *  and the collectives' plans (collectivePlan). Meant for small systems and short schedules: its
 *  cost grows with cycles x tiles. */
ReferenceResult runReference(const Schedule& schedule, const SystemParams& system, uint64_t hostCalls,
                             const DataLoaderParams& loader = {});

/** "" when both engines report the same phases, else the first difference, described. */
std::string firstDifference(const std::vector<PhaseRecord>& fast, const std::vector<PhaseRecord>& reference);

/** Records the fast engine's phases (an observer) for comparison with the reference. */
class PhaseRecorder : public IPhaseObserver
{
public:
    void phase(uint32_t ipu, PhaseKind kind, const std::string& name, uint64_t start, uint64_t end, uint64_t) override
    {
        phases.push_back({ipu, kind, name, start, end});
    }
    [[nodiscard]] bool tileWindow(uint32_t, uint32_t&, uint32_t&, uint64_t&, uint64_t&) const override { return false; }
    void tileSpan(uint32_t, uint32_t, const std::string&, uint64_t, uint64_t) override {}
    void fragmentSpan(uint32_t, const std::string&, uint64_t, uint64_t, int64_t) override {}
    void linkSpan(const std::string&, const std::string&, uint64_t, uint64_t, uint64_t) override {}
    /** Phases grouped per IPU in the order each IPU ran them (the engines interleave IPUs
     *  differently; each IPU's own order is what must agree). */
    [[nodiscard]] std::vector<PhaseRecord> byIpu() const;
    std::vector<PhaseRecord> phases;
};

} // namespace ipusim
