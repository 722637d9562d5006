// SPDX-License-Identifier: MIT
#pragma once
#include "models/timing/HostCallClock.hpp"

#include <cstdint>

namespace ipusim {

/** What the trace records besides the per-IPU phase tracks (`/run/trace`). */
struct TraceWindow
{
    bool tiles = false;
    uint32_t firstTile = 0, lastTile = 0;
    uint64_t fromCycle = 0, toCycle = UINT64_MAX;
};

/** How long a run lasts (`/run`): the loops around the compiled step and what to trace. The
 *  host calls of an epoch are known once the workload is compiled (samples per host call). */
struct RunSpec
{
    uint64_t gradientAccumulation = 1;
    uint64_t deviceIterations = 1;
    uint64_t hostCalls = 1;
    uint64_t epochs = 1;
    uint64_t datasetSamples = 0;    // 0: epochs are not tracked
    uint64_t hostCallsPerEpoch = 0; // 0: epochs are not tracked
    TraceWindow trace;
    DataLoaderParams dataLoader; // `/run/data_loader`
};

} // namespace ipusim
