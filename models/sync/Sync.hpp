// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/StatGroup.hpp"
#include "models/hw/IpuParams.hpp"

#include <systemc>

#include <vector>

namespace ipusim {

/** The IPU's hardware barrier: it releases `internal_cycles` after the last tile arrives. */
class Sync : public sc_core::sc_module
{
public:
    Sync(sc_core::sc_module_name name, const IpuParams& hw) : sc_module(name), m_latency(hw.internalSyncCycles)
    {
        m_stats.add("syncs", m_barriers, "barriers", "internal syncs of the IPU's tiles");
    }

    /** Cycle at which a barrier whose last participant arrives at `lastArrival` releases. */
    [[nodiscard]] uint64_t release(uint64_t lastArrival)
    {
        ++m_barriers;
        return lastArrival + m_latency;
    }
    [[nodiscard]] uint64_t barriers() const { return m_barriers; }
    [[nodiscard]] const StatGroup& stats() const { return m_stats; }

private:
    uint64_t m_latency;
    uint64_t m_barriers = 0;
    StatGroup m_stats;
};

} // namespace ipusim
