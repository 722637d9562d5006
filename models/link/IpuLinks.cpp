// SPDX-License-Identifier: MIT
#include "models/link/IpuLinks.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ipusim {

IpuLinks::IpuLinks(sc_core::sc_module_name name, const Topology& topology, const IpuLinkParams& link, double clockHz)
    : sc_module(name), m_topology(topology), m_link(link), m_clockHz(clockHz)
{
}

uint64_t IpuLinks::transferCycles(uint32_t from, uint32_t to, uint64_t bytes) const
{
    if (bytes == 0 || from == to)
        return 0;
    const Topology::Route r = m_topology.route(from, to);
    if (r.hops == 0)
        throw std::logic_error("no IPU-Link route from IPU " + std::to_string(from) + " to IPU " + std::to_string(to));
    const long double bytesPerCycle = (long double)r.links * m_link.bandwidthBytesPerSecond * m_link.efficiency / m_clockHz;
    return r.hops * m_link.latencyCycles + uint64_t(std::ceil((long double)bytes / bytesPerCycle - 1e-9L));
}

} // namespace ipusim
