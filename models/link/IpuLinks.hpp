// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "models/timing/CollectivePlan.hpp"
#include "models/timing/LinkTable.hpp"

#include <systemc>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ipusim {

/** The links between the IPUs of a system as shared resources: IPU-Links, and with a gateway
 *  tier the IPUs' PCIe links to their gateways and the GW-Links between racks. Each pair of
 *  linked nodes is a link per direction with the bandwidth of all its lanes (hopBytesPerCycle).
 *  IPU-copy transfers and the shares of collectives' steps are flows along their routes that
 *  share a link max-min fairly (models/timing/FlowShare), so transfers that cross one link at
 *  once slow each other down. Rates change only at whole cycles. A flow streams its bytes,
 *  then crosses its route's latency (each hop's, hopLatencyCycles). */
class IpuLinks : public sc_core::sc_module
{
public:
    /** `programmed`: the IPUs that run programs here; `copies`: for each, the other replicas'
     *  IPUs that move in lockstep with it (replicaCopies). */
    IpuLinks(sc_core::sc_module_name name, const SystemParams& system, sc_core::sc_time period, std::vector<uint32_t> programmed,
             std::map<uint32_t, std::vector<uint32_t>> copies = {});


    using LinkBytes = std::map<std::pair<uint32_t, uint32_t>, uint64_t>;
    /** Called with the cycle a collective started (its last programmed member came) and the
     *  cycle it ended; `bytes` lists what it moved per link (from, to) for one of its members,
     *  empty for the others, so that the traffic is counted once. */
    using RingDone = std::function<void(uint64_t start, uint64_t end, const LinkBytes& bytes)>;
    /** `ipu` reaches collective `c` now. It runs once every programmed member has reached it,
     *  as collectivePlan lays it out (one ring along the physical ring, or hierarchically over
     *  racks): in each step every member of the phase's rings sends its share to its successor
     *  at once, and the step ends when the last share has arrived (streamed, then the route's
     *  latency). `started` is called as it starts. */
    void joinRing(uint32_t ipu, const CollectiveStep& c, std::function<void()> started, RingDone done);
    /** Why the run cannot go on (a ring that would end past SystemC's clock), or empty. */
    [[nodiscard]] const std::string& failure() const { return m_failure; }
    [[nodiscard]] std::size_t programmedIpus() const { return m_programmed.size(); }
    /** Programmed IPUs waiting at a collective for other members, described (for a stuck run). */
    [[nodiscard]] std::vector<std::string> waiting() const;

    using TransferKey = ipusim::TransferKey;
    /** Transfer `key` of `bytes` starts now (both its IPUs are there). */
    void startTransfer(const TransferKey& key, uint64_t bytes);
    /** Host transfer `number` of IPU `ipu` starts now, over its PCIe link to its gateway and the
     *  gateway's link to its server, with its replicas' copies beside it; returns its key (to
     *  await) and adds the bytes it and its copies put on each link to `sent`. */
    TransferKey startHostTransfer(uint32_t ipu, Direction direction, uint64_t bytes, uint64_t number, LinkBytes& sent, uint64_t delay = 0);
    /** Calls `done` with the cycle each transfer ends (its last byte in), in the order given,
     *  once all have streamed (perhaps at once). Each copy transfer is awaited by both its IPUs,
     *  a host transfer by its IPU. */
    using TransfersDone = std::function<void(const std::vector<uint64_t>& ends)>;
    void awaitTransfers(std::vector<TransferKey> keys, TransfersDone done);
    /** Has transfer `key` ended by `cycle` (and not yet been taken)? */
    [[nodiscard]] bool transferEndedBy(const TransferKey& key, uint64_t cycle) const
    {
        auto it = m_ended.find(key);
        return it != m_ended.end() && it->second.end <= cycle;
    }

