// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/StatGroup.hpp"
#include "models/hw/IpuParams.hpp"
#include "models/program/Schedule.hpp"

#include <systemc>

#include <vector>

namespace ipusim {

/** The on-chip exchange fabric; its timing is models/timing/ExchangeTiming. */
class Exchange : public sc_core::sc_module
{
public:
    /** `points`: the program's point count (Program::numPoints), to keep its steps' costs by. */
    Exchange(sc_core::sc_module_name name, const IpuParams& hw, uint32_t points = 0);

    /** Duration of a phase; 0 when no tile moves a byte. */
    [[nodiscard]] uint64_t phaseCycles(const ExchangeStep& step) { return costed(step).cycles; }
    /** Records one executed phase (statistics). */
    void account(const ExchangeStep& step);

    [[nodiscard]] uint64_t bytesSent() const { return m_bytesSent; }
    [[nodiscard]] uint64_t phases() const { return m_phases; }
    [[nodiscard]] const StatGroup& stats() const { return m_stats; }

private:
    struct Costed
    {
        const ExchangeStep* step = nullptr; // whose figures these are
        uint64_t cycles = 0, bytesSent = 0;
    };
    /** A step's figures, worked out over its tile runs the first time it runs: a step in a
     *  loop runs many times, and a BERT step has hundreds of runs. */
    const Costed& costed(const ExchangeStep& step);

    const IpuParams& m_hw;
    /** By program point: each step has its own once the program is numbered; a step without
     *  a slot of its own (a program not numbered) is costed each time it runs. */
    std::vector<Costed> m_costed;
    Costed m_uncached;
    uint64_t m_bytesSent = 0;
    uint64_t m_phases = 0;
    StatGroup m_stats;
};

} // namespace ipusim
