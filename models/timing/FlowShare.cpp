// SPDX-License-Identifier: MIT
#include "models/timing/FlowShare.hpp"

#include "models/common/SaturatingCycles.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ipusim {

std::vector<long double> maxMinRates(const std::vector<std::vector<uint32_t>>& routes, const std::vector<long double>& capacity)
{
    if (routes.size() == 1) { // alone: the narrowest link it crosses
        long double narrowest = routes[0].empty() ? 0 : capacity.at(routes[0][0]);
        for (uint32_t l : routes[0])
            narrowest = std::min(narrowest, capacity.at(l));
        return {narrowest};
    }
    // Filled in a canonical order (flows sorted by route), so the rounding of the capacities left
    // is the same however the caller lists the flows: both engines must get identical rates.
    std::vector<std::size_t> order(routes.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return routes[a] < routes[b]; });
    // Only the links some flow crosses matter, in the order of their ids.
    std::vector<uint32_t> used;
    for (const auto& r : routes)
        used.insert(used.end(), r.begin(), r.end());
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    auto local = [&](uint32_t link) { return std::size_t(std::lower_bound(used.begin(), used.end(), link) - used.begin()); };
    std::vector<long double> rate(routes.size(), 0), left(used.size());
    for (std::size_t l = 0; l < used.size(); ++l)
        left[l] = capacity.at(used[l]);
    // Each route in local link numbers; per link, its flows in the canonical order.
    std::vector<std::vector<std::size_t>> localRoute(routes.size()), flowsOn(used.size());
    std::vector<uint32_t> users(used.size(), 0);
    for (std::size_t f : order)
        for (uint32_t l : routes[f]) {
            localRoute[f].push_back(local(l));
            flowsOn[localRoute[f].back()].push_back(f);
            ++users[localRoute[f].back()];
        }
    std::vector<bool> fixed(routes.size(), false);
    while (true) {
        // The link whose fair share of what is left is smallest fixes its flows first.
        long double share = 0;
        int64_t bottleneck = -1;
        for (std::size_t l = 0; l < used.size(); ++l)
            if (users[l] > 0 && (bottleneck < 0 || left[l] / users[l] < share)) {
                share = left[l] / users[l];
                bottleneck = int64_t(l);
            }
        if (bottleneck < 0)
            return rate;
        share = std::max(share, 0.0L);
        for (std::size_t f : flowsOn[std::size_t(bottleneck)]) {
            if (fixed[f])
                continue;
            rate[f] = share;
            fixed[f] = true;
            for (std::size_t l : localRoute[f]) {
                left[l] -= share;
                --users[l];
            }
        }
    }
}

uint64_t cyclesToFinish(long double moved, long double rate, uint64_t bytes)
{
    if (streamDone(moved, 0, rate, bytes))
        return 0;
    if (!(rate > 0))
        return kCycleCeiling;
    // The closed form, then the predicate decides at the boundary (it is what the per-cycle
    // reference engine checks each cycle).
    uint64_t c = saturatedCycles(std::ceil(((long double)bytes - moved) / rate - 1e-9L));
    while (c > 1 && streamDone(moved, c - 1, rate, bytes))
        --c;
    while (c < kCycleCeiling && !streamDone(moved, c, rate, bytes))
        ++c;
    return std::max<uint64_t>(c, 1);
}

} // namespace ipusim
