// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/SaturatingCycles.hpp"

#include <cmath>
#include <cstdint>

namespace ipusim {

/** Tile cycles to stream `bytes` over a link of `bytesPerSecond` at `efficiency`, rounded up
 *  (the shared rule of host links, IPU-Links and Streaming Memory; latency is added by each);
 *  saturates at kCycleCeiling. */
inline uint64_t streamCycles(uint64_t bytes, double bytesPerSecond, double efficiency, double clockHz)
{
    const long double bytesPerCycle = (long double)bytesPerSecond * efficiency / clockHz;
    return saturatedCycles(std::ceil((long double)bytes / bytesPerCycle - 1e-9L));
}

} // namespace ipusim
