// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/graph/Graph.hpp"

#include <vector>

namespace ipusim {

/** The three convolution problems of a convolution layer (forward, data gradient, weight
 *  gradient), each lowered as its own AMP convolution as PopLibs does. */
ConvProblem forwardProblem(const ConvGeometry& g, Precision input, Precision partials);
ConvProblem dataGradProblem(const ConvGeometry& g, Precision input, Precision partials);
ConvProblem weightGradProblem(const ConvGeometry& g, Precision input, Precision partials);

/** Op indices of a training step, by the loop they run in. */
struct TrainingOps
{
    std::vector<std::size_t> backward;   // per micro-batch, after the forward ops
    std::vector<std::size_t> accumulate; // per micro-batch, when gradient accumulation > 1
    std::vector<std::size_t> update;     // once per weight update
};

/** Appends the backward pass of every forward op in `graph` (reverse order, from the gradient
 *  of `loss`), gradient accumulators when `accumulate`, and an AdamW update per weight. */
TrainingOps addTraining(Graph& graph, int loss, bool accumulate, Precision partials);

} // namespace ipusim
