// SPDX-License-Identifier: MIT
#include "models/timing/ExchangeTiming.hpp"

#include <algorithm>

namespace ipusim {

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

uint64_t exchangePhaseCycles(const IpuParams& hw, const ExchangeStep& step)
{
    uint64_t busiest = 0;
    for (const auto& r : step.bytes.runs())
        busiest = std::max(busiest, exchangeTileCycles(hw, r.value));
    return busiest == 0 ? 0 : busiest + exchangeLatencyCycles(hw);
}

} // namespace ipusim
