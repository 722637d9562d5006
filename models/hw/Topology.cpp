// SPDX-License-Identifier: MIT
#include "models/hw/Topology.hpp"

#include <algorithm>
#include <deque>
#include <limits>

namespace ipusim {

void Topology::add(uint32_t a, uint32_t b, uint32_t n, LinkKind kind)
{
    if (a == b || n == 0 || a >= m_nodes || b >= m_nodes)
        return;
    if (kind == LinkKind::IpuLink && (a >= m_ipus || b >= m_ipus)) // a ladder of an odd count ends in half a rung
        return;
    Edge& e = m_links[{std::min(a, b), std::max(a, b)}];
    e.lanes += n;
    e.kind = kind;
}

void Topology::addLadder(uint32_t first, uint32_t ipus, bool wrap, uint32_t place)
{
    const uint32_t rungs = (ipus + 1) / 2;
    for (uint32_t r = 0; r < rungs; ++r) {
        const uint32_t a = first + 2 * r, b = a + 1;
        add(a, b, 4);
        const bool last = r + 1 == rungs;
        if (last && !(wrap && rungs > 2))
            continue;
        const uint32_t na = first + (2 * (r + 1)) % (2 * rungs), nb = na + 1;
        add(a, na, 2);
        add(b, nb, 2);
        add(a, nb, 1);
        add(b, na, 1);
    }
    // Up one rail and down the other: every hop a direct link (a rail, the first rung, and the
    // last rung or, with an odd count, the last cross link), with or without the wrap.
    for (uint32_t a = 0; a < ipus; a += 2)
        m_ringPosition[first + a] = place++;
    for (uint32_t b = (ipus % 2 == 0 ? ipus - 1 : ipus - 2); b < ipus; b -= 2)
        m_ringPosition[first + b] = place++;
}

void Topology::setNodes(uint32_t ipus)
{
    m_ipus = ipus;
    m_nodes = ipus + gatewaysFor(ipus) + 1;
}

void Topology::addHostTier()
{
    for (uint32_t i = 0; i < m_ipus; ++i)
        add(i, gatewayOf(i), 1, LinkKind::GatewayPcie);
    for (uint32_t g = 0; g < gateways(); ++g)
        add(m_ipus + g, host(), 1, LinkKind::GatewayHost);
}

Topology Topology::ladder(uint32_t ipus, bool wrap)
{
    Topology t;
    t.setNodes(ipus);
    t.m_ringPosition.assign(ipus, 0);
    t.addLadder(0, ipus, wrap, 0);
    t.addHostTier();
    t.computeRoutes();
    return t;
}

Topology Topology::pod(uint32_t ipus, uint32_t racks)
{
    Topology t;
    const uint32_t perRack = ipus / std::max(racks, 1u), gatewaysPerRack = perRack / kIpusPerM2000;
    t.setNodes(ipus);
    t.m_ipusPerRack = perRack;
    t.m_ringPosition.assign(ipus, 0);
    for (uint32_t r = 0; r < racks; ++r)
        t.addLadder(r * perRack, perRack, true, r * perRack);
    t.addHostTier();
    if (racks > 1)
        for (uint32_t r = 0; r < (racks == 2 ? 1 : racks); ++r)
            for (uint32_t g = 0; g < gatewaysPerRack; ++g)
                t.add(ipus + r * gatewaysPerRack + g, ipus + ((r + 1) % racks) * gatewaysPerRack + g, racks == 2 ? 2 : 1,
                      LinkKind::GwLink);
    t.computeRoutes();
    return t;
}

Topology Topology::custom(uint32_t ipus, const std::vector<std::array<uint32_t, 3>>& links)
{
    Topology t;
    t.setNodes(ipus);
    for (const auto& l : links)
        if (l[0] < ipus && l[1] < ipus)
            t.add(l[0], l[1], l[2]);
    t.addHostTier();
    t.computeRoutes();
    return t;
}

uint32_t Topology::links(uint32_t a, uint32_t b) const
{
    auto it = m_links.find({std::min(a, b), std::max(a, b)});
    return it == m_links.end() || it->second.kind != LinkKind::IpuLink ? 0 : it->second.lanes;
}

const Topology::Edge& Topology::edge(uint32_t a, uint32_t b) const { return m_links.at({std::min(a, b), std::max(a, b)}); }

std::string Topology::nodeName(uint32_t n) const
{
    if (n < m_ipus)
        return "ipu" + std::to_string(n);
    if (isHost(n))
        return "host";
    return "gw" + std::to_string(n - m_ipus);
}

void Topology::computeRoutes()
{
    // Breadth-first by hops; among the shortest routes keep the widest bottleneck.
    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    std::vector<std::vector<std::pair<uint32_t, const Edge*>>> adj(m_nodes);
    for (const auto& [ab, e] : m_links) {
        adj[ab.first].push_back({ab.second, &e});
        adj[ab.second].push_back({ab.first, &e});
    }
    m_routes.assign(m_nodes, std::vector<Route>(m_nodes));
    m_previous.assign(m_nodes, std::vector<uint32_t>(m_nodes, kNone));
    for (uint32_t s = 0; s < m_nodes; ++s) {
        std::vector<uint32_t> hops(m_nodes, kNone), width(m_nodes, 0);
        hops[s] = 0;
        width[s] = kNone;
        std::deque<uint32_t> q{s};
        std::vector<uint32_t>& previous = m_previous[s];
        while (!q.empty()) {
            const uint32_t u = q.front();
            q.pop_front();
            for (const auto& [v, e] : adj[u]) {
                if (u != s && !mayPass(previous[u], u, e->kind))
                    continue;
                const uint32_t w = std::min(width[u], e->lanes);
                if (hops[v] == kNone) {
                    hops[v] = hops[u] + 1;
                    width[v] = w;
                    previous[v] = u;
                    q.push_back(v);
                } else if (hops[v] == hops[u] + 1 && w > width[v]) {
                    width[v] = w;
                    previous[v] = u;
                }
            }
        }
        for (uint32_t d = 0; d < m_nodes; ++d)
            if (d != s && hops[d] != kNone)
                m_routes[s][d] = {hops[d], width[d]};
    }
}

bool Topology::mayPass(uint32_t from, uint32_t u, LinkKind kind) const
{
    if (isHost(u))
        return false;
    const bool gateway = u >= m_ipus;
    return !(gateway && from < m_ipus && kind == LinkKind::GatewayPcie); // IPU -> gateway -> IPU
}

Topology::Route Topology::route(uint32_t a, uint32_t b) const { return m_routes.at(a).at(b); }

std::vector<uint32_t> Topology::path(uint32_t a, uint32_t b) const
{
    if (a == b)
        return {a};
    if (m_routes.at(a).at(b).hops == 0)
        return {};
    std::vector<uint32_t> out{b};
    while (out.back() != a)
        out.push_back(m_previous[a][out.back()]);
    std::reverse(out.begin(), out.end());
    return out;
}

std::vector<uint32_t> Topology::alongRing(std::vector<uint32_t> members) const
{
    if (m_ringPosition.empty()) { // no known ring: IPU order
        std::sort(members.begin(), members.end());
        return members;
    }
    std::stable_sort(members.begin(), members.end(), [&](uint32_t x, uint32_t y) {
        return m_ringPosition.at(x) < m_ringPosition.at(y);
    });
    return members;
}

std::vector<uint32_t> Topology::unreachable() const
{
    std::vector<uint32_t> out;
    for (uint32_t i = 1; i < m_ipus; ++i)
        if (m_routes[0][i].hops == 0)
            out.push_back(i);
    return out;
}

} // namespace ipusim
