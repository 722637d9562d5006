// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/Precision.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/graph/ModelSpec.hpp"

#include <vector>

namespace ipusim {

/** What the compiler needs to know of a built model graph. */
struct ModelGraphInfo
{
    std::vector<int> outputs; // the model's outputs that go back to the host
    std::vector<int> losses;  // outputs of the loss layers (training)
    std::string outputBlock;  // the block that produces the first output
};

/** Builds the forward Graph of `model` for `microBatch` samples, activations and weights in
 *  `type`: shapes inferred layer by layer, weights added per layer, each input streamed from the
 *  host just before its first reader (in that reader's block), views (flatten, reshape) free.
 *  Without `withLoss` (inference) the loss layers and what only they read are left out. Errors
 *  (an unknown input, shapes that do not fit, an attribute out of range) name the layer's
 *  pointer through `diag`. */
Graph buildModelGraph(const ModelSpec& model, uint64_t microBatch, Precision type, Precision partials, bool withLoss,
                      const Diagnostics& diag, ModelGraphInfo& info);

} // namespace ipusim
