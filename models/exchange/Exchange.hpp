// SPDX-License-Identifier: MIT
#pragma once
#include "models/ipu/IpuParams.hpp"
#include "workloads/schedule/Schedule.hpp"

#include <systemc>

#include <vector>

namespace ipusim {

/** Cycles one tile needs to send and receive `b` (send at send_bytes_per_cycle; receive at
 *  recv_bytes_per_cycle, data shared by every tile on a receive bus arriving once for all). */
uint64_t exchangeTileCycles(const IpuParams& hw, const ExchangeBytes& b);
/** Latency a phase pays once: base + per-row x (rows - 1). */
uint64_t exchangeLatencyCycles(const IpuParams& hw);

/** The on-chip exchange fabric. Exchange is compiled ahead of time, so a phase lasts as long
 *  as its busiest tile's send or receive, plus the pipeline latency of the longest path. */
class Exchange : public sc_core::sc_module
{
public:
    Exchange(sc_core::sc_module_name name, const IpuParams& hw);

    /** Cycles a tile needs to send and receive `b`. */
    [[nodiscard]] uint64_t tileCycles(const ExchangeBytes& b) const;
    /** Latency a phase pays once: base + per-row x (rows - 1). */
    [[nodiscard]] uint64_t latencyCycles() const;
    /** Duration of a phase; 0 when no tile moves a byte. */
    [[nodiscard]] uint64_t phaseCycles(const ExchangeStep& step) const;
    /** Records one executed phase (statistics). */
    void account(const ExchangeStep& step);

    [[nodiscard]] uint64_t bytesSent() const { return m_bytesSent; }
    [[nodiscard]] uint64_t phases() const { return m_phases; }
    void counters(std::vector<uint64_t*>& out) { out.insert(out.end(), {&m_bytesSent, &m_phases}); }

private:
    const IpuParams& m_hw;
    uint64_t m_bytesSent = 0;
    uint64_t m_phases = 0;
};

} // namespace ipusim
