// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ipusim {

/** The reference engine's IPU-Links, ticked cycle by cycle: every flow of a running ring
 *  collective streams its max-min fair share of its links each cycle (models/timing/FlowShare,
 *  shared with the fast engine, as are the routes and the physical ring order); a step ends
 *  once every flow has streamed its bytes and counted down its route's latency. */
class RefLinkNetwork
{
public:
    RefLinkNetwork(const SystemParams& sys, std::set<uint32_t> programmed);

    /** A programmed member reaches collective `c` at `cycle`; returns the ring it waits for,
     *  which starts once every programmed member has joined it. */
    std::size_t join(const CollectiveStep& c, uint64_t cycle);
    [[nodiscard]] bool done(std::size_t ring) const { return m_rings.at(ring).done; }
    [[nodiscard]] bool started(std::size_t ring) const { return m_rings.at(ring).started; }
    [[nodiscard]] uint64_t startCycle(std::size_t ring) const { return m_rings.at(ring).start; }
    /** One cycle: flows stream, steps whose flows are all in and counted down end, the next
     *  steps start. */
    void tick(uint64_t cycle);
    /** After everything at this cycle has moved: the links are shared anew if flows came or went. */
    void reshare();

private:
    struct Flow
    {
        std::vector<uint32_t> links;
        uint64_t bytes = 0, latency = 0, cycles = 0; // cycles streamed at `rate`
        long double moved = 0, rate = 0;
        std::size_t ring = 0;
    };
    struct Ring
    {
        std::vector<uint32_t> members;
        std::string name;
        std::size_t arrived = 0, needed = 0;
        uint64_t share = 0, stepsLeft = 0, flowsLeft = 0, stepEnd = 0, start = 0;
        bool started = false, done = false;
    };
    void startStep(Ring& ring, std::size_t id, uint64_t cycle);

    const SystemParams& m_sys;
    std::set<uint32_t> m_programmed;
    std::map<std::pair<uint32_t, uint32_t>, uint32_t> m_linkId;
    std::vector<long double> m_capacity;
    std::vector<Ring> m_rings;
    std::vector<std::size_t> m_running; // rings started and not done
    std::map<std::pair<std::vector<uint32_t>, std::string>, std::size_t> m_gathering;
    std::vector<Flow> m_flows;
    bool m_changed = false;
};

} // namespace ipusim
