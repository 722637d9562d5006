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

/** PopTorch's optimizers: AdamW and LAMB (two moments each), SGD with momentum and LARS (a
 *  velocity each, when the momentum is above 0). */
enum class Optimizer { AdamW, Lamb, Sgd, Lars };

/** How weights are updated, as a workload's config gives it (`optimizer`, `momentum`,
 *  `master_weights`, `loss_scaling`). */
struct OptimizerSpec
{
    Optimizer kind = Optimizer::AdamW;
    double momentum = 0.9;       // SGD and LARS: 0 keeps no velocity
    bool masterWeights = false;  // fp32 master copies of fp16 weights, updated and cast back
    double lossScaling = 1.0;    // the loss gradient is scaled up; optimizers scale it back
};

struct TrainingOptions
{
    std::vector<int> losses;     // the loss tensors the backward pass starts from
    bool accumulate = false;     // gradient accumulators (gradient accumulation or pipelining)
    Precision partials = Precision::FP32;
    OptimizerSpec optimizer;
};

/** Appends the backward pass of every forward op in `graph` (reverse order, from the gradients
 *  of the losses; a tensor read by several ops sums their gradients), gradient accumulators
 *  (one accumulation per gradient contribution, in the block that makes it) and an optimizer
 *  update per weight. */
TrainingOps addTraining(Graph& graph, const TrainingOptions& options);

/** Problems of a batched matmul Z = X Y (groups of M x K times K x N) and of its gradients. */
ConvProblem batchMatMulProblem(uint64_t groups, uint64_t M, uint64_t K, uint64_t N, Precision input, Precision partials);

} // namespace ipusim
