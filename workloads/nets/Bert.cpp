// SPDX-License-Identifier: MIT
#include "workloads/nets/Bert.hpp"

#include "workloads/strategies/CompileGraph.hpp"

#include <fmt/format.h>

#include <cctype>
#include <numeric>

namespace ipusim {

namespace {

/** Builds ops into a graph with the model's precisions. */
struct Builder
{
    Graph& g;
    Precision type, partials;

    int tensor(const std::string& name, std::vector<uint64_t> shape, TensorRole role = TensorRole::Activation)
    {
        return g.addTensor(name, std::move(shape), type, role);
    }
    /** y = x W^T + b, x of `rows` x `in`: a 1x1 convolution over the rows, then the bias. */
    int linear(const std::string& name, int x, uint64_t rows, uint64_t in, uint64_t out, int weight = -1, bool bias = true)
    {
        if (weight < 0)
            weight = tensor(name + ".weight", {out, in}, TensorRole::Weight);
        const int y = tensor(name + ".out", {rows, out});
        Op& op = g.addOp(name, OpKind::Conv, {x, weight}, {y});
        op.geometry = {rows, in, 1, 1, out, 1, 1};
        op.conv = forwardProblem(op.geometry, type, partials);
        if (!bias)
            return y;
        const int b = tensor(name + ".bias", {out}, TensorRole::Weight);
        const int yb = tensor(name + ".biased", {rows, out});
        g.addOp(name + ".bias_add", OpKind::BiasAdd, {y, b}, {yb}).channels = out;
        return yb;
    }
    int unary(const std::string& name, OpKind kind, int x, uint64_t rowLength = 1)
    {
        const int y = tensor(name + ".out", g.tensor(x).shape);
        g.addOp(name, kind, {x}, {y}).channels = rowLength;
        return y;
    }
    int add(const std::string& name, int a, int b)
    {
        const int y = tensor(name + ".out", g.tensor(a).shape);
        g.addOp(name, OpKind::Add, {a, b}, {y});
        return y;
    }
    int layerNorm(const std::string& name, int x, uint64_t hidden)
    {
        const int gamma = tensor(name + ".gamma", {hidden}, TensorRole::Weight);
        const int beta = tensor(name + ".beta", {hidden}, TensorRole::Weight);
        const int y = tensor(name + ".out", g.tensor(x).shape);
        g.addOp(name, OpKind::LayerNorm, {x, gamma, beta}, {y}).channels = hidden;
        return y;
    }
    /** Rows of `table` picked by `indices` (or a fixed slice of `rows` rows without them). */
    int gather(const std::string& name, int table, int indices, uint64_t rows, uint64_t width)
    {
        const int y = tensor(name + ".out", {rows, width});
        std::vector<int> in{table};
        if (indices >= 0)
            in.push_back(indices);
        Op& op = g.addOp(name, OpKind::Gather, in, {y});
        op.rows = rows;
        op.channels = width;
        return y;
    }
    int batchMatMul(const std::string& name, int x, int y, uint64_t groups, uint64_t M, uint64_t K, uint64_t N,
                    std::vector<uint64_t> shape)
    {
        const int z = tensor(name + ".out", std::move(shape));
        g.addOp(name, OpKind::BatchMatMul, {x, y}, {z}).conv = batchMatMulProblem(groups, M, K, N, type, partials);
        return z;
    }
};

int input(Graph& g, const std::string& name, std::vector<uint64_t> shape, TensorRole role = TensorRole::Input)
{
    return g.addTensor(name, std::move(shape), Precision::FP32, role); // int32 ids: 4 bytes each
}

} // namespace

Graph bertForward(const BertShape& s, uint64_t B, Precision type, Precision partials, BertTask task, BertTensors& t)
{
    Graph g;
    Builder b{g, type, partials};
    const uint64_t S = s.sequence, H = s.hidden, N = s.embeddingSerialization, rows = B * S;
    g.blocks.push_back("Embedding");
    for (uint64_t l = 0; l < s.layers; ++l)
        g.blocks.push_back(fmt::format("L{}", l));
    g.blocks.push_back("Heads");

    // Embedding: the word table in N vocabulary parts, looked up one after the other and summed.
    g.currentBlock = "Embedding";
    const int ids = input(g, "input_ids", {B, S});
    const int types = input(g, "token_type_ids", {B, S});
    const int positions = input(g, "position_ids", {B, S});
    const int mask = input(g, "attention_mask", {B, S});
    g.addOp("host.load.sequences", OpKind::HostLoad, {}, {ids, types, positions, mask});
    std::vector<int> wordParts;
    int x = -1;
    for (uint64_t p = 0; p < N; ++p) {
        const std::string name = N > 1 ? fmt::format("embedding.word.part{}", p) : "embedding.word";
        wordParts.push_back(b.tensor(name, {s.paddedVocab() / N, H}, TensorRole::Weight));
        const int e = b.gather(name + ".lookup", wordParts.back(), ids, rows, H);
        x = x < 0 ? e : b.add(name + ".sum", x, e);
    }
    const int posTable = b.tensor("embedding.position", {s.maxPositions, H}, TensorRole::Weight);
    const int typeTable = b.tensor("embedding.token_type", {s.typeVocab, H}, TensorRole::Weight);
    x = b.add("embedding.add_position", x, b.gather("embedding.position.lookup", posTable, positions, rows, H));
    x = b.add("embedding.add_token_type", x, b.gather("embedding.token_type.lookup", typeTable, types, rows, H));
    x = b.layerNorm("embedding.layer_norm", x, H);

    const uint64_t heads = s.heads, d = s.headSize();
    for (uint64_t l = 0; l < s.layers; ++l) {
        g.currentBlock = fmt::format("L{}", l);
        const std::string L = fmt::format("layer{}", l);
        const int q = b.linear(L + ".attention.query", x, rows, H, H);
        const int k = b.linear(L + ".attention.key", x, rows, H, H);
        const int v = b.linear(L + ".attention.value", x, rows, H, H);
        // Per sequence and head: scores = Q K^T (S x d times d x S), context = P V.
        const int scores = b.batchMatMul(L + ".attention.scores", q, k, B * heads, S, d, S, {B, heads, S, S});
        const int probs = b.unary(L + ".attention.softmax", OpKind::Softmax, scores, S);
        g.ops.back().attentionScaleMask = true;
        const int context = b.batchMatMul(L + ".attention.context", probs, v, B * heads, S, S, d, {rows, H});
        const int attn = b.linear(L + ".attention.output", context, rows, H, H);
        const int h = b.layerNorm(L + ".attention.layer_norm", b.add(L + ".attention.residual", attn, x), H);
        const int f = b.unary(L + ".ffn.gelu", OpKind::Gelu, b.linear(L + ".ffn.intermediate", h, rows, H, s.ffn));
        const int o = b.linear(L + ".ffn.output", f, rows, s.ffn, H);
        x = b.layerNorm(L + ".ffn.layer_norm", b.add(L + ".ffn.residual", o, h), H);
    }

    g.currentBlock = "Heads";
    if (task == BertTask::Squad) {
        const int logits = b.linear("squad.span", x, rows, H, 2);
        t.outputs = {logits};
        return g;
    }
    const uint64_t P = s.maxPredictions;
    const int maskedPositions = input(g, "masked_lm_positions", {B, P});
    const int mlmLabels = input(g, "masked_lm_labels", {B, P}, TensorRole::Label);
    const int nspLabels = input(g, "next_sentence_labels", {B}, TensorRole::Label);
    g.addOp("host.load.labels", OpKind::HostLoad, {}, {maskedPositions, mlmLabels, nspLabels});
    // MLM: the masked positions' rows, a transform, then the tied word embedding as projection.
    int m = b.gather("mlm.gather", x, maskedPositions, B * P, H);
    m = b.unary("mlm.transform.gelu", OpKind::Gelu, b.linear("mlm.transform", m, B * P, H, H));
    m = b.layerNorm("mlm.transform.layer_norm", m, H);
    std::vector<int> lossInputs;
    for (uint64_t p = 0; p < N; ++p) {
        const std::string name = N > 1 ? fmt::format("mlm.decoder.part{}", p) : "mlm.decoder";
        lossInputs.push_back(b.linear(name, m, B * P, H, s.paddedVocab() / N, wordParts[p]));
    }
    lossInputs.push_back(mlmLabels);
    const int mlmLoss = g.addTensor("mlm.loss", {1}, Precision::FP32, TensorRole::Output);
    g.addOp("mlm.loss", OpKind::SoftmaxCrossEntropy, lossInputs, {mlmLoss}).channels = s.paddedVocab() / N;
    // NSP: the first token of each sequence, pooled (dense + tanh), then two classes.
    const int first = b.gather("nsp.first_token", x, -1, B, H);
    const int pooled = b.unary("nsp.pooler.tanh", OpKind::Tanh, b.linear("nsp.pooler", first, B, H, H));
    const int nsp = b.linear("nsp.classifier", pooled, B, H, 2);
    const int nspLoss = g.addTensor("nsp.loss", {1}, Precision::FP32, TensorRole::Output);
    g.addOp("nsp.loss", OpKind::SoftmaxCrossEntropy, {nsp, nspLabels}, {nspLoss}).channels = 2;
    t.losses = {mlmLoss, nspLoss};
    t.outputs = {mlmLoss, nspLoss};
    return g;
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

Schedule compileBert(const BertSpec& spec, const SystemParams& system, const Diagnostics& diag)
{
    const WorkloadOptions& w = spec.options;
    CompileOptions opt = compileOptionsOf(w);
    BertTensors t;
    ModelGraph m;
    m.graph = bertForward(spec.shape, w.microBatch, opt.activations, opt.partials, spec.task, t);
    m.forwardOps = m.graph.ops.size();
    opt.out.tensors = t.outputs;
    opt.out.block = "Heads";
    opt.outline = outlineKey;
    const Placement placement = bertPlacement(spec, m.graph.blocks, system, diag);
    opt.availableMemoryProportion = memoryProportions(spec.availableMemoryProportion, placement, diag);
    if (opt.train)
        m.training = addTraining(m.graph, trainingOptionsOf(opt, placement, t.losses, spec.optimizer));
    Schedule sched = compileGraph(m, system, placement, opt, diag);
    sched.sampleKind = "sequences";
    return sched;
}

} // namespace ipusim
