// SPDX-License-Identifier: MIT
#include "models/reference/RefLinkNetwork.hpp"

#include "models/common/SaturatingCycles.hpp"
#include "models/timing/CollectivePlan.hpp"
#include "models/timing/FlowShare.hpp"
#include "models/timing/LinkTiming.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim {

RefLinkNetwork::RefLinkNetwork(const SystemParams& sys, std::set<uint32_t> programmed, std::map<uint32_t, std::vector<uint32_t>> copies)
    : m_sys(sys), m_table(sys), m_programmed(std::move(programmed)), m_copies(std::move(copies))
{
}

std::size_t RefLinkNetwork::join(const CollectiveStep& c, uint64_t cycle)
{
    const auto members = m_sys.topology.alongRing(c.ring);
    auto [it, fresh] = m_gathering.try_emplace({members, c.name}, m_rings.size());
    if (fresh) {
        Ring r;
        r.needed = std::max<std::size_t>(1, std::count_if(members.begin(), members.end(), [&](uint32_t m) { return m_programmed.count(m) > 0; }));
        r.plan = collectivePlan(m_sys.topology, members, c.bytes, c.kind);
        r.stepsLeft = r.plan.empty() ? 0 : r.plan.front().steps;
        m_rings.push_back(r);
    }
    const std::size_t id = it->second;
    Ring& ring = m_rings[id];
    if (++ring.arrived < ring.needed)
        return id;
    m_gathering.erase(it);
    ring.started = true;
    ring.start = cycle;
    if (ring.stepsLeft == 0)
        ring.done = true;
    else {
        startStep(ring, id, cycle);
        m_running.push_back(id);
    }
    return id;
}

void RefLinkNetwork::startTransfer(const TransferKey& key, uint64_t bytes, uint64_t cycle)
{
    const auto [from, to, index] = key;
    if (bytes == 0 || from == to) {
        m_transferEnds[key] = cycle;
        return;
    }
    m_flows.push_back({&m_table.route(from, to), bytes, 0, key, 0, 0, 0});
    m_changed = true;
}

TransferKey RefLinkNetwork::startHostTransfer(uint32_t ipu, Direction direction, uint64_t bytes, uint64_t number, uint64_t cycle, uint64_t delay)
{
    const TransferKey key = hostTransferKey(m_sys.topology, ipu, direction, number);
    if (bytes == 0) {
        m_transferEnds[key] = cycle;
        return key;
    }
    for (LinkFlow& f : hostTransferFlows(m_table, m_sys.topology, key, bytes, m_copies, delay))
        m_flows.push_back(std::move(f));
    m_changed = true;
    return key;
}

void RefLinkNetwork::startStep(Ring& ring, std::size_t id, uint64_t cycle)
{
    const CollectivePhase& phase = ring.plan.at(ring.phase);
    ring.flowsLeft = 0;
    for (const auto& members : phase.rings)
        for (std::size_t i = 0; i < members.size(); ++i) {
            m_flows.push_back({&m_table.route(members[i], members[(i + 1) % members.size()]), phase.share, id, std::nullopt, 0, 0, 0});
            ++ring.flowsLeft;
        }
    ring.stepEnd = cycle;
    m_changed = true;
}

void RefLinkNetwork::tick(uint64_t cycle)
{
    for (auto it = m_flows.begin(); it != m_flows.end();) {
        ++it->cycles;
        if (!streamDone(it->moved, it->cycles, it->rate, it->bytes)) {
            ++it;
            continue;
        }
        if (it->ghost) {
            // a replica's copy of a host transfer: it only took its share of the links
        } else if (it->transfer) {
            m_transferEnds[*it->transfer] = cycle + it->route->latency + it->delay;
        } else {
            Ring& ring = m_rings[it->ring];
            ring.stepEnd = std::max(ring.stepEnd, cycle + it->route->latency);
            --ring.flowsLeft;
        }
        it = m_flows.erase(it);
        m_changed = true;
    }
    for (std::size_t id : m_running) {
        Ring& ring = m_rings[id];
        if (ring.flowsLeft > 0 || ring.stepEnd > cycle)
            continue;
        if (--ring.stepsLeft == 0 && ring.phase + 1 < ring.plan.size())
            ring.stepsLeft = ring.plan.at(++ring.phase).steps; // the plan's next phase
        if (ring.stepsLeft > 0)
            startStep(ring, id, cycle);
        else
            ring.done = true;
    }
    m_running.erase(std::remove_if(m_running.begin(), m_running.end(), [&](std::size_t id) { return m_rings[id].done; }),
                    m_running.end());
}

void RefLinkNetwork::reshare()
{
    if (!m_changed)
        return;
    std::vector<std::vector<uint32_t>> routes;
    for (Flow& f : m_flows) {
        f.moved += (long double)f.cycles * f.rate;
        f.cycles = 0;
        routes.push_back(f.route->links);
    }
    const auto rates = maxMinRates(routes, m_table.capacity());
    for (std::size_t i = 0; i < m_flows.size(); ++i)
        m_flows[i].rate = rates[i];
    m_changed = false;
}

} // namespace ipusim