    /** Counts bytes sent from `from` to `to` on every link of the route (statistics); returns
     *  them per link. */
    LinkBytes accountRoute(uint32_t from, uint32_t to, uint64_t bytes);
    /** Counts bytes on the link from `from` to its neighbour `to` (statistics). */
    void account(uint32_t from, uint32_t to, uint64_t bytes) { m_bytes[{from, to}] += bytes; }
    /** Bytes per directed link, (from, to) one hop apart (nodes: Topology::nodes). */
    [[nodiscard]] const std::map<std::pair<uint32_t, uint32_t>, uint64_t>& bytes() const { return m_bytes; }
    /** Bytes a directed link moves per cycle (all its lanes, at the link's efficiency). */
    [[nodiscard]] long double bytesPerCycle(uint32_t from, uint32_t to) const;
    [[nodiscard]] const Topology& topology() const { return m_topology; }
    /** VCD: one traced value per directed link, the bytes its current transfer moves. */
    void traceTo(sc_core::sc_trace_file* file);
    /** The bytes `from` now sends to `to` (0: idle); only directly linked pairs are traced. */
    void setActive(uint32_t from, uint32_t to, uint64_t bytes);
    /** `from` starts a step that uses no link. */
    void clearFrom(uint32_t from);

private:
    using Flow = LinkFlow; // moved by m_since (cycles unused: time is m_since)
    /** An IPU's wait for its copy's transfers. */
    struct Await
    {
        std::vector<TransferKey> keys;
        std::vector<uint64_t> ends;
        std::size_t left = 0;
        TransfersDone done;
    };
    /** A transfer that has ended, until both its IPUs have taken its end. */
    struct Ended
    {
        uint64_t end = 0;
        int takers = 2;
    };
    /** A running ring collective. */
    struct Ring
    {
        std::vector<uint32_t> members; // along the physical ring
        std::vector<CollectivePhase> plan;
        std::size_t phase = 0;         // the plan's phase running
        uint64_t stepsLeft = 0, flowsLeft = 0, stepEnd = 0, start = 0;
        std::vector<RingDone> done;
        std::map<std::pair<uint32_t, uint32_t>, uint64_t> bytes;
    };
    /** Members of a collective that have come, until all have. */
    struct Gathering
    {
        uint64_t bytes = 0; // as the first member lists the collective
        CollectiveKind kind = CollectiveKind::AllReduce;
        std::vector<uint32_t> arrived;
        std::vector<std::function<void()>> started;
        std::vector<RingDone> done;
    };
    [[nodiscard]] uint64_t now() const;
    void startStep(std::size_t ring, uint64_t cycle);
    /** Transfer `key` ends at `end`: the IPUs awaiting it learn so. */
    void transferEnded(const TransferKey& key, uint64_t end);
    /** Brings every flow and ring up to `cycle`: ends flows and steps, starts steps, shares the
     *  links anew when the flows changed, and schedules the next wake. */
    void update();
    void wake() { update(); }

    const SystemParams& m_system;
    const Topology& m_topology;
    LinkTable m_table;
    sc_core::sc_time m_period;
    std::set<uint32_t> m_programmed;
    std::map<uint32_t, std::vector<uint32_t>> m_copies;
    std::map<std::pair<std::vector<uint32_t>, std::string>, Gathering> m_gathering; // by (members, name)
    std::map<std::size_t, Ring> m_rings;
    std::size_t m_nextRing = 0;
    std::vector<Flow> m_flows;
    std::map<TransferKey, Ended> m_ended;
    std::map<TransferKey, std::vector<std::size_t>> m_awaited; // transfer -> awaits (ids) it is in
    std::map<std::size_t, Await> m_awaits;
    std::size_t m_nextAwait = 0;
    std::vector<std::pair<TransfersDone, std::vector<uint64_t>>> m_ready; // awaits complete, to call
    uint64_t m_since = 0; // the cycle the flows' rates were last set
    bool m_changed = false;
    std::string m_failure;
    sc_core::sc_event m_wake;
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> m_bytes;
    std::map<std::pair<uint32_t, uint32_t>, int64_t> m_active; // stable addresses for sc_trace
};

} // namespace ipusim
