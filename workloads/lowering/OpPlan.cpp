// SPDX-License-Identifier: MIT
#include "workloads/lowering/OpPlan.hpp"

#include <algorithm>

namespace ipusim {

TileVector pricedCycles(const IpuParams& hw, const TileCalls& calls, std::vector<Codelet>& codelets)
{
    TileVector cycles(calls.tiles(), 0);
    const std::vector<TileCall>* previous = nullptr;
    uint64_t previousCycles = 0;
    for (uint32_t t = 0; t < calls.tiles(); ++t) {
        const std::vector<TileCall>& mine = calls.on(t);
        if (mine.empty())
            continue;
        // Tiles hold a few distinct shares of an op, in runs: a run is priced once.
        if (!previous || mine != *previous) {
            previousCycles = 0;
            for (const TileCall& c : mine) {
                previousCycles += c.times * cyclesOf(hw, c.call);
                if (std::find(codelets.begin(), codelets.end(), c.call.codelet) == codelets.end())
                    codelets.push_back(c.call.codelet);
            }
            previous = &mine;
        }
        cycles[t] = previousCycles;
    }
    return cycles;
}

} // namespace ipusim
