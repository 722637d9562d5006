// SPDX-License-Identifier: MIT
#include "models/timing/LinkTable.hpp"

#include "models/common/SaturatingCycles.hpp"
#include "models/timing/LinkTiming.hpp"

#include <stdexcept>
#include <string>

namespace ipusim {

LinkTable::LinkTable(const SystemParams& system) : m_system(system)
{
    for (const auto& [ab, edge] : system.topology.allLinks())
        for (const auto& directed : {ab, std::pair{ab.second, ab.first}}) {
            m_id[directed] = uint32_t(m_capacity.size());
            m_capacity.push_back(hopBytesPerCycle(system, edge));
            m_ends.push_back(directed);
        }
    // Every IPU's host transfers take its routes to and from the host: they are worked out as
    // the system is built, with the rest of its fixed structure, not while the first transfers
    // run.
    const Topology& t = system.topology;
    for (uint32_t ipu = 0; ipu < t.ipus(); ++ipu)
        for (const auto& [from, to] : {std::pair{t.host(), ipu}, std::pair{ipu, t.host()}})
            if (t.route(from, to).hops > 0)
                route(from, to);
}

const LinkTable::Route& LinkTable::route(uint32_t from, uint32_t to) const
{
    auto [it, fresh] = m_routes.try_emplace({from, to});
    if (!fresh)
        return it->second;
    const Topology& t = m_system.topology;
    const auto path = t.path(from, to);
    if (path.size() < 2) {
        m_routes.erase(it);
        throw std::logic_error("no route from " + t.nodeName(from) + " to " + t.nodeName(to));
    }
    for (std::size_t h = 1; h < path.size(); ++h) {
        it->second.links.push_back(id(path[h - 1], path[h]));
        it->second.latency = saturatingAdd(it->second.latency, hopLatencyCycles(m_system, t.edge(path[h - 1], path[h]).kind));
    }
    return it->second;
}

TransferKey hostTransferKey(const Topology& topology, uint32_t ipu, Direction direction, uint64_t number)
{
    const uint32_t host = topology.host();
    return direction == Direction::ToIpu ? TransferKey{host, ipu, number} : TransferKey{ipu, host, number};
}

bool isHostTransfer(const Topology& topology, const TransferKey& key)
{
    return topology.isHost(std::get<0>(key)) || topology.isHost(std::get<1>(key));
}

std::vector<LinkFlow> hostTransferFlows(const LinkTable& table, const Topology& topology, const TransferKey& key, uint64_t bytes,
                                        const std::map<uint32_t, std::vector<uint32_t>>& copies, uint64_t delay)
{
    const auto [from, to, number] = key;
    const bool toIpu = topology.isHost(from);
    const uint32_t host = topology.host();
    std::vector<LinkFlow> flows{{&table.route(from, to), bytes, 0, key, 0, 0, 0, false, delay}};
    const auto copiesOfIpu = copies.find(toIpu ? to : from);
    if (copiesOfIpu == copies.end())
        return flows;
    for (uint32_t ipu : copiesOfIpu->second)
        if (ipu < topology.ipus())
            flows.push_back({toIpu ? &table.route(host, ipu) : &table.route(ipu, host), bytes, 0, std::nullopt, 0, 0, 0, true});
    return flows;
}

} // namespace ipusim
