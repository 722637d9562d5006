// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/schedule/Schedule.hpp"

#include <systemc>

namespace ipusim {

struct StreamingMemoryParams
{
    uint64_t bytesPerIpu = 68719476736ull;
    double bandwidthBytesPerSecond = 15.75e9;
    double efficiency = 0.85;
    uint64_t latencyCycles = 2000;
};

/** An IPU's Streaming Memory behind the IPU-Gateway: a remote-buffer load or store costs its
 *  latency plus the bytes at the effective bandwidth, in tile cycles. */
class StreamingMemory : public sc_core::sc_module
{
public:
    StreamingMemory(sc_core::sc_module_name name, const StreamingMemoryParams& params, double clockHz);

    [[nodiscard]] uint64_t transferCycles(uint64_t bytes) const;
    uint64_t transfer(Direction direction, uint64_t bytes);
    [[nodiscard]] uint64_t bytesLoaded() const { return m_loaded; }
    [[nodiscard]] uint64_t bytesStored() const { return m_stored; }

private:
    StreamingMemoryParams m_params;
    double m_clockHz;
    uint64_t m_loaded = 0, m_stored = 0;
};

} // namespace ipusim
