// SPDX-License-Identifier: MIT
#pragma once
#include "models/ipu/IpuParams.hpp"
#include "workloads/schedule/Schedule.hpp"

#include <systemc>

namespace ipusim {

/** The IPU's link to the host (PCIe through the gateway): latency plus bytes at the
 *  effective bandwidth, converted to tile cycles. */
class HostLink : public sc_core::sc_module
{
public:
    HostLink(sc_core::sc_module_name name, const HostLinkParams& link, double clockHz);

    [[nodiscard]] uint64_t transferCycles(uint64_t bytes) const;
    /** Starts a transfer; returns its duration and counts its bytes. */
    uint64_t transfer(Direction direction, uint64_t bytes);
    /** Counts bytes of a transfer whose time was spent earlier (a consumed prefetch). */
    void account(Direction direction, uint64_t bytes) { (direction == Direction::ToIpu ? m_toIpu : m_fromIpu) += bytes; }

    [[nodiscard]] uint64_t bytesToIpu() const { return m_toIpu; }
    [[nodiscard]] uint64_t bytesFromIpu() const { return m_fromIpu; }

private:
    HostLinkParams m_link;
    double m_clockHz;
    uint64_t m_toIpu = 0;
    uint64_t m_fromIpu = 0;
};

} // namespace ipusim
