// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

namespace ipusim {

/** The directed links of a system, numbered, with the bytes each moves per cycle
 *  (hopBytesPerCycle), and every transfer's route as link numbers plus its latency (each hop's,
 *  hopLatencyCycles). Both engines' link models take their flows from it: it holds the rules,
 *  not the time-keeping. */
class LinkTable
{
public:
    explicit LinkTable(const SystemParams& system);

    /** A transfer's route from node to node. */
    struct Route
    {
        std::vector<uint32_t> links;
        uint64_t latency = 0;
    };
    /** The route from `from` to `to` (worked out once: every route between an IPU and the
     *  host as the table is built, the others when first asked for); throws std::logic_error
     *  when there is none (a topology the config decoder rejects). */
    const Route& route(uint32_t from, uint32_t to) const;
    /** Bytes per cycle of every link, by number. */
    [[nodiscard]] const std::vector<long double>& capacity() const { return m_capacity; }
    [[nodiscard]] uint32_t id(uint32_t from, uint32_t to) const { return m_id.at({from, to}); }
    /** The nodes a link joins, (from, to). */
    [[nodiscard]] const std::pair<uint32_t, uint32_t>& ends(uint32_t id) const { return m_ends.at(id); }

private:
    const SystemParams& m_system;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_id;
    std::vector<long double> m_capacity;
    std::vector<std::pair<uint32_t, uint32_t>> m_ends; // per id
    mutable std::map<std::pair<uint32_t, uint32_t>, Route> m_routes; // the routes asked for so far
};

/** An IPU-copy transfer: from, to, and its number on that edge (the n-th send of an edge pairs
 *  with its n-th receive); or a host transfer between an IPU and its host server, numbered by
 *  the IPU. */
using TransferKey = std::tuple<uint32_t, uint32_t, uint64_t>;

/** A flow on the links, as both engines keep it: a share of a collective's step or a copy's
 *  transfer, streamed over its route's links, then its route's latency. */
struct LinkFlow
{
    const LinkTable::Route* route = nullptr; // held by the LinkTable
    uint64_t bytes = 0;
    std::size_t ring = 0;                // the collective a share belongs to
    std::optional<TransferKey> transfer; // or the copy's or host transfer it is
    long double moved = 0, rate = 0;     // moved when its rate was last set, and that rate a cycle
    uint64_t cycles = 0;                 // cycles at that rate (counted by the reference engine)
    bool ghost = false;                  // a replica's copy of a host transfer: it only takes bandwidth
    uint64_t delay = 0;                  // ends this much after its route's latency (the host's answer to a prefetch)
};

/** Host transfer number `number` of IPU `ipu`: from the host to it, or back. */
TransferKey hostTransferKey(const Topology& topology, uint32_t ipu, Direction direction, uint64_t number);
/** Is `key` a host transfer (one end the host)? Only its IPU awaits it. */
bool isHostTransfer(const Topology& topology, const TransferKey& key);
/** The flows of host transfer `key` of `bytes`: its own, then a ghost for each copy of its IPU
 *  in `copies` (replicaCopies: other replicas' IPUs, which make the same transfer in lockstep),
 *  so that an IPU-Gateway's link to the host is shared by all the IPUs of its IPU-M2000. It ends
 *  `delay` cycles after its route's latency. */
std::vector<LinkFlow> hostTransferFlows(const LinkTable& table, const Topology& topology, const TransferKey& key, uint64_t bytes,
                                        const std::map<uint32_t, std::vector<uint32_t>>& copies, uint64_t delay = 0);

} // namespace ipusim
