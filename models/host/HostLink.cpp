// SPDX-License-Identifier: MIT
#include "models/host/HostLink.hpp"

#include "models/link/StreamTiming.hpp"

namespace ipusim {

HostLink::HostLink(sc_core::sc_module_name name, const HostLinkParams& link, double clockHz)
    : sc_module(name), m_link(link), m_clockHz(clockHz)
{
}

uint64_t HostLink::transferCycles(uint64_t bytes) const
{
    if (bytes == 0)
        return 0;
    return m_link.latencyCycles + streamCycles(bytes, m_link.bandwidthBytesPerSecond, m_link.efficiency, m_clockHz);
}

uint64_t HostLink::transfer(Direction direction, uint64_t bytes)
{
    account(direction, bytes);
    return transferCycles(bytes);
}

} // namespace ipusim
