// SPDX-License-Identifier: MIT
#include "models/timing/CollectivePlan.hpp"

#include "models/timing/LinkTiming.hpp"

#include <map>

namespace ipusim {

namespace {

uint64_t shareOf(uint64_t bytes, std::size_t parts) { return parts == 0 ? 0 : (bytes + parts - 1) / parts; }

/** A phase of `rings`, each of R members, moving `bytes` (split R ways) in `steps` steps. */
CollectivePhase phaseOf(std::vector<std::vector<uint32_t>> rings, uint64_t bytes, uint64_t steps)
{
    const std::size_t R = rings.empty() ? 0 : rings.front().size();
    return {std::move(rings), shareOf(bytes, R), R < 2 || bytes == 0 ? 0 : steps};
}

} // namespace

std::vector<CollectivePhase> collectivePlan(const Topology& topology, const std::vector<uint32_t>& members, uint64_t bytes,
                                            CollectiveKind kind)
{
    const std::vector<uint32_t> ring = topology.alongRing(members);
    std::map<uint32_t, std::vector<uint32_t>> byRack; // each rack's members, along its ring
    for (uint32_t m : ring)
        byRack[topology.rackOf(m)].push_back(m);
    const std::size_t perRack = byRack.begin() == byRack.end() ? 0 : byRack.begin()->second.size();
    bool even = true;
    for (const auto& [rack, in] : byRack)
        even &= in.size() == perRack;
    std::vector<CollectivePhase> plan;
    auto keep = [&](CollectivePhase p) {
        if (p.steps > 0)
            plan.push_back(std::move(p));
    };
    if (byRack.size() < 2 || !even) {
        keep(phaseOf({ring}, bytes, ringSteps(ring.size(), kind)));
        return plan;
    }
    std::vector<std::vector<uint32_t>> inRacks, acrossRacks(perRack);
    for (const auto& [rack, in] : byRack) {
        inRacks.push_back(in);
        for (std::size_t j = 0; j < perRack; ++j)
            acrossRacks[j].push_back(in[j]);
    }
    const uint64_t slice = shareOf(bytes, perRack); // what each member of a rack ends up with
    const uint64_t racks = byRack.size();
    if (kind != CollectiveKind::AllGather)
        keep(phaseOf(inRacks, bytes, perRack - 1));
    keep(phaseOf(acrossRacks, slice, kind == CollectiveKind::AllReduce ? 2 * (racks - 1) : racks - 1));
    if (kind != CollectiveKind::ReduceScatter)
        keep(phaseOf(inRacks, bytes, perRack - 1));
    return plan;
}

} // namespace ipusim
