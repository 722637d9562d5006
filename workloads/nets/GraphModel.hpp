// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "workloads/graph/ModelBuilder.hpp"
#include "workloads/nets/GraphSpec.hpp"
#include "workloads/strategies/Placement.hpp"
#include "workloads/strategies/CompiledSchedule.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ipusim {

/** What a net chooses when its model compiles. */
struct ModelCompileChoices
{
    bool withLoss = true; // build the loss layers (training; BERT's pre-training heads always)
    /** Where the model's blocks go, given the blocks in order and what the built graph names. */
    std::function<Placement(const std::vector<std::string>& blocks, const ModelGraphInfo& info)> place;
    /** Which steps share compiled code (Graph lowering's outline keys); unset: the updates of
     *  weights of one shape (PopART's outlining of identical update subgraphs). */
    std::function<std::string(const std::string&)> outline;
};

/** Compiles a model: built layer by layer (buildModelGraph), checked to have outputs (and, in
 *  training, a loss), placed, trained from its loss layers (backward, accumulation, the
 *  optimizer) or run for inference. The MNIST, BERT, graph and ONNX workloads all compile so. */
CompiledSchedule compileModel(const ModelSpec& model, const WorkloadOptions& options, const OptimizerSpec& optimizer,
                      const MemoryProportion& memoryProportion, const ModelCompileChoices& choices, const SystemParams& system,
                      const Diagnostics& diag);

/** Compiles a model graph the user describes: built layer by layer (buildModelGraph), trained
 *  from its loss layers (backward, accumulation, the optimizer) or run for inference, on the
 *  placement its strategy and the layers' IPUs give. */
CompiledSchedule compileGraphModel(const GraphSpec& spec, const SystemParams& system, const Diagnostics& diag);

} // namespace ipusim
