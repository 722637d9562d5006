// SPDX-License-Identifier: MIT
#pragma once
#include "models/host/TransferLink.hpp"
#include "models/hw/SystemParams.hpp"

namespace ipusim {

/** The IPU's host traffic counted per direction (statistics). Its transfers' timing is the
 *  links': a host transfer is a flow over the IPU's PCIe link to its gateway and the gateway's
 *  link to the host (IpuLinks::startHostTransfer). */
class HostLink : public TransferLink
{
public:
    HostLink(sc_core::sc_module_name name, const LinkParams& link, double clockHz)
        : TransferLink(name, link.bandwidthBytesPerSecond, link.efficiency, link.latencyCycles, clockHz)
    {
        registerStats("host_bytes_to_ipu", "host_bytes_from_ipu", "host link");
        statGroup().add("host_syncs", m_syncs, "exchanges", "host exchanges the IPU synced with the host for");
        statGroup().add("host_sync_cycles", m_syncCycles, "cycles", "cycles the IPU waited for the host to answer them");
    }
    [[nodiscard]] uint64_t syncs() const { return m_syncs; }
    [[nodiscard]] uint64_t syncWaitCycles() const { return m_syncCycles; }
    /** The IPU waited `cycles` for the host to answer a host exchange's sync. */
    void countSync(uint64_t cycles)
    {
        ++m_syncs;
        m_syncCycles += cycles;
    }

private:
    uint64_t m_syncs = 0, m_syncCycles = 0;
};

} // namespace ipusim
