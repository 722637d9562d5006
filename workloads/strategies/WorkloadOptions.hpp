// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Precision.hpp"
#include "workloads/strategies/StrategySpec.hpp"

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

namespace ipusim {

/** Which outputs go back to the host (PopTorch OutputMode). */
enum class OutputMode { All, Final, Sum, EveryN };

/** The matmul planner's share of tile memory (available_memory_proportion): none (the
 *  hardware's), one for every IPU, or one per IPU of a replica. */
using MemoryProportion = std::variant<std::monostate, double, std::vector<double>>;

/** What every model's workload asks of the compiler (the shared `/workload` keys and the loop
 *  counts of `/run`), decoded and checked by sim/config. */
struct WorkloadOptions
{
    bool train = true;
    uint64_t microBatch = 1;
    Precision activations = Precision::FP32;
    Precision partials = Precision::FP32;
    bool offloadOptimizer = false;
    bool recompute = false; // checkpoint every block: keep block inputs, recompute the rest
    uint32_t ioTiles = 0;
    uint32_t prefetchDepth = 1; // inputs fetched ahead into the IO tiles
    OutputMode outputMode = OutputMode::Final;
    uint32_t outputPeriod = 1; // EveryN: every period-th micro-batch
    uint64_t gradientAccumulation = 1, deviceIterations = 1;
    /** The element type float data inputs cross from the host in (`input_dtype`); none: the
     *  model's precision. Cast on the IPU when it differs. */
    std::optional<Precision> inputType;
    StrategySpec strategy;
    /** Identical ops are lowered once and emitted again (GraphLowering::lower); off, each is
     *  lowered afresh, to the same Schedule (no config key: a check of the compiler's). */
    bool reuseIdenticalOps = true;
    /** Compiling stops at the first IPU whose program does not fit, as Poplar's does, so that a
     *  run reports it at once; off (`ipusim compile`, which writes the Schedule whole), every
     *  IPU is compiled and accounted. No config key. */
    bool stopAtFirstIpuOver = true;
};

} // namespace ipusim
