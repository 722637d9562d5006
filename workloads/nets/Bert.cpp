// SPDX-License-Identifier: MIT
#include "workloads/nets/Bert.hpp"

#include "workloads/nets/GraphModel.hpp"
#include "workloads/strategies/CompileGraph.hpp"

#include <fmt/format.h>

#include <cctype>
#include <numeric>
#include <utility>

namespace ipusim {

namespace {

LayerSpec layer(std::string name, LayerKind kind, std::vector<std::string> inputs)
{
    LayerSpec l;
    l.name = std::move(name);
    l.kind = kind;
    l.inputs = std::move(inputs);
    return l;
}

LayerSpec bertLinear(std::string name, std::string input, uint64_t out, std::string tiedTo = "")
{
    LayerSpec l = layer(std::move(name), LayerKind::Linear, {std::move(input)});
    l.features = out;
    l.tiedWeight = std::move(tiedTo);
    return l;
}

LayerSpec embedding(std::string name, std::string ids, uint64_t rows, uint64_t width)
{
    LayerSpec l = layer(std::move(name), LayerKind::Embedding, {std::move(ids)});
    l.rows = rows;
    l.features = width;
    return l;
}

LayerSpec reshape(std::string name, std::string input, std::vector<int64_t> shape)
{
    LayerSpec l = layer(std::move(name), LayerKind::Reshape, {std::move(input)});
    l.shape = std::move(shape);
    return l;
}

LayerSpec transpose(std::string name, std::string input, std::vector<uint32_t> perm)
{
    LayerSpec l = layer(std::move(name), LayerKind::Transpose, {std::move(input)});
    l.perm = std::move(perm);
    return l;
}

/** Appends layers to a model, the first of a block carrying its name. */
struct ModelWriter
{
    ModelSpec& m;
    std::string block;
    std::string add(LayerSpec l)
    {
        l.block = std::exchange(block, "");
        m.layers.push_back(std::move(l));
        return m.layers.back().name;
    }
    std::string add(std::string name, LayerKind kind, std::vector<std::string> inputs)
    {
        return add(layer(std::move(name), kind, std::move(inputs)));
    }
};

/** One encoder layer on `x` ([batch, S, H]), its output's name returned; `mask`: packed rows'
 *  attention mask, or "" (the padding mask, priced inside the softmax). */
std::string encoderLayer(ModelWriter& w, const BertShape& s, const std::string& L, const std::string& x, const std::string& mask)
{
    const int64_t S = int64_t(s.sequence), heads = int64_t(s.heads), d = int64_t(s.headSize());
    // Per sequence and head: scores = Q K^T (S x d times d x S), context = P V; the head split
    // and merge are views.
    const auto heads4 = [&](const std::string& name, std::vector<uint32_t> perm) {
        const std::string split = w.add(reshape(name + ".heads", name, {S, heads, d}));
        return w.add(transpose(name + ".heads_first", split, std::move(perm)));
    };
    const std::string q = heads4(w.add(bertLinear(L + ".attention.query", x, s.hidden)), {0, 2, 1, 3});
    const std::string k = heads4(w.add(bertLinear(L + ".attention.key", x, s.hidden)), {0, 2, 3, 1});
    const std::string v = heads4(w.add(bertLinear(L + ".attention.value", x, s.hidden)), {0, 2, 1, 3});
    const std::string scores = w.add(L + ".attention.scores", LayerKind::MatMul, {q, k});
    LayerSpec softmax = layer(L + ".attention.softmax", LayerKind::Softmax, {scores});
    if (!mask.empty())
        softmax.inputs.push_back(mask);
    softmax.attention = true;
    const std::string probs = w.add(softmax);
    const std::string perHead = w.add(L + ".attention.context", LayerKind::MatMul, {probs, v});
    const std::string merged = w.add(reshape(L + ".attention.context.merged",
                                             w.add(transpose(L + ".attention.context.heads_last", perHead, {0, 2, 1, 3})),
                                             {S, int64_t(s.hidden)}));
    const std::string attn = w.add(bertLinear(L + ".attention.output", merged, s.hidden));
    const std::string h = w.add(L + ".attention.layer_norm", LayerKind::LayerNorm,
                                {w.add(L + ".attention.residual", LayerKind::Add, {attn, x})});
    const std::string f = w.add(L + ".ffn.gelu", LayerKind::Gelu, {w.add(bertLinear(L + ".ffn.intermediate", h, s.ffn))});
    const std::string o = w.add(bertLinear(L + ".ffn.output", f, s.hidden));
    return w.add(L + ".ffn.layer_norm", LayerKind::LayerNorm, {w.add(L + ".ffn.residual", LayerKind::Add, {o, h})});
}

/** MLM over the masked positions, projecting onto the tied word embedding (in its vocabulary
 *  parts), and NSP over the pooled first token. */
void pretrainingHeads(ModelWriter& w, const BertShape& s, const std::vector<std::string>& wordParts, const std::string& x)
{
    const uint64_t N = wordParts.size();
    std::string m = w.add("mlm.gather", LayerKind::Gather, {x, "masked_lm_positions"});
    m = w.add("mlm.transform.gelu", LayerKind::Gelu, {w.add(bertLinear("mlm.transform", m, s.hidden))});
    m = w.add("mlm.transform.layer_norm", LayerKind::LayerNorm, {m});
    std::vector<std::string> logits;
    for (uint64_t p = 0; p < N; ++p)
        logits.push_back(w.add(bertLinear(N > 1 ? fmt::format("mlm.decoder.part{}", p) : "mlm.decoder", m, s.paddedVocab() / N, wordParts[p])));
    logits.push_back("masked_lm_labels");
    w.add("mlm.loss", LayerKind::CrossEntropy, logits);
    // NSP pools each sequence's [CLS]: the first token, or packed, the row's last max tokens
    // (graphcore/examples' packed BERT moves every [CLS] to the end of its row).
    std::string cls;
    if (s.packing) {
        LayerSpec last = layer("nsp.cls_tokens", LayerKind::Slice, {x}); // x[:, -max:]
        last.axis = 1;
        last.start = s.sequence - s.packing->maxPerRow;
        last.end = s.sequence;
        cls = w.add(last);
    } else {
        cls = w.add("nsp.first_token", LayerKind::Gather, {x}); // x[:, 0]
    }
    const std::string pooled = w.add("nsp.pooler.tanh", LayerKind::Tanh, {w.add(bertLinear("nsp.pooler", cls, s.hidden))});
    w.add("nsp.loss", LayerKind::CrossEntropy, {w.add(bertLinear("nsp.classifier", pooled, 2)), "next_sentence_labels"});
    w.m.outputs = {"mlm.loss", "nsp.loss"};
}

} // namespace

ModelSpec bertModel(const BertShape& s, BertTask task)
{
    ModelSpec m;
    m.pointer = "/workload/model";
    m.lossPointer = "/workload/task";
    m.lossExpected = "the pre-training heads' losses";
    const uint64_t S = s.sequence, H = s.hidden, N = s.embeddingSerialization;
    // Packed rows carry each token's sequence id (0 for padding) in place of the padding mask.
    for (const char* name : {"input_ids", "token_type_ids", "position_ids", s.packing ? "sequence_ids" : "attention_mask"})
        m.inputs.push_back({name, {S}, true, false, "sequences", std::nullopt});
    if (task == BertTask::Pretraining)
        for (const char* name : {"masked_lm_positions", "masked_lm_labels"})
            m.inputs.push_back({name, {s.maxPredictions}, true, false, "labels", std::nullopt});
    if (task == BertTask::Pretraining)
        m.inputs.push_back({"next_sentence_labels", s.packing ? std::vector<uint64_t>{s.packing->maxPerRow} : std::vector<uint64_t>{},
                            true, false, "labels", std::nullopt});

    // Embedding: the word table in N vocabulary parts, looked up one after the other and summed.
    ModelWriter w{m, "Embedding"};
    std::vector<std::string> wordParts;
    std::string x;
    for (uint64_t p = 0; p < N; ++p) {
        const std::string name = N > 1 ? fmt::format("embedding.word.part{}", p) : "embedding.word";
        wordParts.push_back(w.add(embedding(name, "input_ids", s.paddedVocab() / N, H)));
        x = x.empty() ? name : w.add(name + ".sum", LayerKind::Add, {x, name});
    }
    x = w.add("embedding.add_position", LayerKind::Add,
              {x, w.add(embedding("embedding.position", "position_ids", s.maxPositions, H))});
    x = w.add("embedding.add_token_type", LayerKind::Add,
              {x, w.add(embedding("embedding.token_type", "token_type_ids", s.typeVocab, H))});
    x = w.add("embedding.layer_norm", LayerKind::LayerNorm, {x});
    // Built once, on the embedding's IPU; pipelines relay it to every layer's stage.
    const std::string mask = s.packing ? w.add("attention_mask", LayerKind::AttentionMask, {"sequence_ids"}) : std::string();

    for (uint64_t l = 0; l < s.layers; ++l) {
        w.block = fmt::format("L{}", l);
        x = encoderLayer(w, s, fmt::format("layer{}", l), x, mask);
    }
    w.block = "Heads";
    if (task == BertTask::Squad) {
        m.outputs = {w.add(bertLinear("squad.span", x, 2))};
        return m;
    }
    pretrainingHeads(w, s, wordParts, x);
    return m;
}

uint64_t parameterCount(const Graph& g)
{
    uint64_t n = 0;
    for (const auto& t : g.tensors)
        if (t.role == TensorRole::Weight)
            n += t.elements();
    return n;
}

namespace {

/** `layers_per_ipu` as stages: the embedding and the first layers on IPU 0, then each IPU's
 *  layers in order, the heads on `heads_ipu` (a stage of their own unless that IPU holds the
 *  last layers). */
std::vector<Stage> stagesFromLayers(const BertSpec& spec, const SystemParams& system, const Diagnostics& diag)
{
    const StrategySpec& st = spec.options.strategy;
    const std::vector<uint64_t>& perIpu = spec.layersPerIpu;
    const std::string ptr = "/workload/strategy/layers_per_ipu";
    if (st.stages || st.blockIpus)
        diag.fail(ptr, "expected either layers_per_ipu or stages/block_ipus, not both");
    if (st.kind != StrategyKind::Pipelined && st.kind != StrategyKind::Sharded)
        diag.fail(ptr, fmt::format("expected strategy kind \"pipelined\" or \"sharded\" with layers_per_ipu, found \"{}\"",
                                   st.kind == StrategyKind::Single ? "single" : "phased"));
    const uint64_t total = std::accumulate(perIpu.begin(), perIpu.end(), uint64_t(0));
    if (total != spec.shape.layers)
        diag.fail(ptr, fmt::format("expected layers adding up to the model's {}, found {} ({})", spec.shape.layers, total,
                                   fmt::join(perIpu, ", ")));
    if (perIpu.size() > system.numIpus)
        diag.fail(ptr, fmt::format("expected at most the system's {} IPUs, found {}", system.numIpus, perIpu.size()));
    uint32_t lastIpu = 0;
    for (uint32_t i = 0; i < perIpu.size(); ++i)
        if (perIpu[i] > 0)
            lastIpu = i;
    const uint32_t headsIpu = spec.headsIpu ? *spec.headsIpu : spec.task == BertTask::Pretraining ? 0 : lastIpu;
    if (headsIpu >= perIpu.size())
        diag.fail("/workload/strategy/heads_ipu", fmt::format("expected one of the {} IPUs of layers_per_ipu, found {}", perIpu.size(), headsIpu));
    std::vector<Stage> stages;
    uint64_t layer = 0;
    uint32_t previous = 0;
    for (uint32_t i = 0; i < perIpu.size(); ++i) {
        std::vector<std::string> blocks;
        if (i == 0)
            blocks.push_back("Embedding");
        for (uint64_t n = 0; n < perIpu[i]; ++n)
            blocks.push_back(fmt::format("L{}", layer++));
        if (blocks.empty())
            continue;
        if (i > 0 && system.topology.links(previous, i) == 0)
            diag.fail(ptr, fmt::format("IPU {} has no IPU-Link to IPU {}, which holds the layers before it", i, previous));
        stages.push_back({blocks, i});
        previous = i;
    }
    if (headsIpu != lastIpu && system.topology.links(lastIpu, headsIpu) == 0)
        diag.fail("/workload/strategy/heads_ipu", fmt::format("IPU {} has no IPU-Link to IPU {}, which holds the last layers", headsIpu, lastIpu));
    stages.push_back({{"Heads"}, headsIpu});
    return stages;
}

/** PopART outlines the identical encoder layers: one compiled layer, called per layer. */
std::string outlineKey(const std::string& step)
{
    if (step.rfind("layer", 0) != 0)
        return std::string();
    std::size_t i = 5;
    while (i < step.size() && std::isdigit(static_cast<unsigned char>(step[i])))
        ++i;
    return i > 5 ? "layer*" + step.substr(i) : std::string();
}

Placement bertPlacement(const BertSpec& spec, const std::vector<std::string>& blocks, const SystemParams& system,
                        const Diagnostics& diag)
{
    if (spec.layersPerIpu.empty())
        return resolvePlacement(spec.options.strategy, blocks, system, diag);
    StrategySpec staged = spec.options.strategy;
    staged.stages = stagesFromLayers(spec, system, diag);
    return resolvePlacement(staged, blocks, system, diag);
}

} // namespace

CompiledSchedule compileBert(const BertSpec& spec, const SystemParams& system, const Diagnostics& diag)
{
    ModelCompileChoices choices;
    choices.withLoss = spec.task == BertTask::Pretraining; // its losses are its outputs, in inference too
    choices.place = [&](const std::vector<std::string>& blocks, const ModelGraphInfo&) {
        return bertPlacement(spec, blocks, system, diag);
    };
    choices.outline = outlineKey;
    CompiledSchedule compiled = compileModel(bertModel(spec.shape, spec.task), spec.options, spec.optimizer,
                                             spec.availableMemoryProportion, choices, system, diag);
    compiled.schedule.sampleKind = spec.shape.packing ? "rows" : "sequences";
    if (spec.shape.packing)
        compiled.schedule.sequencesPerSample = spec.shape.packing->averagePerRow;
    return compiled;
}

} // namespace ipusim
