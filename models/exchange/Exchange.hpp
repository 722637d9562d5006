// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/StatGroup.hpp"
#include "models/hw/IpuParams.hpp"
#include "models/program/Schedule.hpp"

#include <systemc>

#include <unordered_map>
#include <vector>

namespace ipusim {

/** The on-chip exchange fabric; its timing is models/timing/ExchangeTiming. */
class Exchange : public sc_core::sc_module
{
public:
    Exchange(sc_core::sc_module_name name, const IpuParams& hw);

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
        uint64_t cycles = 0, bytesSent = 0;
    };
    /** A step's figures, worked out over its tile runs the first time it runs: a step in a
     *  loop runs many times, and a BERT step has hundreds of runs. */
    const Costed& costed(const ExchangeStep& step);

    const IpuParams& m_hw;
    std::unordered_map<const ExchangeStep*, Costed> m_costed;
    uint64_t m_bytesSent = 0;
    uint64_t m_phases = 0;
    StatGroup m_stats;
};

} // namespace ipusim
