// SPDX-License-Identifier: MIT
// BERT graphs: FLOPs and parameters against closed forms, memory of a small model by hand,
// placement from layers_per_ipu and its errors.
#include "models/memory/TileMemory.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/engine/Experiment.hpp"
#include "Simulate.hpp"
#include "workloads/graph/ModelBuilder.hpp"
#include "workloads/nets/Bert.hpp"
#include "workloads/training/Training.hpp"

#include <catch2/catch.hpp>

#include <map>

using namespace ipusim;
using json = nlohmann::json;

namespace {

const std::string kRoot = IPUSIM_SOURCE_DIR;

BertShape base()
{
    BertShape s;
    s.layers = 12;
    s.hidden = 768;
    s.heads = 12;
    s.ffn = 3072;
    return s;
}

/** Multiply-accumulates of the matmuls of one block, forward or backward. */
uint64_t macsOf(const Graph& g, const std::string& block, bool forward)
{
    uint64_t n = 0;
    for (const auto& op : g.ops)
        if (op.block == block && op.forward == forward && (op.kind == OpKind::Conv || op.kind == OpKind::BatchMatMul))
            n += op.conv.macs();
    return n;
}

/** Parameters of a BERT encoder with pre-training heads, counted by hand. */
uint64_t parameters(const BertShape& s)
{
    const uint64_t H = s.hidden, F = s.ffn, V = s.paddedVocab();
    const uint64_t embeddings = V * H + s.maxPositions * H + s.typeVocab * H + 2 * H;
    const uint64_t layer = 4 * (H * H + H) + (H * F + F) + (F * H + H) + 2 * 2 * H;
    const uint64_t heads = (H * H + H) + 2 * H + V /* MLM transform, LayerNorm, decoder bias */ + (H * H + H) + (2 * H + 2);
    return embeddings + s.layers * layer + heads;
}

/** The forward graph of BERT for `batch` sequences, in fp16, with its losses. */
Graph bertGraph(const BertShape& s, uint64_t batch, ModelGraphInfo& info)
{
    return buildModelGraph(bertModel(s, BertTask::Pretraining), batch, Precision::FP16, Precision::FP16, true,
                           test::ThrowingDiagnostics(), info);
}

json tinyConfig()
{
    return json::parse(R"({
      "system": {"base": "hardware/mk2.json", "ipu": {"tiles": 64}},
      "workload": {"kind": "bert", "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "vocab_size": 1000,
                   "vocab_padding": 8, "max_positions": 64}, "sequence_length": 32, "max_predictions": 4,
                   "micro_batch": 2, "precision": "fp32", "partials": "fp32", "optimizer": "adamw", "loss_scaling": 1,
                   "recompute": "none", "offload_optimizer": false},
      "run": {"gradient_accumulation": 4}
    })");
}

