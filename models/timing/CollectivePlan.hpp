// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Topology.hpp"
#include "models/program/Schedule.hpp"

#include <cstdint>
#include <vector>

namespace ipusim {

/** One phase of a collective: rings that run at once, step by step; in each step every ring
 *  member sends `share` bytes to its successor. */
struct CollectivePhase
{
    std::vector<std::vector<uint32_t>> rings; // each along the physical ring
    uint64_t share = 0;
    uint64_t steps = 0;
};

/** How a collective over `members` runs (both engines follow it). Within one rack: one ring
 *  along the physical ring, 2(R - 1) steps of bytes / R for an all-reduce, R - 1 for its
 *  halves. Over racks of a pod topology holding m members each, hierarchically, as Poplar's
 *  collectives cross the gateway tier: an all-reduce reduce-scatters bytes / m in each rack
 *  (m - 1 steps), all-reduces each member's 1/m across the racks on m rings of the members in
 *  one place of each rack (2(racks - 1) steps of bytes / (m x racks)), then all-gathers in each
 *  rack (m - 1 steps); a reduce-scatter runs the first half of that, an all-gather the second.
 *  Racks holding different numbers of members use one flat ring. Phases without steps are left
 *  out. */
std::vector<CollectivePhase> collectivePlan(const Topology& topology, const std::vector<uint32_t>& members, uint64_t bytes,
                                            CollectiveKind kind);

} // namespace ipusim
