// SPDX-License-Identifier: MIT
#include "models/link/IpuLinks.hpp"

#include "models/common/SaturatingCycles.hpp"
#include "models/system/ClockPeriod.hpp"
#include "models/timing/FlowShare.hpp"
#include "models/timing/LinkTiming.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim {

IpuLinks::IpuLinks(sc_core::sc_module_name name, const SystemParams& system, sc_core::sc_time period, std::vector<uint32_t> programmed,
                   std::map<uint32_t, std::vector<uint32_t>> copies)
    : sc_module(name), m_system(system), m_topology(system.topology), m_table(system), m_period(period),
      m_programmed(programmed.begin(), programmed.end()), m_copies(std::move(copies))
{
    for (const auto& [ab, edge] : m_topology.allLinks()) {
        m_active[ab] = 0;
        m_active[{ab.second, ab.first}] = 0;
    }
    SC_HAS_PROCESS(IpuLinks);
    SC_METHOD(wake);
    sensitive << m_wake;
    dont_initialize();
}

void IpuLinks::traceTo(sc_core::sc_trace_file* file)
{
    for (auto& [ab, bytes] : m_active)
        sc_core::sc_trace(file, bytes, std::string(name()) + "." + m_topology.nodeName(ab.first) + "_to_" + m_topology.nodeName(ab.second));
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

long double IpuLinks::bytesPerCycle(uint32_t from, uint32_t to) const { return m_table.capacity().at(m_table.id(from, to)); }

IpuLinks::LinkBytes IpuLinks::accountRoute(uint32_t from, uint32_t to, uint64_t bytes)
{
    LinkBytes out;
    for (uint32_t l : m_table.route(from, to).links) {
        out[m_table.ends(l)] += bytes;
        account(m_table.ends(l).first, m_table.ends(l).second, bytes);
    }
    return out;
}

uint64_t IpuLinks::now() const { return sc_core::sc_time_stamp().value() / std::max<uint64_t>(m_period.value(), 1); }

void IpuLinks::joinRing(uint32_t ipu, const CollectiveStep& c, std::function<void()> started, RingDone done)
{
    std::vector<uint32_t> members = m_topology.alongRing(c.ring);
    auto [at, first] = m_gathering.try_emplace({members, c.name});
    Gathering& g = at->second;
    if (first) {
        g.bytes = c.bytes;
        g.kind = c.kind;
    } else if (g.bytes != c.bytes || g.kind != c.kind) { // the members must run one collective
        m_failure = fmt::format("collective \"{}\": IPU {} lists {} bytes ({}) but IPU {} lists {} bytes ({}): every member of a "
                                "ring must list the same bytes and kind",
                                c.name, g.arrived.front(), g.bytes, nameOf(g.kind), ipu, c.bytes, nameOf(c.kind));
        sc_core::sc_stop();
        return;
    }
    g.arrived.push_back(ipu);
    g.started.push_back(std::move(started));
    g.done.push_back(std::move(done));
    const auto programmed = std::count_if(members.begin(), members.end(), [&](uint32_t m) { return m_programmed.count(m) > 0; });
    if (std::ptrdiff_t(g.arrived.size()) < std::max<std::ptrdiff_t>(programmed, 1))
        return;
    update(); // the flows so far run at their rates until now
    Ring ring;
    ring.members = std::move(members);
    ring.done = std::move(g.done);
    for (auto& start : g.started)
        start();
    m_gathering.erase({ring.members, c.name});
    ring.plan = collectivePlan(m_topology, ring.members, c.bytes, c.kind);
    ring.stepsLeft = ring.plan.empty() ? 0 : ring.plan.front().steps;
    ring.start = ring.stepEnd = now();
    const std::size_t id = m_nextRing++;
    m_rings.emplace(id, std::move(ring));
    if (m_rings.at(id).stepsLeft > 0)
        startStep(id, now());
    update();
}

void IpuLinks::startStep(std::size_t id, uint64_t cycle)
{
    Ring& ring = m_rings.at(id);
    const CollectivePhase& phase = ring.plan.at(ring.phase);
    ring.flowsLeft = 0;
    for (const auto& members : phase.rings)
        for (std::size_t i = 0; i < members.size(); ++i) {
            const uint32_t from = members[i], to = members[(i + 1) % members.size()];
            const LinkTable::Route& route = m_table.route(from, to);
            for (uint32_t l : route.links)
                ring.bytes[m_table.ends(l)] += phase.share;
            m_flows.push_back({&route, phase.share, id, std::nullopt, 0, 0, 0});
            ++ring.flowsLeft;
        }
    ring.stepEnd = cycle;
    m_changed = true;
}

void IpuLinks::startTransfer(const TransferKey& key, uint64_t bytes)
{
    update(); // the flows so far run at their rates until now
    const auto [from, to, number] = key;
    if (bytes == 0 || from == to) { // nothing to move: it ends as it starts
        transferEnded(key, now());
    } else {
        m_flows.push_back({&m_table.route(from, to), bytes, 0, key, 0, 0, 0});
        m_changed = true;
    }
    update();
}

TransferKey IpuLinks::startHostTransfer(uint32_t ipu, Direction direction, uint64_t bytes, uint64_t number, LinkBytes& sent, uint64_t delay)
{
    const TransferKey key = hostTransferKey(m_topology, ipu, direction, number);
    if (bytes == 0) {
        startTransfer(key, 0);
        return key;
    }
    update(); // the flows so far run at their rates until now
    for (LinkFlow& f : hostTransferFlows(m_table, m_topology, key, bytes, m_copies, delay)) {
        for (uint32_t l : f.route->links) {
            sent[m_table.ends(l)] += bytes;
            account(m_table.ends(l).first, m_table.ends(l).second, bytes);
        }
        m_flows.push_back(std::move(f));
    }
    m_changed = true;
    update();
    return key;
}

void IpuLinks::transferEnded(const TransferKey& key, uint64_t end)
{
    m_ended[key] = {end, isHostTransfer(m_topology, key) ? 1 : 2};
    auto it = m_awaited.find(key);
    if (it == m_awaited.end())
        return;
    for (std::size_t id : it->second) {
        Await& a = m_awaits.at(id);
        for (std::size_t i = 0; i < a.keys.size(); ++i)
            if (a.keys[i] == key) {
                a.ends[i] = end;
                --a.left;
            }
        if (--m_ended[key].takers == 0)
            m_ended.erase(key);
        if (a.left == 0) {
            m_ready.emplace_back(std::move(a.done), std::move(a.ends));
            m_awaits.erase(id);
        }
    }
    m_awaited.erase(it);
}

void IpuLinks::awaitTransfers(std::vector<TransferKey> keys, TransfersDone done)
{
    const std::size_t id = m_nextAwait++;
    Await& a = m_awaits[id];
    a.keys = std::move(keys);
    a.ends.assign(a.keys.size(), 0);
    a.done = std::move(done);
    for (std::size_t i = 0; i < a.keys.size(); ++i) {
        auto it = m_ended.find(a.keys[i]);
        if (it == m_ended.end()) {
            ++a.left;
            m_awaited[a.keys[i]].push_back(id);
            continue;
        }
        a.ends[i] = it->second.end;
        if (--it->second.takers == 0)
            m_ended.erase(it);
    }
    if (a.left == 0) {
        auto ready = std::move(a);
        m_awaits.erase(id);
        ready.done(ready.ends);
    }
}

void IpuLinks::update()
{
    const uint64_t t = now();
    std::vector<std::pair<std::size_t, Ring>> ended;
    for (bool moved = true; moved;) {
        moved = false;
        // Flows that have streamed all their bytes leave the links; their step ends a route's
        // latency later.
        for (auto it = m_flows.begin(); it != m_flows.end();) {
            const uint64_t finish = saturatingAdd(m_since, cyclesToFinish(it->moved, it->rate, it->bytes));
            if (finish > t) {
                ++it;
                continue;
            }
            if (it->ghost) {
                // a replica's copy: it only took its share of the links
            } else if (it->transfer) {
                transferEnded(*it->transfer, saturatingAdd(finish, it->route->latency + it->delay));
            } else {
                Ring& ring = m_rings.at(it->ring);
                ring.stepEnd = std::max(ring.stepEnd, saturatingAdd(finish, it->route->latency));
                --ring.flowsLeft;
            }
            it = m_flows.erase(it);
            m_changed = moved = true;
        }
        // Rings whose step is over start the next, or end.
        for (auto it = m_rings.begin(); it != m_rings.end();) {
            Ring& ring = it->second;
            if (ring.flowsLeft > 0 || ring.stepEnd > t) {
                ++it;
                continue;
            }
            if (ring.stepsLeft > 0 && --ring.stepsLeft == 0 && ring.phase + 1 < ring.plan.size())
                ring.stepsLeft = ring.plan.at(++ring.phase).steps; // the plan's next phase
            if (ring.stepsLeft > 0) {
                startStep(it->first, t);
                moved = true;
                ++it;
                continue;
            }
            ended.emplace_back(it->first, std::move(ring));
            it = m_rings.erase(it);
        }
    }
    if (m_changed) { // the rates so far held until now; share the links among the flows left
        for (Flow& f : m_flows)
            f.moved += (long double)(t - m_since) * f.rate;
        m_since = t;
        std::vector<std::vector<uint32_t>> routes;
        for (const Flow& f : m_flows)
            routes.push_back(f.route->links);
        const auto rates = maxMinRates(routes, m_table.capacity());
        for (std::size_t i = 0; i < m_flows.size(); ++i)
            m_flows[i].rate = rates[i];
        m_changed = false;
    }
    uint64_t next = kCycleCeiling;
    for (const Flow& f : m_flows)
        next = std::min(next, saturatingAdd(m_since, cyclesToFinish(f.moved, f.rate, f.bytes)));
    for (const auto& [id, ring] : m_rings)
        if (ring.flowsLeft == 0)
            next = std::min(next, ring.stepEnd);
    m_wake.cancel();
    if (next <= lastCycle(m_period))
        m_wake.notify(m_period * double(next - t));
    else if (!m_flows.empty() || !m_rings.empty()) {
        m_failure = fmt::format("a transfer or collective over the links would run past cycle {}, where SystemC's 64-bit femtosecond clock ends at "
                                "{:.6g} GHz: simulate fewer iterations, samples or steps",
                                lastCycle(m_period), m_system.ipu.clockHz / 1e9);
        sc_core::sc_stop();
    }
    // IPUs go on only now that the links' state is whole (they may start another flow at once).
    auto ready = std::move(m_ready);
    m_ready.clear();
    for (auto& [done, ends] : ready)
        done(ends);
    for (auto& [id, ring] : ended) {
        for (auto& [edge, bytes] : ring.bytes)
            account(edge.first, edge.second, bytes);
        for (std::size_t i = 0; i < ring.done.size(); ++i)
            ring.done[i](ring.start, ring.stepEnd, i == 0 ? ring.bytes : std::map<std::pair<uint32_t, uint32_t>, uint64_t>{});
    }
}

std::vector<std::string> IpuLinks::waiting() const
{
    std::vector<std::string> out;
    for (const auto& [key, g] : m_gathering) {
        std::string members;
        for (uint32_t m : key.first)
            members += (members.empty() ? "" : ", ") + std::to_string(m);
        std::string came;
        for (uint32_t m : g.arrived)
            came += (came.empty() ? "" : ", ") + std::to_string(m);
        out.push_back(fmt::format("collective \"{}\" over IPUs {} waits for members that never come (only IPU {} came): "
                                  "every IPU with a program in a ring must run the collective",
                                  key.second, members, came));
    }
    return out;
}

} // namespace ipusim
