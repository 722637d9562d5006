// SPDX-License-Identifier: MIT
#include "workloads/lowering/OpPlan.hpp"

#include <algorithm>

namespace ipusim {

TileVector pricedCycles(const IpuParams& hw, const TileCalls& calls, std::vector<Codelet>& codelets)
{
    // Tiles hold a few distinct shares of an op, repeating (a conv's position slices): the
    // last few distinct lists are remembered and each is priced once.
    struct Priced
    {
        const std::vector<TileCall>* calls;
        uint64_t cycles;
    };
    constexpr std::size_t kRemembered = 8;
    std::vector<Priced> recent;
    std::size_t next = 0; // the entry replaced next, once all are taken
    TileVector cycles(calls.tiles(), 0);
    for (uint32_t t = 0; t < calls.tiles(); ++t) {
        const std::vector<TileCall>& mine = calls.on(t);
        if (mine.empty())
            continue;
        auto seen = std::find_if(recent.begin(), recent.end(), [&](const Priced& p) { return *p.calls == mine; });
        if (seen == recent.end()) {
            Priced p{&mine, 0};
            for (const TileCall& c : mine) {
                p.cycles += c.times * cyclesOf(hw, c.call);
                if (std::find(codelets.begin(), codelets.end(), c.call.codelet) == codelets.end())
                    codelets.push_back(c.call.codelet);
            }
            if (recent.size() < kRemembered)
                seen = recent.insert(recent.end(), p);
            else {
                seen = recent.begin() + std::ptrdiff_t(next);
                *seen = p;
                next = (next + 1) % kRemembered;
            }
        }
        cycles[t] = seen->cycles;
    }
    return cycles;
}

} // namespace ipusim
