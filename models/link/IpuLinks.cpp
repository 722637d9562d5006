// SPDX-License-Identifier: MIT
#include "models/link/IpuLinks.hpp"

#include "models/timing/LinkTiming.hpp"

#include <stdexcept>
#include <string>

namespace ipusim {

IpuLinks::IpuLinks(sc_core::sc_module_name name, const Topology& topology, const IpuLinkParams& link, double clockHz)
    : sc_module(name), m_topology(topology), m_link(link), m_clockHz(clockHz)
{
    for (const auto& [ab, n] : topology.allLinks()) {
        m_active[{ab.first, ab.second}] = 0;
        m_active[{ab.second, ab.first}] = 0;
    }
}

void IpuLinks::traceTo(sc_core::sc_trace_file* file)
{
    for (auto& [ab, bytes] : m_active)
        sc_core::sc_trace(file, bytes, std::string(name()) + ".ipu" + std::to_string(ab.first) + "_to_ipu" + std::to_string(ab.second));
}

void IpuLinks::setActive(uint32_t from, uint32_t to, uint64_t bytes)
{
    auto it = m_active.find({from, to});
    if (it != m_active.end())
        it->second = int64_t(bytes);
}

void IpuLinks::clearFrom(uint32_t from)
{
    for (auto it = m_active.lower_bound({from, 0}); it != m_active.end() && it->first.first == from; ++it)
        it->second = 0;
}

uint64_t IpuLinks::transferCycles(uint32_t from, uint32_t to, uint64_t bytes) const
{
    return ipuLinkTransferCycles(m_topology, m_link, m_clockHz, from, to, bytes);
}

uint64_t IpuLinks::ringCycles(const std::vector<uint32_t>& ring, uint64_t bytes, CollectiveKind kind) const
{
    return ipusim::ringCycles(m_topology, m_link, m_clockHz, ring, bytes, kind);
}

std::vector<std::pair<std::pair<uint32_t, uint32_t>, uint64_t>> IpuLinks::accountRing(const std::vector<uint32_t>& ring, uint64_t bytes,
                                                                                      CollectiveKind kind)
{
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, uint64_t>> out;
    const std::size_t R = ring.size();
    if (R < 2)
        return out;
    const uint64_t share = (bytes + R - 1) / R;
    for (std::size_t i = 0; i < R; ++i) {
        out.push_back({{ring[i], ring[(i + 1) % R]}, ringSteps(R, kind) * share});
        account(ring[i], ring[(i + 1) % R], ringSteps(R, kind) * share);
    }
    return out;
}
} // namespace ipusim
