// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/SaturatingCycles.hpp"

#include <cmath>
#include <cstdint>

namespace ipusim {

/** Latency of a barrier across `ipus` IPUs over the Sync-Links, as in PopLibs' IPU model: it
 *  grows with the group's extent, ceil(2 x hop time x clock x hops), hops = 1 + (IPUs / 2) / 2. */
inline uint64_t externalSyncCycles(uint32_t ipus, double hopSeconds, double clockHz)
{
    const uint32_t hops = 1 + (ipus / 2) / 2;
    return saturatedCycles(std::ceil(2.0L * hopSeconds * clockHz * hops - 1e-9L));
}

} // namespace ipusim
