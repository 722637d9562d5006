// SPDX-License-Identifier: MIT
#include "models/timing/ComputeSetTiming.hpp"

#include <algorithm>
#include <functional>
#include <queue>

namespace ipusim {

uint64_t computeSetTileCycles(const std::vector<uint64_t>& workerCycles, const std::vector<uint64_t>& tileCycles, uint32_t workers)
{
    uint64_t whole = 0;
    for (uint64_t c : tileCycles)
        whole += c;
    if (workerCycles.empty() || workers == 0)
        return whole;
    // Each vertex to the context that frees first (the lowest-numbered on a tie).
    using Context = std::pair<uint64_t, uint32_t>; // (busy until, context)
    std::priority_queue<Context, std::vector<Context>, std::greater<>> free;
    for (uint32_t w = 0; w < workers; ++w)
        free.push({0, w});
    uint64_t busiest = 0;
    for (uint64_t c : workerCycles) {
        auto [until, w] = free.top();
        free.pop();
        until += c;
        busiest = std::max(busiest, until);
        free.push({until, w});
    }
    return whole + uint64_t(workers) * busiest;
}

} // namespace ipusim
