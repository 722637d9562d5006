// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/strategies/CompiledSchedule.hpp"
#include "workloads/strategies/Placement.hpp"
#include "workloads/strategies/WorkloadOptions.hpp"
#include "workloads/training/Training.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ipusim {

/** Where outputs go back to the host (PopTorch OutputMode). */
struct OutputPlan
{
    using Mode = OutputMode;
    Mode mode = Mode::Final;
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

/** How the compiler lowers a model: the workload's options plus what the model adds (its
 *  outputs, its outlining rule, per-IPU memory proportions). */
struct CompileOptions : WorkloadOptions
{
    OutputPlan out; // mode and period as the workload asks; tensors and block the model's
    /** Per IPU of a replica: the share of tile memory the matmul planner may use for
     *  temporaries (available_memory_proportion); empty means the hardware's default. */
    std::vector<double> availableMemoryProportion;
    /** Outlining: maps a step name to the key of the subgraph it belongs to ("" for none). */
    std::function<std::string(const std::string&)> outline;
};

/** The planner's memory proportion per IPU of a replica (empty: the hardware's); a list must
 *  give one per IPU of a replica. */
std::vector<double> memoryProportions(const MemoryProportion& proportion, const Placement& placement, const Diagnostics& diag);

/** The training pass of a model on `placement`: from `losses`, with gradient accumulators when
 *  gradient accumulation or a pipeline needs them. */
TrainingOptions trainingOptionsOf(const CompileOptions& options, const Placement& placement, std::vector<int> losses,
                                  const OptimizerSpec& optimizer);

/** The compile options of a workload; the output tensors and block are the model's to fill in. */
CompileOptions compileOptionsOf(const WorkloadOptions& workload);

/** Lowers the model onto the placement: one IPU, a pipeline (stages may share an IPU), one
 *  stage at a time (sharded) or phases streamed from Streaming Memory; fills the schedule's
 *  strategy and samples per host call, and accounts each IPU's memory as its program is done
 *  (a pipeline compiles no IPU after the first that does not fit). What only compiling finds
 *  out (weights shared across IPUs, a tensor skipping a stage, Streaming Memory too small) is
 *  reported through `diag`. */
CompiledSchedule compileGraph(const ModelGraph& model, const SystemParams& system, const Placement& placement,
                              const CompileOptions& options, const Diagnostics& diag);

} // namespace ipusim
