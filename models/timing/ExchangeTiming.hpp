// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/IpuParams.hpp"
#include "models/program/Schedule.hpp"

#include <cstdint>

// On-chip exchange timing. Exchange is compiled ahead of time, so a phase lasts as long as its
// busiest tile's send or receive, plus the pipeline latency of the longest path.
namespace ipusim {

/** Cycles one tile needs to send and receive `b` (send at send_bytes_per_cycle; receive at
 *  recv_bytes_per_cycle, data shared by every tile on a receive bus arriving once for all). */
uint64_t exchangeTileCycles(const IpuParams& hw, const ExchangeBytes& b);
/** Latency a phase pays once: base + per-row x (rows - 1). */
uint64_t exchangeLatencyCycles(const IpuParams& hw);
/** Duration of an exchange phase; 0 when no tile moves a byte. */
uint64_t exchangePhaseCycles(const IpuParams& hw, const ExchangeStep& step);

} // namespace ipusim
