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
    Exchange(sc_core::sc_module_name name, const IpuParams& hw);

    /** Duration of a phase; 0 when no tile moves a byte. */
    [[nodiscard]] uint64_t phaseCycles(const ExchangeStep& step) const;
    /** Records one executed phase (statistics). */
    void account(const ExchangeStep& step);

    [[nodiscard]] uint64_t bytesSent() const { return m_bytesSent; }
    [[nodiscard]] uint64_t phases() const { return m_phases; }
    [[nodiscard]] const StatGroup& stats() const { return m_stats; }

private:
    const IpuParams& m_hw;
    uint64_t m_bytesSent = 0;
    uint64_t m_phases = 0;
    StatGroup m_stats;
};

} // namespace ipusim
