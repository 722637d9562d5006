// SPDX-License-Identifier: MIT
#include "models/exchange/Exchange.hpp"

#include <algorithm>

namespace ipusim {

Exchange::Exchange(sc_core::sc_module_name name, const IpuParams& hw) : sc_module(name), m_hw(hw) {}

uint64_t exchangeTileCycles(const IpuParams& hw, const ExchangeBytes& b)
{
    auto ceilDiv = [](uint64_t a, uint64_t d) { return (a + d - 1) / d; };
    const uint64_t send = ceilDiv(b.send, hw.sendBytesPerCycle);
    const uint64_t k = hw.tilesPerReceiveBus;
    const uint64_t recv = ceilDiv(b.recv * k + b.recvShared, k * hw.recvBytesPerCycle);
    return std::max(send, recv);
}

uint64_t exchangeLatencyCycles(const IpuParams& hw)
{
    return hw.exchangeLatencyBase + uint64_t(hw.exchangeLatencyPerRow) * (hw.rows() - 1);
}

uint64_t Exchange::tileCycles(const ExchangeBytes& b) const { return exchangeTileCycles(m_hw, b); }

uint64_t Exchange::latencyCycles() const { return exchangeLatencyCycles(m_hw); }

uint64_t Exchange::phaseCycles(const ExchangeStep& step) const
{
    uint64_t busiest = 0;
    for (const auto& r : step.bytes.runs())
        busiest = std::max(busiest, tileCycles(r.value));
    return busiest == 0 ? 0 : busiest + latencyCycles();
}

void Exchange::account(const ExchangeStep& step)
{
    for (const auto& r : step.bytes.runs())
        m_bytesSent += r.value.send * r.count;
    ++m_phases;
}

} // namespace ipusim
