// SPDX-License-Identifier: MIT
#include "models/timing/LinkTiming.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim {

uint64_t ipuLinkTransferCycles(const Topology& topology, const LinkParams& link, double clockHz, uint32_t from,
                               uint32_t to, uint64_t bytes)
{
    if (bytes == 0 || from == to)
        return 0;
    const Topology::Route r = topology.route(from, to);
    if (r.hops == 0)
        throw std::logic_error("no IPU-Link route from IPU " + std::to_string(from) + " to IPU " + std::to_string(to));
    const uint64_t stream = streamCycles(bytes, r.links * link.bandwidthBytesPerSecond, link.efficiency, clockHz);
    return saturatingAdd(saturatingMul(r.hops, link.latencyCycles), stream);
}

long double hopBytesPerCycle(const SystemParams& system, const Topology::Edge& edge)
{
    const auto perLane = [&](double bytesPerSecond, double efficiency) {
        return (long double)edge.lanes * bytesPerSecond * efficiency / system.ipu.clockHz;
    };
    switch (edge.kind) {
    case LinkKind::GatewayPcie: return perLane(system.hostLink.bandwidthBytesPerSecond, system.hostLink.efficiency);
    case LinkKind::GwLink: return perLane(system.gwLink.bandwidthBytesPerSecond, system.gwLink.efficiency);
    case LinkKind::GatewayHost: return perLane(system.gatewayHostLink.bandwidthBytesPerSecond, system.gatewayHostLink.efficiency);
    case LinkKind::IpuLink: break;
    }
    return perLane(system.ipuLink.bandwidthBytesPerSecond, system.ipuLink.efficiency);
}

uint64_t hopLatencyCycles(const SystemParams& system, LinkKind kind)
{
    switch (kind) {
    case LinkKind::GatewayPcie: return system.hostLink.latencyCycles;
    case LinkKind::GwLink: return system.gwLink.latencyCycles;
    case LinkKind::GatewayHost: return system.gatewayHostLink.latencyCycles;
    case LinkKind::IpuLink: break;
    }
    return system.ipuLink.latencyCycles;
}

uint64_t ringSteps(std::size_t members, CollectiveKind kind)
{
    return kind == CollectiveKind::AllReduce ? 2 * (members - 1) : members - 1;
}

uint64_t ringCycles(const Topology& topology, const LinkParams& link, double clockHz, const std::vector<uint32_t>& ring,
                    uint64_t bytes, CollectiveKind kind)
{
    const std::size_t R = ring.size();
    if (R < 2 || bytes == 0)
        return 0;
    const uint64_t share = (bytes + R - 1) / R;
    uint64_t step = 0;
    for (std::size_t i = 0; i < R; ++i)
        step = std::max(step, ipuLinkTransferCycles(topology, link, clockHz, ring[i], ring[(i + 1) % R], share));
    return saturatingMul(ringSteps(R, kind), step);
}

} // namespace ipusim
