// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/SaturatingCycles.hpp"
#include "models/hw/SystemParams.hpp"

#include <cstdint>

namespace ipusim {

/** IPU cycles the host takes before each host call (its framework dispatching the call), during
 *  which the IPUs wait: the overhead in seconds at the IPU clock, rounded up to whole cycles. */
inline uint64_t hostCallOverheadCycles(const HostParams& host, double clockHz)
{
    return secondsToCycles(host.callOverheadSeconds, clockHz);
}

/** IPU cycles an IPU waits at the start of each host exchange while the host answers its sync
 *  and serves the exchange's stream buffers: the latency in seconds, rounded up to whole cycles. */
inline uint64_t hostSyncCycles(const HostParams& host, double clockHz)
{
    return secondsToCycles(host.syncLatencySeconds, clockHz);
}

} // namespace ipusim
