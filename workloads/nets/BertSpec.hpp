// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/strategies/WorkloadOptions.hpp"
#include "workloads/training/Training.hpp"

#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

namespace ipusim {

/** Sequence packing (graphcore/examples' packed BERT): several sequences share a row. */
struct BertPacking
{
    double averagePerRow = 1; // the dataset's packing factor: counts throughput
    uint64_t maxPerRow = 1;   // NSP positions and labels per row (each sequence's [CLS] at the row's end)
};

/** Sizes of a BERT-like encoder and its inputs (defaults: BERT-Large, phase 1). */
struct BertShape
{
    uint64_t layers = 24, hidden = 1024, heads = 16, ffn = 4096;
    uint64_t vocab = 30522, vocabPadding = 64, maxPositions = 512, typeVocab = 2;
    uint64_t sequence = 128, maxPredictions = 20;
    uint32_t embeddingSerialization = 1;
    /** Packed rows: a block-diagonal attention mask built from per-token sequence ids. */
    std::optional<BertPacking> packing;
    /** Rows of the word embedding: the vocabulary rounded up to the padding. */
    [[nodiscard]] uint64_t paddedVocab() const { return (vocab + vocabPadding - 1) / vocabPadding * vocabPadding; }
    [[nodiscard]] uint64_t headSize() const { return hidden / heads; }
};

enum class BertTask { Pretraining, Squad };

/** `"workload": {"kind": "bert"}`, decoded: the shape checked (heads divide the hidden size,
 *  the sequence fits the positions, ...), the rest checked against the model when compiled. */
struct BertSpec
{
    WorkloadOptions options;
    BertShape shape;
    BertTask task = BertTask::Pretraining;
    OptimizerSpec optimizer{Optimizer::Lamb};
    MemoryProportion availableMemoryProportion;
    /** Placement by layer counts (`/workload/strategy/layers_per_ipu`, `heads_ipu`); empty:
     *  the strategy's stages place the blocks. */
    std::vector<uint64_t> layersPerIpu;
    std::optional<uint32_t> headsIpu;
};

} // namespace ipusim
