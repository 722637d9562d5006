// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/graph/ModelSpec.hpp"
#include "workloads/nets/BertSpec.hpp"
#include "workloads/strategies/CompiledSchedule.hpp"

#include <cstdint>
#include <vector>

namespace ipusim {

/** BERT as a model, in blocks "Embedding", "L0".."L{layers-1}", "Heads": word (in
 *  `embeddingSerialization` vocabulary parts), position and token-type embeddings, their sum
 *  and LayerNorm; per layer Q, K, V projections, scores (a batched matmul per sequence and
 *  head), softmax with scale and mask, context, output projection, residual and LayerNorm, FFN
 *  with GELU, residual and LayerNorm; then the pre-training heads (MLM over the masked
 *  positions, projecting onto the tied word embedding, and NSP over the pooled first token) or
 *  the SQuAD span head. The token ids, types, positions and mask cross from the host in one
 *  copy, the pre-training labels in another. Dropout is not modelled. */
ModelSpec bertModel(const BertShape& shape, BertTask task);

/** Elements of every weight of a graph (the parameter count). */
uint64_t parameterCount(const Graph& graph);

/** Compiles a BERT workload: the graph, training (LAMB or AdamW, loss scaling, master
 *  weights, recomputation) and the placement (`layers_per_ipu` or stages). */
CompiledSchedule compileBert(const BertSpec& spec, const SystemParams& system, const Diagnostics& diag);

} // namespace ipusim
