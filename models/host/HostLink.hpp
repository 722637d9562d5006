// SPDX-License-Identifier: MIT
#pragma once
#include "models/host/TransferLink.hpp"
#include "models/hw/SystemParams.hpp"

namespace ipusim {

/** The IPU's link to the host (PCIe Gen4 x8 through the gateway). */
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