std::string errorOf(const json& d)
{
    try {
        buildExperiment(config::loadConfig(d, kRoot + "/configs/test.json"));
    } catch (const config::ConfigError& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST_CASE("BERT: matmul FLOPs per layer follow the closed form", "[bert]")
{
    for (const auto& [B, S] : std::vector<std::pair<uint64_t, uint64_t>>{{8, 128}, {2, 512}, {3, 384}}) {
        BertShape s = base();
        s.sequence = S;
        ModelGraphInfo info;
        Graph g = bertGraph(s, B, info);
        const uint64_t H = s.hidden, F = s.ffn;
        // Q, K, V and output projections, two FFN matmuls, scores and context per head.
        const uint64_t forward = B * S * (4 * H * H + 2 * H * F) + 2 * B * S * S * H;
        CHECK(macsOf(g, "L0", true) == forward);
        CHECK(macsOf(g, "L11", true) == forward);
        // Training: each matmul has a data and a weight (or second operand) gradient.
        addTraining(g, {info.losses, true, Precision::FP16, {Optimizer::Lamb, 0.0, false, 16384}});
        CHECK(macsOf(g, "L5", false) == 2 * forward);
    }
}

TEST_CASE("BERT: parameter counts of Base and Large", "[bert]")
{
    ModelGraphInfo info;
    const BertShape b = base();
    const uint64_t baseParams = parameterCount(bertGraph(b, 1, info));
    CHECK(baseParams == parameters(b));
    CHECK(baseParams > 109'000'000);
    CHECK(baseParams < 111'000'000);
    const BertShape l;
    const uint64_t largeParams = parameterCount(bertGraph(l, 1, info));
    CHECK(largeParams == parameters(l));
    CHECK(largeParams > 334'000'000);
    CHECK(largeParams < 337'000'000);
    // The word table in vocabulary parts, each tied to its part of the MLM decoder: as many.
    BertShape serialized = l;
    serialized.embeddingSerialization = 4;
    const Graph g = bertGraph(serialized, 1, info);
    CHECK(parameterCount(g) == largeParams);
    int hostLoads = 0;
    for (const auto& op : g.ops)
        hostLoads += op.kind == OpKind::HostLoad;
    CHECK(hostLoads == 2); // the sequences' four inputs in one copy, the three label inputs in another
}

TEST_CASE("BERT: weights, accumulators and optimizer state of a small model by hand", "[bert][memory]")
{
    const Experiment e = buildExperiment(config::loadConfig(tinyConfig(), kRoot + "/configs/test.json"));
    REQUIRE(e.schedule.programs.size() == 1);
    BertShape s;
    s.layers = 2;
    s.hidden = 64;
    s.heads = 4;
    s.ffn = 256;
    s.vocab = 1000;
    s.vocabPadding = 8;
    s.maxPositions = 64;
    const uint64_t params = parameters(s); // vocabulary 1000 padded to 1000
    std::map<std::string, uint64_t> byKind;
    const TileMemory memory(e.schedule.programs[0], e.system.ipu);
    for (const auto& t : memory.tensors())
        for (const auto& r : t.bytes.runs())
            byKind[t.kind] += r.value * r.count;
    CHECK(byKind["weight"] == 4 * params);          // fp32
    CHECK(byKind["accumulator"] == 4 * params);     // gradient accumulation 4
    CHECK(byKind["optimizer state"] == 8 * params); // AdamW's two fp32 moments
    // Samples: micro-batch x gradient accumulation.
    CHECK(e.schedule.samplesPerHostCall == 8);
    CHECK(e.schedule.sampleKind == "sequences");
}

TEST_CASE("BERT: master weights add an fp32 copy of the fp16 weights", "[bert][memory]")
{
    json d = tinyConfig();
    d["workload"]["precision"] = "fp16";
    d["workload"]["partials"] = "fp16";
    d["workload"]["master_weights"] = true;
    const Experiment e = buildExperiment(config::loadConfig(d, kRoot + "/configs/test.json"));
    std::map<std::string, uint64_t> byKind;
    const TileMemory memory(e.schedule.programs[0], e.system.ipu);
    for (const auto& t : memory.tensors())
        for (const auto& r : t.bytes.runs())
            byKind[t.kind] += r.value * r.count;
    CHECK(byKind["optimizer state"] == 3 * 2 * byKind["weight"]); // m, v and the master, fp32 each
}

TEST_CASE("BERT: layers_per_ipu places the embedding first and the heads beside it", "[bert][placement]")
{
    const Experiment e = buildExperiment(kRoot + "/configs/bert/large_phase1_pod16.json");
    REQUIRE(e.schedule.strategy);
    const auto& st = e.schedule.strategy->stages;
    REQUIRE(st.size() == 5);
    CHECK(st[0].blocks == std::vector<std::string>{"Embedding", "L0", "L1", "L2"});
    CHECK(st[1].blocks.size() == 7);
    CHECK(st[4].blocks == std::vector<std::string>{"Heads"});
    CHECK(st[4].ipu == 0);
    // Grouped pipeline of 5 stages: stash depths 2(5-1-k)+1.
    CHECK(st[0].stashDepth == 9);
    CHECK(st[3].stashDepth == 3);
    CHECK(st[4].stashDepth == 0);
    CHECK(e.schedule.programs.size() == 4); // IPU 0 runs two stages
    CHECK(e.schedule.samplesPerHostCall == 8 * 2048 * 4);
}

TEST_CASE("BERT: bad placements and shapes name the JSON path", "[bert][errors]")
{
    json d = tinyConfig();
    d["system"] = {{"base", "hardware/m2000.json"}, {"ipu", {{"tiles", 64}}}};
    d["workload"]["strategy"] = {{"kind", "pipelined"}, {"layers_per_ipu", {1, 2}}};
    d["run"]["gradient_accumulation"] = 8;
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/strategy/layers_per_ipu: expected layers adding up to the model's 2, found 3"));
    d["workload"]["strategy"]["layers_per_ipu"] = {1, 0, 0, 0, 1};
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/strategy/layers_per_ipu: expected at most the system's 4 IPUs, found 5"));
    d["workload"]["strategy"]["layers_per_ipu"] = {1, 1};
    d["workload"]["strategy"]["heads_ipu"] = 1;
    CHECK_THAT(errorOf(d), Catch::Contains("block \"Heads\" (IPU 1) uses weight \"embedding.word.weight\" of block \"Embedding\" (IPU 0): "
                                           "expected blocks sharing a learned weight on one IPU"));
    d["workload"]["strategy"].erase("heads_ipu");
    d["workload"]["strategy"]["kind"] = "single";
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/strategy/layers_per_ipu: expected strategy kind \"pipelined\" or \"sharded\""));
    d["workload"]["strategy"] = {{"kind", "pipelined"}, {"layers_per_ipu", {1, 1}}};
    d["workload"]["available_memory_proportion"] = {0.2, 0.2, 0.2};
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/available_memory_proportion: expected one value per IPU of a replica (2), found 3"));
    d["workload"].erase("available_memory_proportion");
    d["workload"]["model"]["heads"] = 5;
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/model/heads: expected a divisor of the hidden size 64, found 5"));
    d["workload"]["model"]["heads"] = 4;
    d["workload"]["sequence_length"] = 128;
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/sequence_length: expected at most max_positions (64), found 128"));
    d["workload"]["sequence_length"] = 32;
    d["workload"]["embedding_serialization"] = 3;
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/embedding_serialization: expected a divisor of the padded vocabulary (1000 rows), found 3"));
    d["workload"]["embedding_serialization"] = 1;
    d["workload"]["task"] = "squad";
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/task: expected \"pretraining\" for training"));
}

