// SPDX-License-Identifier: MIT
#include "models/host/HostLink.hpp"

#include <cmath>

namespace ipusim {

HostLink::HostLink(sc_core::sc_module_name name, const HostLinkParams& link, double clockHz)
    : sc_module(name), m_link(link), m_clockHz(clockHz)
{
}

uint64_t HostLink::transferCycles(uint64_t bytes) const
{
    if (bytes == 0)
        return 0;
    const long double bytesPerCycle = (long double)m_link.bandwidthBytesPerSecond * m_link.efficiency / m_clockHz;
    return m_link.latencyCycles + uint64_t(std::ceil((long double)bytes / bytesPerCycle - 1e-9L));
}

uint64_t HostLink::transfer(Direction direction, uint64_t bytes)
{
    account(direction, bytes);
    return transferCycles(bytes);
}

} // namespace ipusim
