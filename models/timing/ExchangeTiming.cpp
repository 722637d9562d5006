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
    // Rounding up keeps order, so the busiest tile takes as long as the largest send or the
    // largest receive, each divided once (a step has up to hundreds of runs). A tile's receive
    // is weighed as on its bus, recv x k + recvShared for k tiles a bus: as exchangeTileCycles
    // weighs a shared receive of that many bytes.
    const uint64_t k = hw.tilesPerReceiveBus;
    uint64_t send = 0, recvBusBytes = 0;
    for (const auto& r : step.bytes.runs()) {
        send = std::max(send, r.value.send);
        recvBusBytes = std::max(recvBusBytes, r.value.recv * k + r.value.recvShared);
    }
    const uint64_t busiest = exchangeTileCycles(hw, {send, 0, recvBusBytes});
    return busiest == 0 ? 0 : busiest + exchangeLatencyCycles(hw);
}

} // namespace ipusim