TEST_CASE("BERT: packed rows build one attention mask that every layer's softmax adds", "[bert][packing]")
{
    BertShape s = base();
    s.sequence = 512;
    s.maxPredictions = 76;
    ModelGraphInfo plainInfo, info;
    const Graph plain = bertGraph(s, 2, plainInfo);
    s.packing = BertPacking{2.0, 3};
    Graph g = bertGraph(s, 2, info);
    // The rows stream sequence ids in place of the padding mask; NSP has 3 labels a row.
    std::map<std::string, std::vector<uint64_t>> shapes;
    for (const auto& t : g.tensors)
        shapes[t.name] = t.shape;
    CHECK(shapes.count("sequence_ids"));
    CHECK_FALSE(shapes.count("attention_mask"));
    CHECK(shapes.at("next_sentence_labels") == std::vector<uint64_t>{2, 3});
    CHECK(shapes.at("nsp.cls_tokens.out") == std::vector<uint64_t>{2, 3, 768});
    int masks = 0, maskedSoftmaxes = 0;
    int mask = -1;
    for (const auto& op : g.ops)
        if (op.kind == OpKind::AttentionMask) {
            ++masks;
            mask = op.outputs.at(0);
            CHECK(op.block == "Embedding");
            CHECK(op.channels == 512);
            CHECK(g.tensor(mask).shape == std::vector<uint64_t>{2, 512, 512});
        }
    for (const auto& op : g.ops)
        if (op.kind == OpKind::Softmax) {
            REQUIRE(op.inputs.size() == 2);
            CHECK(op.inputs[1] == mask);
            CHECK(op.broadcast == 1);
            ++maskedSoftmaxes;
        }
    CHECK(masks == 1);
    CHECK(maskedSoftmaxes == 12);
    // The encoder's work and the weights do not change; the mask gets no gradient.
    CHECK(macsOf(g, "L3", true) == macsOf(plain, "L3", true));
    CHECK(parameterCount(g) == parameterCount(plain));
    addTraining(g, {info.losses, true, Precision::FP16, {Optimizer::Lamb, 0.0, false, 16384}});
    for (const auto& t : g.tensors)
        CHECK(t.name != "dattention_mask.out");
    for (const auto& op : g.ops)
        CHECK(op.name.rfind("attention_mask.", 0) != 0);
}

TEST_CASE("BERT: the packed attention mask's cycles by hand", "[bert][packing]")
{
    // 2 rows of 32 tokens: a 2 x 32 x 32 fp32 mask, 8,192 bytes over 64 tiles, 32 elements each
    // (worker share m = 6).
    json d = tinyConfig();
    d["workload"]["packing"] = {{"average_sequences_per_row", 1.5}, {"max_sequences_per_row", 2}};
    const Experiment e = buildExperiment(config::loadConfig(d, kRoot + "/configs/test.json"));
    const auto cycles = test::busiestStepCycles(e.schedule);
    // The expand copies an int32 a cycle.
    CHECK(cycles.at("attention_mask.expand") == 32);
    // EQUAL on int32: 11 + 6 (26 + 22 ceil(6 / 4)) = 431; Cast1D from bool: 12 + 6 (19 + 2 x 6 +
    // 18) = 306; 1 - m and x -10000 in place: 2 x (11 + 6 (20 + 2 ceil(6 / 2))) = 334.
    CHECK(cycles.at("attention_mask") == 431 + 306 + 334);
    CHECK(e.schedule.sampleKind == "rows");
    CHECK(e.schedule.sequencesPerSample == 1.5);
}

TEST_CASE("BERT: bad packing names the JSON path", "[bert][packing][errors]")
{
    json d = tinyConfig();
    d["workload"]["packing"] = {{"average_sequences_per_row", 2.5}, {"max_sequences_per_row", 2}};
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/packing/average_sequences_per_row: expected at most max_sequences_per_row (2), found 2.5"));
    d["workload"]["packing"] = {{"average_sequences_per_row", 2}, {"max_sequences_per_row", 33}};
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/packing/max_sequences_per_row: expected at most the sequence length (32), found 33"));
    d["workload"]["packing"] = {{"average_sequences_per_row", 0.5}, {"max_sequences_per_row", 2}};
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/packing/average_sequences_per_row"));
    d["workload"]["packing"] = {{"max_sequences_per_row", 2}};
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/packing") && Catch::Contains("average_sequences_per_row"));
    d["workload"]["packing"] = {{"average_sequences_per_row", 2}, {"max_sequences_per_row", 2}};
    d["workload"]["task"] = "squad";
    d["workload"]["mode"] = "infer";
    d["run"]["gradient_accumulation"] = 1;
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/packing: expected only with \"task\": \"pretraining\""));
}
