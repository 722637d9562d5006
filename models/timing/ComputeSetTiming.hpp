// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <vector>

namespace ipusim {

/** A tile's cycles for one compute set of vertices priced by their own estimates (a Poplar
 *  program's setPerfEstimate or perf estimator). Worker vertices (`workerCycles`, a worker
 *  context's cycles each) are started in order, each on the context that frees first, as the
 *  supervisor hands them out; the barrel gives each of the `workers` contexts every workers-th
 *  cycle, so the tile takes workers x the busiest context's total (poplibs-costs: every
 *  supervisor estimate is S + W x the slowest worker). Vertices that use the whole tile (a
 *  MultiVertex or SupervisorVertex: `tileCycles`, tile cycles each) run one after another,
 *  apart from the workers' share. The order of dispatch is an estimate: Poplar's is not public. */
uint64_t computeSetTileCycles(const std::vector<uint64_t>& workerCycles, const std::vector<uint64_t>& tileCycles, uint32_t workers);

} // namespace ipusim
