// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Snapshottable.hpp"
#include "models/hw/IpuParams.hpp"
#include "models/program/PhaseObserver.hpp"
#include "models/memory/TileMemory.hpp"
#include "models/program/Schedule.hpp"

#include <systemc>

#include <memory>

namespace ipusim {

/** Static and executed figures of one compute set. */
struct ComputeSetStats
{
    std::string name;
    uint64_t executions = 0;
    uint64_t busiestTileCycles = 0; // per execution
    double meanTileCycles = 0;      // per execution, over every tile of the IPU
    uint32_t tilesUsed = 0;
    uint64_t phaseCycles = 0;       // IPU time spent in this compute set, all executions
    double flops = 0;               // per execution (ComputeStep::flops)
};

/** The 1,472 tiles of one IPU, held as data: per-tile ready times (as runs), per-tile memory,
 *  per-compute-set statistics. No process per tile; the Ipu drives it. */
class TileArray : public sc_core::sc_module, public Snapshottable
{
public:
    /** `memory`: the program's tile memory worked out ahead, or null to work it out here. */
    TileArray(sc_core::sc_module_name name, const IpuParams& hw, const Program& program,
              std::shared_ptr<const TileMemory> memory = nullptr);

    /** Runs a compute set: each tile starts when it is ready and works its cycles.
     *  Returns the cycle at which the last tile finishes. */
    uint64_t compute(const ComputeStep& step, uint32_t ipu, IPhaseObserver* observer);
    /** Cycle at which the last tile is ready (a barrier's last arrival). */
    [[nodiscard]] uint64_t lastReady() const { return m_base + m_extraMax; }
    /** The earliest any tile is ready (readiness never falls below the base). */
    [[nodiscard]] uint64_t firstReady() const { return m_base; }
    /** Every tile ready at `cycle` (after a barrier, an exchange or a host transfer). */
    void align(uint64_t cycle);

    void recordPhase(const ComputeStep& step, uint64_t cycles) { m_stats[step.id].phaseCycles += cycles; }
    [[nodiscard]] const std::vector<ComputeSetStats>& computeSets() const { return m_stats; }
    [[nodiscard]] const TileMemory& memory() const { return *m_memory; }
    /** Cycles each tile spent computing over the whole run. */
    [[nodiscard]] std::vector<uint64_t> busyCycles() const;

    /** Loop fast-forward: the compute sets' figures grow with every iteration; the tiles'
     *  readiness relative to `cycle` is what an iteration leaves behind (equal after identical
     *  iterations); a skip moves every ready time on. */
    void counters(std::vector<uint64_t*>& out) override;
    void shape(uint64_t cycle, std::vector<int64_t>& out) const override;
    void skipped(const uint64_t* /*growth*/, uint64_t /*times*/, uint64_t cycles) override { m_base += cycles; }

private:
    const IpuParams& m_hw;
    const Program& m_program;
    std::shared_ptr<const TileMemory> m_memory;
    uint64_t m_base = 0;
    TileRuns<uint64_t> m_extra; // ready = m_base + extra(tile)
    uint64_t m_extraMax = 0;
    std::vector<ComputeSetStats> m_stats;
};

/** Tile-wise sum of two run lists. */
TileRuns<uint64_t> addRuns(const TileRuns<uint64_t>& a, const TileRuns<uint64_t>& b);

} // namespace ipusim
