// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/nets/BertSpec.hpp"

#include <cstdint>
#include <vector>

namespace ipusim {

/** Tensors of the BERT graph the schedule builder needs. */
struct BertTensors
{
    std::vector<int> losses;  // MLM and NSP (pre-training)
    std::vector<int> outputs; // what goes back to the host
};

/** The encoder, forward only, in blocks "Embedding", "L0".."L{layers-1}", "Heads":
 *  word (in `embeddingSerialization` vocabulary parts), position and token-type embeddings,
 *  their sum and LayerNorm; per layer Q, K, V projections, scores (a batched matmul per
 *  sequence and head), softmax with scale and mask, context, output projection, residual and
 *  LayerNorm, FFN with GELU, residual and LayerNorm; then the pre-training heads (MLM over the
 *  masked positions, projecting onto the tied word embedding, and NSP over the pooled first
 *  token) or the SQuAD span head. Dropout is not modelled. */
Graph bertForward(const BertShape& shape, uint64_t microBatch, Precision type, Precision partials, BertTask task,
                  BertTensors& tensors);

/** Elements of every weight of a graph (the parameter count). */
uint64_t parameterCount(const Graph& graph);

/** Compiles a BERT workload: the graph, training (LAMB or AdamW, loss scaling, master
 *  weights, recomputation) and the placement (`layers_per_ipu` or stages). */
Schedule compileBert(const BertSpec& spec, const SystemParams& system, const Diagnostics& diag);

} // namespace ipusim
