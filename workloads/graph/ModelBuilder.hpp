// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/Precision.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/graph/ModelSpec.hpp"

#include <map>
#include <string>
#include <vector>

namespace ipusim {

/** What the compiler needs to know of a built model graph. */
struct ModelGraphInfo
{
    std::vector<int> outputs; // the model's outputs that go back to the host
    std::vector<int> losses;  // outputs of the loss layers (training)
    std::string outputBlock;  // the block that produces the first output
    /** The IPU each block names (poptorch.BeginBlock ipu_id), with the pointer of the op that
     *  names it; empty when no op names one, else one for every block. */
    std::map<std::string, uint32_t> blockIpus;
    std::map<std::string, std::string> blockIpuPointers;
};

/** Builds the forward Graph of `model` for `microBatch` samples, activations and weights in
 *  `type`: shapes inferred layer by layer, weights added per layer, each input streamed from the
 *  host just before its first reader (in that reader's block), views (flatten, reshape) free.
 *  Without `withLoss` (inference) the loss layers and what only they read are left out. Once an
 *  op names its block's IPU, every block must have one. Errors
 *  (an unknown input, shapes that do not fit, an attribute out of range) name the layer's
 *  pointer through `diag`. */
Graph buildModelGraph(const ModelSpec& model, uint64_t microBatch, Precision type, Precision partials, bool withLoss,
                      const Diagnostics& diag, ModelGraphInfo& info);

} // namespace ipusim
