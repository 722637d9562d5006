// SPDX-License-Identifier: MIT
#pragma once
#include "models/system/SystemParams.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/schedule/Schedule.hpp"
#include "workloads/strategies/Placement.hpp"
#include "workloads/training/Training.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ipusim {

/** Where outputs go back to the host (PopTorch OutputMode). */
struct OutputPlan
{
    enum class Mode { All, Final, Sum, EveryN } mode = Mode::Final;
    uint32_t period = 1;
    std::vector<int> tensors;
    std::string block; // the block that produces them
    [[nodiscard]] bool perMicroBatch() const { return mode == Mode::All || mode == Mode::EveryN; }
};

/** A model graph ready to compile: its forward ops come first, then the ops addTraining added. */
struct ModelGraph
{
    Graph graph;
    std::size_t forwardOps = 0;
    TrainingOps training;
};

/** Workload options every model shares (`/workload` keys of the schema). */
struct CompileOptions
{
    bool train = true;
    bool offloadOptimizer = false;
    bool recompute = false; // checkpoint every block: keep block inputs, recompute the rest
    uint32_t ioTiles = 0;
    Precision activations = Precision::FP32;
    Precision partials = Precision::FP32;
    OutputPlan out;
    uint64_t gradientAccumulation = 1, deviceIterations = 1;
    /** Per IPU of a replica: the share of tile memory the matmul planner may use for
     *  temporaries (available_memory_proportion); empty means the hardware's default. */
    std::vector<double> availableMemoryProportion;
    /** Outlining: maps a step name to the key of the subgraph it belongs to ("" for none). */
    std::function<std::string(const std::string&)> outline;
};

/** Reads and checks the shared options (mode, io_tiles, recompute, offload_optimizer,
 *  output_mode) of `/workload`. The output tensors are the model's to fill in. */
CompileOptions readCompileOptions(const config::LoadedConfig& cfg, const SystemParams& system, uint64_t gradientAccumulation,
                                  uint64_t deviceIterations);

/** Lowers the model onto the placement: one IPU, a pipeline (stages may share an IPU), one
 *  stage at a time (sharded) or phases streamed from Streaming Memory; fills the schedule's
 *  strategy and samples per host call. */
Schedule compileGraph(const config::LoadedConfig& cfg, const ModelGraph& model, const SystemParams& system,
                      const Placement& placement, const CompileOptions& options, uint64_t microBatch);

} // namespace ipusim
