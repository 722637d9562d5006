// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "models/timing/StreamTiming.hpp"

#include <cstdint>
#include <vector>

// Timing of the links around a chip: the host link, Streaming Memory and IPU-Links.
namespace ipusim {

/** A transfer over one link: its latency plus the bytes at its effective bandwidth (0 bytes
 *  take no time). */
inline uint64_t linkTransferCycles(uint64_t bytes, double bytesPerSecond, double efficiency, uint64_t latencyCycles,
                                   double clockHz)
{
    return bytes == 0 ? 0 : saturatingAdd(latencyCycles, streamCycles(bytes, bytesPerSecond, efficiency, clockHz));
}

/** Bytes a bundle of lanes moves per cycle one way: IPU-Links at the IPU-Link bandwidth, an
 *  IPU's PCIe link to its gateway at the host link's, GW-Links at the GW-Link's, each at its
 *  efficiency. */
long double hopBytesPerCycle(const SystemParams& system, const Topology::Edge& edge);
/** The latency a hop over a link of this kind adds. */
uint64_t hopLatencyCycles(const SystemParams& system, LinkKind kind);

/** An IPU-Link transfer follows the shortest route: it pays the latency of every hop and
 *  streams at the bandwidth of the narrowest hop (cut-through). Throws std::logic_error when
 *  no route exists (a topology the config decoder rejects). */
uint64_t ipuLinkTransferCycles(const Topology& topology, const LinkParams& link, double clockHz, uint32_t from,
                               uint32_t to, uint64_t bytes);

/** Steps of a ring collective over R members: all-reduce 2(R - 1), the others R - 1. */
uint64_t ringSteps(std::size_t members, CollectiveKind kind);

/** A ring collective alone on its IPU-Links, in the order given: each step moves a 1/R share
 *  of `bytes` between every pair of ring neighbours at once and lasts as long as its slowest
 *  neighbour transfer. The closed form the shared-link model (IpuLinks) gives for a flat plan
 *  (collectivePlan in one rack) whose ring is in physical order and whose shares never cross
 *  one link. */
uint64_t ringCycles(const Topology& topology, const LinkParams& link, double clockHz, const std::vector<uint32_t>& ring,
                    uint64_t bytes, CollectiveKind kind);

} // namespace ipusim
