// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "models/timing/CollectivePlan.hpp"
#include "models/timing/LinkTable.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace ipusim {

/** The reference engine's links, ticked cycle by cycle: every flow (an IPU-copy or host
 *  transfer, a replica's copy of a host transfer, or a share of a step of a collective, laid out by collectivePlan) streams its max-min fair share of its links each cycle (models/timing/FlowShare,
 *  shared with the fast engine, as are the routes and the physical ring order); a step ends
 *  once every flow has streamed its bytes and counted down its route's latency; a transfer
 *  ends its route's latency after its last byte streamed. */
class RefLinkNetwork
{
public:
    /** `copies`: for each programmed IPU, the other replicas' IPUs moving in lockstep with it. */
    RefLinkNetwork(const SystemParams& sys, std::set<uint32_t> programmed, std::map<uint32_t, std::vector<uint32_t>> copies = {});

    /** A programmed member reaches collective `c` at `cycle`; returns the ring it waits for,
     *  which starts once every programmed member has joined it. */
    std::size_t join(const CollectiveStep& c, uint64_t cycle);
    [[nodiscard]] bool done(std::size_t ring) const { return m_rings.at(ring).done; }
    [[nodiscard]] bool started(std::size_t ring) const { return m_rings.at(ring).started; }
    [[nodiscard]] uint64_t startCycle(std::size_t ring) const { return m_rings.at(ring).start; }
    using TransferKey = ipusim::TransferKey;
    /** Transfer `key` starts at `cycle` (both its IPUs are there). */
    void startTransfer(const TransferKey& key, uint64_t bytes, uint64_t cycle);
    /** Host transfer `number` of IPU `ipu` starts at `cycle`, with its replicas' copies beside
     *  it; returns its key (for transferEnd). */
    TransferKey startHostTransfer(uint32_t ipu, Direction direction, uint64_t bytes, uint64_t number, uint64_t cycle, uint64_t delay = 0);
    /** The cycle transfer `key` ends (its last byte in), once it has streamed. */
    [[nodiscard]] std::optional<uint64_t> transferEnd(const TransferKey& key) const
    {
        auto it = m_transferEnds.find(key);
        return it == m_transferEnds.end() ? std::nullopt : std::optional<uint64_t>(it->second);
    }
    /** One cycle: flows stream, steps whose flows are all in and counted down end, the next
     *  steps start. */
    void tick(uint64_t cycle);
    /** After everything at this cycle has moved: the links are shared anew if flows came or went. */
    void reshare();

private:
    using Flow = LinkFlow;
    struct Ring
    {
        std::size_t arrived = 0, needed = 0;
        std::vector<CollectivePhase> plan;
        std::size_t phase = 0; // the plan's phase running
        uint64_t stepsLeft = 0, flowsLeft = 0, stepEnd = 0, start = 0;
        bool started = false, done = false;
    };
    void startStep(Ring& ring, std::size_t id, uint64_t cycle);

    const SystemParams& m_sys;
    LinkTable m_table;
    std::set<uint32_t> m_programmed;
    std::map<uint32_t, std::vector<uint32_t>> m_copies;
    std::vector<Ring> m_rings;
    std::vector<std::size_t> m_running; // rings started and not done
    std::map<std::pair<std::vector<uint32_t>, std::string>, std::size_t> m_gathering;
    std::vector<Flow> m_flows;
    std::map<TransferKey, uint64_t> m_transferEnds;
    bool m_changed = false;
};

} // namespace ipusim
