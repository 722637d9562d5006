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
    HostLink(sc_core::sc_module_name name, const HostLinkParams& link, double clockHz)
        : TransferLink(name, link.bandwidthBytesPerSecond, link.efficiency, link.latencyCycles, clockHz)
    {
        registerStats("host_bytes_to_ipu", "host_bytes_from_ipu", "host link");
    }
};

} // namespace ipusim
