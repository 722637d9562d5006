// SPDX-License-Identifier: MIT
#pragma once
#include "models/system/SystemParams.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/schedule/Schedule.hpp"

#include <cstdint>
#include <vector>

namespace ipusim {

/** Sizes of a BERT-like encoder and its inputs (defaults: BERT-Large, phase 1). */
struct BertShape
{
    uint64_t layers = 24, hidden = 1024, heads = 16, ffn = 4096;
    uint64_t vocab = 30522, vocabPadding = 64, maxPositions = 512, typeVocab = 2;
    uint64_t sequence = 128, maxPredictions = 20;
    uint32_t embeddingSerialization = 1;
    /** Rows of the word embedding: the vocabulary rounded up to the padding. */
    [[nodiscard]] uint64_t paddedVocab() const { return (vocab + vocabPadding - 1) / vocabPadding * vocabPadding; }
    [[nodiscard]] uint64_t headSize() const { return hidden / heads; }
};

enum class BertTask { Pretraining, Squad };

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

/** Compiles `"workload": {"kind": "bert"}`: the graph, training (LAMB or AdamW, loss scaling,
 *  master weights, recomputation) and the placement (`layers_per_ipu` or stages). */
Schedule buildBertSchedule(const config::LoadedConfig& cfg, const SystemParams& system, uint64_t gradientAccumulation,
                           uint64_t deviceIterations);

} // namespace ipusim
