// SPDX-License-Identifier: MIT
// Graph workloads: models described op by op, built into the compiler's Graph. FLOPs, weights
// and shapes by hand; the tutorial's CNN as a graph is the MNIST workload; every bad input.
#include "Simulate.hpp"
#include "models/common/CeilDiv.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/config/ExperimentSpec.hpp"
#include "models/timing/VertexCosts.hpp"
#include "sim/engine/Experiment.hpp"
#include "workloads/graph/ModelBuilder.hpp"
#include "workloads/lowering/ConvPlanner.hpp"
#include "workloads/nets/GraphSpec.hpp"
#include "workloads/nets/Mnist.hpp"
#include "workloads/training/Training.hpp"

#include <catch2/catch.hpp>

#include <set>

using namespace ipusim;
using json = nlohmann::json;

namespace {

using test::kRoot;

using Throwing = test::ThrowingDiagnostics;

json graphConfig(const json& graph, const json& workload = json::object())
{
    json w = {{"kind", "graph"}, {"mode", "infer"}, {"micro_batch", 4}, {"graph", graph}};
    w.update(workload);
    return {{"system", {{"base", "hardware/mk2.json"}}}, {"workload", w}};
}

Experiment build(const json& doc) { return buildExperiment(config::loadConfig(doc, kRoot + "/configs/g.json")); }

std::string errorOf(const json& doc) { return test::configErrorOf(doc, kRoot + "/configs/g.json"); }

json op(const std::string& name, const std::string& kind, std::vector<std::string> inputs, const json& attrs = json::object())
{
    json o = {{"name", name}, {"op", kind}, {"inputs", inputs}};
    o.update(attrs);
    return o;
}

json mlp()
{
    return {{"inputs", json::array({{{"name", "x"}, {"shape", {784}}}})},
            {"ops", json::array({op("fc1", "linear", {"x"}, {{"out_features", 1024}}), op("relu1", "relu", {"fc1"}),
                                 op("fc2", "linear", {"relu1"}, {{"out_features", 10}, {"bias", false}})})},
            {"outputs", {"fc2"}}};
}

uint64_t bytesOfKind(const Schedule& s, const std::string& kind, std::size_t program = 0)
{
    uint64_t n = 0;
    for (const auto& t : s.programs.at(program).tensors)
        if (t.kind == kind)
            for (const auto& r : t.bytes.runs())
                n += uint64_t(r.count) * r.value;
    return n;
}

} // namespace

TEST_CASE("Graph workload: an MLP's FLOPs and weights by hand", "[graph]")
{
    const Experiment e = build(graphConfig(mlp(), {{"precision", "fp16"}, {"partials", "fp16"}}));
    // 2 x (784 x 1024 + 1024 x 10) FLOPs per sample forward.
    CHECK(e.schedule.modelFlopsPerSample == 2.0 * (784 * 1024 + 1024 * 10));
    // fp16 weights: 1024 x 784 + a 1024 bias + 10 x 1024 without a bias.
    CHECK(bytesOfKind(e.schedule, "weight") == 2 * (1024 * 784 + 1024 + 10 * 1024));
    CHECK(e.schedule.samplesPerHostCall == 4);
    // 8-bit input: 1 byte per element crosses from the host, cast to fp16 on the IPU.
    CHECK(bytesOfKind(e.schedule, "input") == 4 * 784 * 2);
    json eightBit = mlp();
    eightBit["inputs"][0]["dtype"] = "uint8";
    CHECK(bytesOfKind(build(graphConfig(eightBit, {{"precision", "fp16"}, {"partials", "fp16"}})).schedule, "input") == 4 * 784 * (1 + 2));
    // Training adds a backward pass twice the forward's matmuls (no data gradient into x).
    json graph = mlp();
    graph["inputs"].push_back({{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}});
    graph["ops"].push_back(op("loss", "cross_entropy", {"fc2", "y"}));
    const Experiment t = build(graphConfig(graph, {{"mode", "train"}}));
    CHECK(t.schedule.modelFlopsPerSample == 2.0 * (784 * 1024 + 1024 * 10) + 2.0 * (784 * 1024 + 2 * 1024 * 10));
}

TEST_CASE("Graph workload: padded convolutions keep their size, views are free", "[graph]")
{
    ModelSpec m;
    m.inputs = {{"img", {3, 8, 8}, false, false, "", std::nullopt}};
    LayerSpec c;
    c.name = "conv";
    c.kind = LayerKind::Conv2d;
    c.inputs = {"img"};
    c.features = 16;
    c.kernel = {3, 3};
    c.padding = {1, 1};
    LayerSpec f;
    f.name = "flat";
    f.kind = LayerKind::Flatten;
    f.inputs = {"conv"};
    LayerSpec r;
    r.name = "back";
    r.kind = LayerKind::Reshape;
    r.inputs = {"flat"};
    r.shape = {16, -1, 8};
    LayerSpec relu;
    relu.name = "relu";
    relu.inputs = {"back"};
    m.layers = {c, f, r, relu};
    m.outputs = {"relu"};
    ModelGraphInfo info;
    const Graph g = buildModelGraph(m, 2, Precision::FP32, Precision::FP32, false, Throwing(), info);
    // host load, conv, bias add, relu: the views add no op and no tensor.
    REQUIRE(g.ops.size() == 4);
    const Op& conv = g.ops[1];
    CHECK(conv.conv.positions == 2 * 8 * 8);
    CHECK(conv.conv.reduction == 3);
    CHECK(conv.conv.inWidth == 10); // the padded row a tile's halo spans
    CHECK(g.tensor(conv.outputs[0]).shape == std::vector<uint64_t>{2, 16, 8, 8});
    CHECK(g.tensor(g.ops[3].outputs[0]).shape == std::vector<uint64_t>{2, 16, 8, 8});
    // The data gradient produces the unpadded input positions from a (3 - 1 - 1)-padded dY.
    const ConvProblem d = dataGradProblem(conv.geometry, Precision::FP32, Precision::FP32);
    CHECK(d.positions == 2 * 8 * 8);
    CHECK(d.inWidth == 8 + 2 * 1);
    CHECK(info.outputs == std::vector<int>{g.ops[3].outputs[0]});
}

LayerSpec convLayer(const std::string& name, const std::string& input, uint64_t out, uint32_t kernel, uint32_t stride,
                    uint32_t padding, uint32_t dilation = 1, uint32_t groups = 1)
{
    LayerSpec c;
    c.name = name;
    c.kind = LayerKind::Conv2d;
    c.inputs = {input};
    c.features = out;
    c.kernel = {kernel, kernel};
    c.stride = {stride, stride};
    c.padding = {padding, padding};
    c.dilation = {dilation, dilation};
    c.groups = groups;
    c.bias = false;
    return c;
}

TEST_CASE("Graph workload: strided, dilated and grouped convolutions by hand", "[graph]")
{
    ModelSpec m;
    m.inputs = {{"img", {3, 8, 8}, false, false, "", std::nullopt}};
    m.layers = {convLayer("s2", "img", 16, 3, 2, 1), convLayer("down", "img", 16, 1, 2, 0),
                convLayer("dil", "img", 6, 3, 1, 2, 2), convLayer("grp", "img", 6, 3, 1, 1, 1, 3)};
    m.outputs = {"s2", "down", "dil", "grp"};
    ModelGraphInfo info;
    const Graph g = buildModelGraph(m, 2, Precision::FP16, Precision::FP16, false, Throwing(), info);
    auto conv = [&](const std::string& name) -> const Op& {
        return *std::find_if(g.ops.begin(), g.ops.end(), [&](const Op& o) { return o.name == name; });
    };
    // 3x3 stride 2 pad 1 on 8 x 8: (8 + 2 - 3) / 2 + 1 = 4.
    const Op& s2 = conv("s2");
    CHECK(g.tensor(s2.outputs[0]).shape == std::vector<uint64_t>{2, 16, 4, 4});
    CHECK(s2.conv.macs() == 2 * 4 * 4 * 3 * 9 * 16);
    // Its data gradient: ceil(3 / 2) = 2 taps per dimension on 2 x 4 x 4 x 9 / 4 = 72 positions,
    // the forward's multiply-adds, filling all 2 x 8 x 8 input positions.
    const ConvProblem d = dataGradProblem(s2.geometry, Precision::FP16, Precision::FP16);
    CHECK(d.kernelHeight == 2);
    CHECK(d.kernelWidth == 2);
    CHECK(d.positions == 72);
    CHECK(d.outputPositions == 2 * 8 * 8);
    CHECK(d.macs() == s2.conv.macs());
    const ConvProblem w = weightGradProblem(s2.geometry, Precision::FP16, Precision::FP16);
    CHECK(w.positions == 3 * 9);
    CHECK(w.reduction == 2 * 4 * 4);
    CHECK(w.macs() == s2.conv.macs());
    // 1x1 stride 2: one tap, on the 2 x 4 x 4 positions it reaches.
    const ConvProblem dd = dataGradProblem(conv("down").geometry, Precision::FP16, Precision::FP16);
    CHECK(dd.kernelHeight * dd.kernelWidth == 1);
    CHECK(dd.positions == 32);
    CHECK(dd.outputPositions == 128);
    // 3x3 dilation 2 spans 5: (8 + 4 - 5) + 1 = 8; the taps stay 9.
    const Op& dil = conv("dil");
    CHECK(g.tensor(dil.outputs[0]).shape == std::vector<uint64_t>{2, 6, 8, 8});
    CHECK(dil.conv.macs() == 2 * 8 * 8 * 3 * 9 * 6);
    // 3 groups of 1 input channel into 2 outputs each; the weight is [6, 1, 3, 3].
    const Op& grp = conv("grp");
    CHECK(grp.conv.groups == 3);
    CHECK(grp.conv.reduction == 1);
    CHECK(grp.conv.outChans == 2);
    CHECK(grp.conv.macs() == 2 * 8 * 8 * 9 * 6);
    CHECK(g.tensor(grp.inputs[1]).shape == std::vector<uint64_t>{6, 1, 3, 3});
}

/** A residual CNN with every ResNet op: strided convolutions, batch norm, an overlapping padded
 *  max pool, a residual add, global average pooling, dropout and a classifier. */
json residualCnn()
{
    return {{"inputs", json::array({{{"name", "img"}, {"shape", {3, 32, 32}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
            {"ops", json::array({op("stem", "conv2d", {"img"}, {{"out_channels", 16}, {"kernel_size", 7}, {"stride", 2}, {"padding", 3}, {"bias", false}}),
                                 op("bn0", "batch_norm", {"stem"}), op("r0", "relu", {"bn0"}),
                                 op("pool", "max_pool2d", {"r0"}, {{"kernel_size", 3}, {"stride", 2}, {"padding", 1}}),
                                 op("c1", "conv2d", {"pool"}, {{"out_channels", 32}, {"kernel_size", 3}, {"stride", 2}, {"padding", 1}, {"bias", false}}),
                                 op("bn1", "batch_norm", {"c1"}), op("gn", "group_norm", {"bn1"}, {{"num_groups", 4}}),
                                 op("down", "conv2d", {"pool"}, {{"out_channels", 32}, {"kernel_size", 1}, {"stride", 2}, {"bias", false}}),
                                 op("sum", "add", {"gn", "down"}), op("r1", "relu", {"sum"}), op("sig", "sigmoid", {"r1"}),
                                 op("ex", "exp", {"sig"}), op("avg", "avg_pool2d", {"ex"}, {{"kernel_size", 2}}),
                                 op("gap", "global_avg_pool", {"avg"}), op("flat", "flatten", {"gap"}), op("drop", "dropout", {"flat"}),
                                 op("fc", "linear", {"drop"}, {{"out_features", 10}}), op("loss", "cross_entropy", {"fc", "y"})})},
            {"outputs", {"loss"}}};
}

TEST_CASE("Graph workload: a residual CNN's shapes, parameters, buffers and FLOPs by hand", "[graph]")
{
    const json train = {{"mode", "train"}, {"micro_batch", 2}, {"precision", "fp16"}, {"partials", "fp16"}, {"optimizer", "sgd"}};
    const Experiment e = build(graphConfig(residualCnn(), train));
    // Parameters: stem 16 x 3 x 7 x 7, bn0 2 x 16, c1 32 x 16 x 3 x 3, bn1 and gn 2 x 32 each, down 32 x 16,
    // fc 32 x 10 + 10; batch norm running statistics are buffers, not parameters.
    const uint64_t params = 2352 + 32 + 4608 + 64 + 64 + 512 + 330; // with group norm's 2 x 32
    CHECK(bytesOfKind(e.schedule, "weight") == 2 * params);
    CHECK(bytesOfKind(e.schedule, "buffer") == 2 * (2 * 16 + 2 * 32));
    // SGD keeps an fp32 velocity per parameter; without momentum none; LARS as SGD; AdamW two.
    CHECK(bytesOfKind(e.schedule, "optimizer state") == 4 * params);
    json noMomentum = train;
    noMomentum["momentum"] = 0;
    CHECK(bytesOfKind(build(graphConfig(residualCnn(), noMomentum)).schedule, "optimizer state") == 0);
    json lars = train;
    lars["optimizer"] = "lars";
    CHECK(bytesOfKind(build(graphConfig(residualCnn(), lars)).schedule, "optimizer state") == 4 * params);
    json adamw = train;
    adamw["optimizer"] = "adamw";
    CHECK(bytesOfKind(build(graphConfig(residualCnn(), adamw)).schedule, "optimizer state") == 8 * params);
    // Multiply-adds per sample: stem 16 x 16 positions x 2352, c1 4 x 4 x 4608, down 4 x 4 x 512,
    // fc 320. Training adds every weight gradient and the data gradients of all but the stem
    // (its input is the image), each with the forward's multiply-adds.
    const double forward = 256 * 2352 + 16 * 4608 + 16 * 512 + 320;
    CHECK(e.schedule.modelFlopsPerSample == 2 * (2 * forward + 16 * 4608 + 16 * 512 + 320));

    ModelGraphInfo info;
    const ExperimentSpec decoded = decodeExperiment(config::loadConfig(graphConfig(residualCnn()), kRoot + "/configs/g.json"));
    const ModelSpec& spec = std::get<GraphSpec>(decoded.workload).model;
    const Graph g = buildModelGraph(spec, 2, Precision::FP16, Precision::FP16, false, Throwing(), info);
    auto shape = [&](const std::string& name) {
        for (const auto& t : g.tensors)
            if (t.name == name)
                return t.shape;
        return std::vector<uint64_t>{};
    };
    CHECK(shape("stem.out") == std::vector<uint64_t>{2, 16, 16, 16});
    CHECK(shape("pool.out") == std::vector<uint64_t>{2, 16, 8, 8}); // (16 + 2 - 3) / 2 + 1
    CHECK(shape("c1.out") == std::vector<uint64_t>{2, 32, 4, 4});
    CHECK(shape("avg.out") == std::vector<uint64_t>{2, 32, 2, 2});
    CHECK(shape("gap.out") == std::vector<uint64_t>{2, 32, 1, 1});
    // Inference: dropout is a view and batch norm uses the running statistics.
    CHECK(shape("drop.out").empty());
    for (const auto& o : g.ops)
        if (o.kind == OpKind::BatchNorm)
            CHECK_FALSE(o.training);
}

TEST_CASE("Graph workload: every op of a residual CNN runs on tiles for cycles, forward and backward", "[graph]")
{
    for (const char* optimizer : {"sgd", "lars"}) {
        INFO(optimizer);
        const json train = {{"mode", "train"}, {"micro_batch", 2}, {"precision", "fp16"}, {"partials", "fp16"}, {"optimizer", optimizer}};
        const Experiment e = build(graphConfig(residualCnn(), train));
        std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
        for (const char* name : {"stem", "bn0.stats.local", "bn0.stats", "bn0.inv_std_dev", "bn0", "pool", "c1", "bn1", "gn", "gn.grad",
                             "gn.gamma_grad", "sum",
                                 "r1", "sig", "ex", "avg", "gap", "drop", "fc", "drop.grad", "gap.grad", "avg.grad", "ex.grad",
                                 "sig.grad", "r1.grad", "bn1.grad.params_grad.local", "bn1.grad", "c1.dgrad", "c1.wgrad",
                                 "down.dgrad", "pool.grad", "bn0.grad", "stem.wgrad"}) {
            INFO(name);
            CHECK(cycles[name] > 0);
        }
        CHECK(cycles.count("stem.dgrad") == 0); // no gradient into the image
        const std::string update = std::string("c1.weight.") + optimizer;
        CHECK(cycles[update] > 0);
        CHECK(cycles.count(update + ".trust_ratio") == (std::string(optimizer) == "lars" ? 1u : 0u));
    }
}

/** Every op kind the residual CNN leaves out, in one small attention-like model. */
json everyOtherOp()
{
    return {{"inputs", json::array({{{"name", "ids"}, {"shape", {8}}, {"dtype", "int32"}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
            {"ops", json::array({op("emb", "embedding", {"ids"}, {{"num_embeddings", 100}, {"embedding_dim", 16}}), op("ln", "layer_norm", {"emb"}),
                                 op("fc", "linear", {"ln"}, {{"out_features", 16}}), op("g", "gelu", {"fc"}), op("t", "tanh", {"g"}),
                                 op("s", "sigmoid", {"t"}), op("e", "exp", {"s"}), op("d", "sub", {"e", "s"}), op("m", "mul", {"d", "t"}),
                                 op("q", "div", {"m", "e"}), op("sc", "scale", {"q"}, {{"factor", 0.5}}),
                                 op("kt", "transpose", {"sc"}, {{"dims", {0, 2, 1}}}), op("scores", "matmul", {"sc", "kt"}),
                                 op("p", "softmax", {"scores"}), op("ctx", "matmul", {"p", "sc"}), op("r", "reshape", {"ctx"}, {{"shape", {128}}}),
                                 op("out", "linear", {"r"}, {{"out_features", 10}}), op("loss", "cross_entropy", {"out", "y"})})},
            {"outputs", {"loss"}}};
}

TEST_CASE("Graph workload: every other op kind's FLOPs, parameters and work by hand", "[graph]")
{
    const Experiment e = build(graphConfig(everyOtherOp(), {{"mode", "train"}, {"micro_batch", 2}}));
    // Parameters: the table 100 x 16, LayerNorm 2 x 16, fc 16 x 16 + 16, out 128 x 10 + 10.
    const uint64_t params = 1600 + 32 + 272 + 1290;
    CHECK(bytesOfKind(e.schedule, "weight") == 4 * params);
    CHECK(bytesOfKind(e.schedule, "optimizer state") == 8 * params); // AdamW's two moments
    // Multiply-adds per sample: fc 8 x 16 x 16, scores 8 x 16 x 8, context 8 x 8 x 16, out 128 x 10.
    // Backward: a data and a weight gradient for each linear layer, both operands' gradients for
    // each matmul: twice the forward's.
    const double forward = 2048 + 1024 + 1024 + 1280;
    CHECK(e.schedule.modelFlopsPerSample == 2 * (forward + 2 * forward));
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    // The loss too: its 20 logits sit whole on the classifier's reduction tiles.
    for (const char* name : {"emb", "ln", "fc", "g", "t", "s", "e", "d", "m", "q", "sc", "scores", "p", "ctx", "out", "loss", "loss.grad",
                             "emb.grad", "ln.grad", "fc.wgrad", "fc.dgrad", "g.grad", "t.grad", "s.grad", "e.grad", "d.grad_rhs",
                             "m.grad_lhs", "m.grad_rhs", "q.grad_lhs", "q.grad_rhs", "sc.grad", "scores.grad_lhs", "scores.grad_rhs",
                             "p.grad", "ctx.grad_lhs", "ctx.grad_rhs", "out.wgrad", "out.dgrad"}) {
        INFO(name);
        CHECK(cycles[name] > 0);
    }
    // The views (transpose, reshape) are no steps.
    CHECK(cycles.count("kt") == 0);
    CHECK(cycles.count("r") == 0);
}

namespace {

/** The per-tile cycles of the compute step `name` of an experiment's first program. */
std::vector<uint64_t> tileCycles(const Experiment& e, const std::string& name)
{
    std::vector<uint64_t> cycles;
    forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
        if (const auto* c = std::get_if<ComputeStep>(&step.op); c && c->name == name)
            for (uint32_t t = 0; t < e.system.ipu.tiles; ++t)
                cycles.push_back(c->cycles.at(t));
    });
    return cycles;
}

} // namespace

TEST_CASE("Graph workload: a constant factor is popops' scalar broadcast in place", "[graph]")
{
    const Experiment e = build(graphConfig(everyOtherOp(), {{"mode", "train"}, {"micro_batch", 2}, {"precision", "fp32"}}));
    TileRuns<uint64_t> q;
    for (const auto& t : e.schedule.programs[0].tensors)
        if (t.name == "q.out")
            q = t.bytes;
    const std::vector<uint64_t> scale = tileCycles(e, "sc");
    uint64_t tiles = 0;
    for (uint32_t t = 0; t < scale.size(); ++t) {
        const uint64_t n = q.at(t) / 4;
        tiles += n > 0;
        INFO("tile " << t << ", " << n << " elements");
        // BroadcastScalar1DInPlace<MULTIPLY>: 11 + 6 x (20 + 2 a vector of the busiest worker)
        CHECK(scale[t] == (n ? 11 + 6 * (20 + 2 * (((n + 5) / 6 + 1) / 2)) : 0));
    }
    CHECK(tiles > 0);
    bool named = false;
    forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
        if (const auto* c = std::get_if<ComputeStep>(&step.op); c && c->name == "sc")
            named = c->vertexTypes == std::vector<std::string>{"BroadcastScalar1DInPlace<MULTIPLY>"};
    });
    CHECK(named);
}

TEST_CASE("Graph workload: reduce over the last dimensions sums runs and over middle ones strided, a mean's gradient scales and a sum's copies", "[graph]")
{
    // pre [B, 8, 16] (a linear layer, so gradients flow), reduced as `attrs` says, then the loss.
    const auto vertices = [](const json& attrs) {
        json ops = json::array({op("pre", "linear", {"x"}, {{"out_features", 16}})});
        json r = op("r", "reduce", {"pre"});
        r.update(attrs);
        ops.push_back(r);
        ops.push_back(op("f", "flatten", {"r"}));
        ops.push_back(op("loss", "cross_entropy", {"f", "y"}));
        const json graph = {{"inputs", {{{"name", "x"}, {"shape", {8, 16}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}}},
                            {"ops", ops},
                            {"outputs", {"loss"}}};
        const Experiment e = build(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 2}}));
        std::map<std::string, std::set<std::string>> found;
        forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
            if (const auto* c = std::get_if<ComputeStep>(&step.op); c && (c->name == "r" || c->name.rfind("r.", 0) == 0))
                found[c->name].insert(c->vertexTypes.begin(), c->vertexTypes.end());
        });
        return found;
    };
    // The mean of each row of 16: runs summed on each tile (ALL_REGIONS_CONTINUOUS), the partials
    // meet on the result's tiles; the gradient, 1 / 16 of the output's, scaled in place.
    const auto rows = vertices({{"dims", {2}}});
    CHECK(rows.at("r.local") == std::set<std::string>{"ReduceContinuous<ADD>"});
    CHECK(rows.at("r.grad") == std::set<std::string>{"BroadcastScalar1DInPlace<MULTIPLY>"});
    // The sum over the 8 rows of each of 16 columns: elements 16 apart, a strided reduce; the
    // gradient the output's copied into the broadcast shape.
    const auto columns = vertices({{"dims", {1}}, {"reduction", "sum"}, {"keepdim", true}});
    CHECK(columns.at("r.local") == std::set<std::string>{"ReduceStrided<ADD>"});
    CHECK(columns.at("r.grad") == std::set<std::string>{"Copy"});
    CHECK_THAT(errorOf(graphConfig({{"inputs", {{{"name", "x"}, {"shape", {8, 16}}}}},
                                    {"ops", {op("r", "reduce", {"x"}, {{"dims", {1, 3}}})}},
                                    {"outputs", {"r"}}})),
               Catch::Contains("/workload/graph/ops/0/dims: expected consecutive dimensions from 1 to 2 of [4, 8, 16] (0 is the batch), found [1, 3]"));
}

TEST_CASE("Graph workload: a pad fills a constant border and copies a reflection, its gradient adds a reflection's border back", "[graph]")
{
    // pre [B, 8, 16] (fp32, a linear layer so gradients flow) padded by 1 before and after
    // each dimension to [B, 10, 18]: 360 of 180 elements a sample in and out.
    const auto run = [](const std::string& mode) {
        const json graph = {{"inputs", {{{"name", "x"}, {"shape", {8, 16}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}}},
                            {"ops", {op("pre", "linear", {"x"}, {{"out_features", 16}}),
                                     op("p", "pad", {"pre"}, {{"pads", {{1, 1}, {1, 1}}}, {"mode", mode}}), op("f", "flatten", {"p"}),
                                     op("loss", "cross_entropy", {"f", "y"})}},
                            {"outputs", {"loss"}}};
        return build(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 2}, {"precision", "fp32"}}));
    };
    const auto received = [](const Experiment& e, const std::string& name) {
        uint64_t n = 0;
        forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
            if (const auto* x = std::get_if<ExchangeStep>(&step.op); x && x->name == name)
                for (const auto& r : x->bytes.runs())
                    n += uint64_t(r.count) * r.value.recv;
        });
        return n;
    };
    const auto vertices = [](const Experiment& e, const std::string& name) {
        std::set<std::string> v;
        forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
            if (const auto* c = std::get_if<ComputeStep>(&step.op); c && c->name == name)
                v.insert(c->vertexTypes.begin(), c->vertexTypes.end());
        });
        return v;
    };
    const uint64_t in = 2 * 8 * 16 * 4, out = 2 * 10 * 18 * 4; // bytes of the micro-batch
    const Experiment constant = run("constant");
    CHECK(vertices(constant, "p") == std::set<std::string>{"Copy", "Fill"});
    CHECK(received(constant, "p.in") == Approx(double(in)).epsilon(0.02)); // the interior, in whole bytes a tile
    CHECK(vertices(constant, "p.grad") == std::set<std::string>{"Copy"});
    CHECK(received(constant, "p.grad.in") == Approx(double(in)).epsilon(0.02));
    const Experiment reflect = run("reflect");
    CHECK(vertices(reflect, "p") == std::set<std::string>{"Copy"});
    CHECK(received(reflect, "p.in") == Approx(double(out)).epsilon(0.02)); // the border too, copied from the input
    CHECK(vertices(reflect, "p.grad") == std::set<std::string>{"Copy", "BinaryOp1D<ADD>"});
    CHECK(received(reflect, "p.grad.in") == Approx(double(out)).epsilon(0.02));
    CHECK_THAT(errorOf(graphConfig({{"inputs", {{{"name", "x"}, {"shape", {8, 16}}}}},
                                    {"ops", {op("p", "pad", {"x"}, {{"pads", {{8, 0}, {0, 0}}}, {"mode", "reflect"}})}},
                                    {"outputs", {"p"}}})),
               Catch::Contains("/workload/graph/ops/0/pads: expected a reflection of fewer than 8 elements in dimension 1 of [4, 8, 16], found [8, 0]"));
}

TEST_CASE("Graph workload: a matmul whose operand repeats over the other's leading dimensions (multi-query attention)", "[graph]")
{
    // q [B, 4, 8, 16] (four heads) times k^T [B, 1, 16, 8] (one head shared): B x 4 products of
    // 8 x 16 by 16 x 8; training sums k's gradient over the four heads it served.
    ModelSpec m;
    m.inputs = {{"q", {4, 8, 16}, false, false, "", std::nullopt}, {"k", {1, 16, 8}, false, false, "", std::nullopt},
                {"y", {}, true, false, "", std::nullopt}};
    LayerSpec q, k, mm, flat, loss;
    q.name = "qp", q.kind = LayerKind::Scale, q.inputs = {"q"};
    k.name = "kp", k.kind = LayerKind::Scale, k.inputs = {"k"};
    mm.name = "scores", mm.kind = LayerKind::MatMul, mm.inputs = {"qp", "kp"};
    flat.name = "f", flat.kind = LayerKind::Flatten, flat.inputs = {"scores"};
    loss.name = "loss", loss.kind = LayerKind::CrossEntropy, loss.inputs = {"f", "y"};
    m.layers = {q, k, mm, flat, loss};
    m.outputs = {"loss"};
    ModelGraphInfo info;
    Graph g = buildModelGraph(m, 2, Precision::FP16, Precision::FP32, true, Throwing(), info);
    const auto scores = std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.name == "scores"; });
    REQUIRE(scores != g.ops.end());
    CHECK(g.tensor(scores->outputs[0]).shape == std::vector<uint64_t>{2, 4, 8, 8});
    CHECK(scores->conv.macs() == 2 * 4 * 8 * 16 * 8);
    CHECK(scores->broadcast == 1);
    CHECK(scores->window == 4);
    TrainingOptions opt;
    opt.losses = info.losses;
    addTraining(g, opt);
    const auto sum = std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.name == "scores.grad_rhs.sum"; });
    REQUIRE(sum != g.ops.end());
    CHECK(sum->kind == OpKind::ReduceRepeats);
    CHECK(g.tensor(sum->inputs[0]).shape == std::vector<uint64_t>{2, 4, 16, 8}); // every head's
    CHECK(g.tensor(sum->outputs[0]).shape == std::vector<uint64_t>{2, 1, 16, 8});
    // Both operands repeating is not one matmul.
    m.inputs[0].shape = {1, 8, 16};
    m.inputs[1].shape = {4, 16, 8};
    m.inputs.push_back({"q2", {4, 1, 8, 16}, false, false, "", std::nullopt});
    m.inputs.push_back({"k2", {1, 4, 16, 8}, false, false, "", std::nullopt});
    m.layers[0].inputs = {"q2"};
    m.layers[1].inputs = {"k2"};
    CHECK_THROWS_WITH(buildModelGraph(m, 2, Precision::FP16, Precision::FP32, true, Throwing(), info),
                      Catch::Contains("expected [..., M, K] and [..., K, N] with the same leading dimensions, or one operand's 1 where the "
                                      "other's are not, found [2, 4, 1, 8, 16] and [2, 1, 4, 16, 8]"));
}

TEST_CASE("Graph workload: masked_fill selects by a mask broadcast over the tensor, its gradient by the same mask", "[graph]")
{
    // scores [B, 4, 8, 8] (a linear layer's output reshaped) filled where a [1, 1, 8, 8] buffer
    // mask says: popops' Select, forward and for the gradient, the mask repeated over the batch
    // and the four heads.
    const json graph = {{"inputs", {{{"name", "x"}, {"shape", {32, 8}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}}},
                        {"ops", {op("pre", "linear", {"x"}, {{"out_features", 8}}), op("r", "reshape", {"pre"}, {{"shape", {4, 8, 8}}}),
                                 {{"name", "mask"}, {"op", "parameter"}, {"shape", {1, 1, 8, 8}}, {"learned", false}},
                                 op("m", "masked_fill", {"r", "mask"}), op("f", "flatten", {"m"}), op("loss", "cross_entropy", {"f", "y"})}},
                        {"outputs", {"loss"}}};
    const Experiment e = build(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 2}}));
    std::map<std::string, std::vector<std::string>> found;
    forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
        if (const auto* c = std::get_if<ComputeStep>(&step.op); c && (c->name == "m" || c->name == "m.grad"))
            found[c->name] = c->vertexTypes;
    });
    CHECK(found.at("m") == std::vector<std::string>{"Select"});
    CHECK(found.at("m.grad") == std::vector<std::string>{"Select"});
    json big = graph;
    big["ops"][2]["shape"] = {1, 2, 4, 8, 8};
    CHECK_THAT(errorOf(graphConfig(big, {{"mode", "train"}, {"micro_batch", 2}})),
               Catch::Contains("/workload/graph/ops/3/inputs: expected operands of one shape, or one that broadcasts to the other's"));
}

TEST_CASE("Graph workload: comparisons make masks without gradients, where selects between two tensors", "[graph]")
{
    // keep = not(pre < a); w = where(keep, pre, a): relu-like, of two linear layers' outputs.
    const json graph = {{"inputs", {{{"name", "x"}, {"shape", {8, 16}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}}},
                        {"ops", {op("pre", "linear", {"x"}, {{"out_features", 16}}), op("a", "linear", {"x"}, {{"out_features", 16}}),
                                 op("cmp", "lt", {"pre", "a"}), op("keep", "logical_not", {"cmp"}), op("w", "where", {"keep", "pre", "a"}),
                                 op("f", "flatten", {"w"}), op("loss", "cross_entropy", {"f", "y"})}},
                        {"outputs", {"loss"}}};
    const Experiment e = build(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 2}, {"precision", "fp16"}}));
    std::map<std::string, std::vector<std::string>> found;
    forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
        if (const auto* c = std::get_if<ComputeStep>(&step.op))
            found[c->name] = c->vertexTypes;
    });
    CHECK(found.at("cmp") == std::vector<std::string>{"BinaryOp1D<LESS_THAN>"});
    CHECK(found.at("keep") == std::vector<std::string>{"UnaryOp1D<LOGICAL_NOT>"});
    CHECK(found.at("w") == std::vector<std::string>{"Select"});
    // dy goes to pre where the mask holds and to a elsewhere, each a select; none to the mask.
    CHECK(found.at("w.grad_x") == std::vector<std::string>{"Select"});
    CHECK(found.at("w.grad_y") == std::vector<std::string>{"Select"});
    CHECK_FALSE(found.count("cmp.grad"));
    CHECK_FALSE(found.count("keep.grad"));
    // Each runs where pre lives: n fp16 elements on a tile, m = ceil(n / 6) a worker.
    TileRuns<uint64_t> pre;
    for (const auto& t : e.schedule.programs[0].tensors)
        if (t.name == "pre.out")
            pre = t.bytes;
    const std::vector<uint64_t> cmp = tileCycles(e, "cmp"), keep = tileCycles(e, "keep"), w = tileCycles(e, "w");
    uint64_t tiles = 0;
    for (uint32_t t = 0; t < cmp.size(); ++t) {
        const uint64_t n = pre.at(t) / 2, m = (n + 5) / 6;
        tiles += n > 0;
        INFO("tile " << t << ", " << n << " elements");
        // BinaryOp1D<LESS_THAN> fp16: 11 + 6 x (26 + 9 per 4 elements); UnaryOp1D<LOGICAL_NOT>:
        // 11 + 9 + 6 x (17 + 21 an element); Select: 6 x (5 + 6 + 5 an element).
        CHECK(cmp[t] == (n ? 11 + 6 * (26 + 9 * ((m + 3) / 4)) : 0));
        CHECK(keep[t] == (n ? 20 + 6 * (17 + 21 * m) : 0));
        CHECK(w[t] == (n ? 6 * (5 + 6 + 5 * m) : 0));
    }
    CHECK(tiles > 0);
    // The per-cycle reference engine agrees with the fast one on the masks and the selects.
    CHECK(test::engineDisagreement(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 2}, {"precision", "fp16"}})) == "");
    json bad = graph;
    bad["ops"][4]["inputs"] = {"keep", "pre", "f"};
    bad["ops"][5]["inputs"] = {"pre"};
    bad["ops"][5]["name"] = "f0";
    bad["ops"].insert(bad["ops"].begin() + 4, op("f", "flatten", {"pre"}));
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/5/inputs: expected x and y of one shape, found [4, 8, 16] and [4, 128]"));
}

TEST_CASE("Graph workload: expand repeats dimensions of 1 as a broadcast copy, its gradient the repeats' sum", "[graph]")
{
    // A per-sample [1, 16] repeated over 4 rows: the copy of the broadcast (PopART's Expand)
    // and the reduce of its gradient.
    const json graph = {{"inputs", {{{"name", "x"}, {"shape", {8}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}}},
                        {"ops", {op("pre", "linear", {"x"}, {{"out_features", 16}}), op("r", "reshape", {"pre"}, {{"shape", {1, 16}}}),
                                 op("e", "expand", {"r"}, {{"shape", {4, -1}}}), op("f", "flatten", {"e"}),
                                 op("loss", "cross_entropy", {"f", "y"})}},
                        {"outputs", {"loss"}}};
    const json doc = graphConfig(graph, {{"mode", "train"}, {"micro_batch", 2}});
    const Experiment e = build(doc);
    std::map<std::string, std::vector<std::string>> found;
    forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
        if (const auto* c = std::get_if<ComputeStep>(&step.op))
            found[c->name] = c->vertexTypes;
    });
    CHECK(found.at("e") == std::vector<std::string>{"Copy"});
    REQUIRE(found.count("e.grad"));
    // The 4 rows sum strided on each tile (each column's 16 apart), as a reduce over a middle
    // dimension does, and the tiles' partial sums meet on the result's tiles.
    CHECK(found.at("e.grad.local") == std::vector<std::string>{"ReduceStrided<ADD>"});
    CHECK(found.at("e.grad") == std::vector<std::string>{"ReducePartials<ADD>"});
    // Its output: 4 x 16 fp32 values a sample, 2 samples.
    uint64_t expanded = 0;
    for (const auto& t : e.schedule.programs[0].tensors)
        if (t.name == "e.out")
            for (const auto& r : t.bytes.runs())
                expanded += uint64_t(r.count) * r.value;
    CHECK(expanded == 2 * 4 * 16 * 4);
    CHECK(test::engineDisagreement(doc) == "");
    json bad = graph;
    bad["ops"][2]["shape"] = {4, 8};
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/2/shape/1: expected -1, 16 or (dimension 2 of [4, 1, 16] "
                                                          "being 1) any size, found 8"));
    bad["ops"][2]["shape"] = {-1, -1};
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/2/shape: expected a dimension of 1 of [4, 1, 16] repeated"));
}

TEST_CASE("Graph workload: a matmul no tile split fits runs in serial steps, a Repeat of one step's exchange and compute", "[graph]")
{
    // GPT-2 small's LM head over 1,024 tokens, 768 -> 50,257 in fp16, at micro-batch 1.
    const json graph = {{"inputs", {{{"name", "x"}, {"shape", {1024, 768}}}}},
                        {"ops", {op("head", "linear", {"x"}, {{"out_features", 50257}, {"bias", false}})}},
                        {"outputs", {"head"}}};
    const Experiment e = build(graphConfig(graph, {{"micro_batch", 1}, {"precision", "fp16"}, {"partials", "fp16"}}));
    ConvProblem problem;
    problem.positions = 1024;
    problem.reduction = 768;
    problem.outChans = 50257;
    problem.input = problem.partials = problem.output = Precision::FP16;
    const ConvPlan plan = planConv(e.system.ipu, problem);
    REQUIRE(plan.serialSplits > 1);
    const RepeatStep* serial = nullptr;
    forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
        if (const auto* r = std::get_if<RepeatStep>(&step.op); r && r->name == "head.serial")
            serial = r;
    });
    REQUIRE(serial != nullptr);
    CHECK(serial->count == plan.serialSplits);
    // Each step computes its share of the model's multiply-adds; together, all of them.
    double flops = 0;
    for (const Step& s : serial->body)
        if (const auto* c = std::get_if<ComputeStep>(&s.op); c && c->name == "head")
            flops += c->flops;
    CHECK(flops * double(plan.serialSplits) == Approx(2.0 * 1024 * 768 * 50257));
    CHECK(e.schedule.modelFlopsPerSample == Approx(2.0 * 1024 * 768 * 50257));
    // The per-cycle reference engine agrees with the fast one on a Repeat of serial steps (a
    // smaller head on 16 tiles, which no split of theirs holds either).
    json small = graphConfig({{"inputs", {{{"name", "x"}, {"shape", {256, 256}}}}},
                              {"ops", {op("head", "linear", {"x"}, {{"out_features", 16384}, {"bias", false}})}},
                              {"outputs", {"head"}}},
                             {{"micro_batch", 1}, {"precision", "fp16"}, {"partials", "fp16"}});
    small["system"]["ipu"] = {{"tiles", 16}};
    const Experiment smallHead = build(small);
    bool repeated = false;
    forEachProgramStep(smallHead.schedule.programs.at(0), [&](const Step& step) {
        repeated = repeated || std::holds_alternative<RepeatStep>(step.op);
    });
    CHECK(repeated);
    CHECK(test::engineDisagreement(small) == "");
}

TEST_CASE("Graph workload: layer and group norm without learned parameters (affine false)", "[graph]")
{
    const json train = {{"mode", "train"}, {"micro_batch", 2}, {"precision", "fp32"}, {"partials", "fp32"}};
    json plainOps = everyOtherOp();
    plainOps["ops"][1]["affine"] = false;
    const Experiment learned = build(graphConfig(everyOtherOp(), train));
    const Experiment plain = build(graphConfig(plainOps, train));
    CHECK(bytesOfKind(learned.schedule, "weight") - bytesOfKind(plain.schedule, "weight") == 4 * 32); // gamma and beta of 16
    // Per tile, the normalisation without gamma's multiply and beta's add over the tile's
    // elements of the rows (the embedding's output, where it runs).
    TileRuns<uint64_t> x;
    for (const auto& t : plain.schedule.programs[0].tensors)
        if (t.name == "emb.out")
            x = t.bytes;
    const std::vector<uint64_t> withParams = tileCycles(learned, "ln"), without = tileCycles(plain, "ln");
    REQUIRE(withParams.size() == without.size());
    uint64_t tiles = 0;
    for (uint32_t t = 0; t < withParams.size(); ++t) {
        const uint64_t e = x.at(t) / 4;
        tiles += e > 0;
        INFO("tile " << t << ", " << e << " elements");
        CHECK(withParams[t] - without[t] ==
              (e ? costs::binaryOp(plain.system.ipu, costs::BinaryOpKind::Mul, Precision::FP32, e) +
                       costs::binaryOp(plain.system.ipu, costs::BinaryOpKind::Add, Precision::FP32, e)
                 : 0));
    }
    CHECK(tiles > 0);
    // No parameters to bring to the rows, and no gradients for them.
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(plain.schedule);
    CHECK(cycles["ln.grad"] > 0);
    CHECK(cycles["ln.grad"] < test::busiestStepCycles(learned.schedule)["ln.grad"]); // no dy gamma
    for (const char* name : {"ln.params", "ln.grad.params", "ln.gamma_grad", "ln.beta_grad"})
        CHECK(cycles.count(name) == 0);

    // Group norm alike: a residual CNN's group norm of 32 channels without its 64 parameters.
    json cnn = residualCnn();
    cnn["ops"][6]["affine"] = false;
    CHECK(bytesOfKind(build(graphConfig(residualCnn(), train)).schedule, "weight") -
              bytesOfKind(build(graphConfig(cnn, train)).schedule, "weight") == 4 * 64);
}

TEST_CASE("Graph workload: log_softmax and nll_loss train like a classifier's cross-entropy", "[graph]")
{
    const json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {256}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
                        {"ops", json::array({op("fc", "linear", {"x"}, {{"out_features", 64}}), op("lp", "log_softmax", {"fc"}),
                                             op("nll", "nll_loss", {"lp", "y"})})},
                        {"outputs", {"nll"}}};
    const Experiment e = build(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 8}}));
    CHECK(e.schedule.modelFlopsPerSample == 2.0 * 2 * 256 * 64); // forward and weight gradient (no gradient into x)
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    for (const char* name : {"lp", "nll", "nll.sum", "nll.grad", "lp.grad", "fc.wgrad"}) {
        INFO(name);
        CHECK(cycles[name] > 0);
    }
    // Inference leaves the loss out: the log-probabilities are the output.
    json infer = graph;
    infer["outputs"] = {"lp"};
    CHECK(errorOf(graphConfig(infer)) == "no error");
    json wrong = graph;
    wrong["ops"][2]["inputs"] = {"lp", "x"};
    CHECK_THAT(errorOf(graphConfig(wrong, {{"mode", "train"}})),
               Catch::Contains("/workload/graph/ops/2/inputs/1: expected integer labels [4], found non-integer [4, 256]"));
}

TEST_CASE("Graph workload: concat and slice copy data, forward and backward", "[graph]")
{
    const json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {4, 16}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
                        {"ops", json::array({op("a", "linear", {"x"}, {{"out_features", 32}}), op("b", "linear", {"x"}, {{"out_features", 32}}),
                                             op("cat", "concat", {"a", "b"}, {{"dim", 2}}),
                                             op("sl", "slice", {"cat"}, {{"dim", 2}, {"start", 8}, {"end", 40}}), op("f", "flatten", {"sl"}),
                                             op("out", "linear", {"f"}, {{"out_features", 64}}), op("loss", "cross_entropy", {"out", "y"})})},
                        {"outputs", {"loss"}}};
    const Experiment e = build(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 8}}));
    // The flattened slice has 4 x 32 = 128 features: out is 128 x 64 + 64.
    CHECK(bytesOfKind(e.schedule, "weight") == 4 * (2 * (16 * 32 + 32) + 128 * 64 + 64));
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    for (const char* name : {"cat", "sl", "sl.grad", "cat.grad_0", "cat.grad_1"}) {
        INFO(name);
        CHECK(cycles[name] > 0);
    }
    // Every third element of [8, 40) (x[..., 8:40:3], PopTorch's subsample of a slice): 11 of
    // them, so 4 x 11 = 44 features.
    json strided = graph;
    strided["ops"][3]["step"] = 3;
    CHECK(bytesOfKind(build(graphConfig(strided, {{"mode", "train"}, {"micro_batch", 8}})).schedule, "weight") ==
          4 * (2 * (16 * 32 + 32) + 44 * 64 + 64));
    json bad = graph;
    bad["ops"][3]["step"] = 0;
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/3/step"));
    bad = graph;
    bad["ops"][3]["start"] = 64;
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/3/start: expected start < end within dimension 2 of [4, 4, 64], found [64, 40)"));
    bad = graph;
    bad["ops"][2]["dim"] = 3;
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/2/dim: expected a dimension from 1 to 2 of [4, 4, 32] (0 is the batch)"));
}

TEST_CASE("Graph workload: broadcasting repeats an operand over the other's trailing dimensions", "[graph]")
{
    // x [N, 8, 32] with s [N, 32] (a per-sample vector, as mul of x.mean(1) would give).
    const json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {8, 16}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
                        {"ops", json::array({op("h", "linear", {"x"}, {{"out_features", 32}}), op("f", "flatten", {"h"}),
                                             op("s", "linear", {"f"}, {{"out_features", 32}}), op("m", "mul", {"h", "s"}),
                                             op("d", "div", {"s", "m"}), op("a", "add", {"d", "s"}), op("g", "flatten", {"a"}),
                                             op("out", "linear", {"g"}, {{"out_features", 64}}), op("loss", "cross_entropy", {"out", "y"})})},
                        {"outputs", {"loss"}}};
    const Experiment e = build(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 8}}));
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    // Forward, and each repeated operand's gradient summed over its 8 repeats.
    for (const char* name : {"m", "d", "a", "m.grad_lhs", "m.grad_rhs", "m.grad_rhs.sum", "d.grad_lhs", "d.grad_lhs.sum", "d.grad_rhs",
                             "a.grad_rhs.sum"}) {
        INFO(name);
        CHECK(cycles[name] > 0);
    }
    CHECK(cycles.count("m.grad_lhs.sum") == 0); // h is the full-size operand
    json bad = graph;
    bad["ops"][3]["inputs"] = {"h", "f"};
    CHECK_THAT(errorOf(graphConfig(bad)),
               Catch::Contains("/workload/graph/ops/3/inputs: expected operands of one shape, or one that broadcasts to the other's "
                               "(each dimension equal or 1, the batch equal), found [4, 8, 32] and [4, 256]"));
}

namespace {

/** A masked-language-model head as BERT's: two vocabulary parts of a token table, tied to the
 *  decoder; the masked positions gathered; the inputs in two streams. */
json maskedLm()
{
    auto in = [](const char* name, uint64_t n, const char* stream) {
        return json{{"name", name}, {"shape", {n}}, {"dtype", "int32"}, {"stream", stream}};
    };
    json next = in("next", 0, "labels");
    next["shape"] = json::array();
    return {{"inputs", json::array({in("ids", 8, "seq"), in("mask", 8, "seq"), in("pos", 2, "labels"), in("lab", 2, "labels"), next})},
            {"ops", json::array({op("emb0", "embedding", {"ids"}, {{"num_embeddings", 50}, {"embedding_dim", 16}}),
                                 op("emb1", "embedding", {"ids"}, {{"num_embeddings", 50}, {"embedding_dim", 16}}),
                                 op("e", "add", {"emb0", "emb1"}), op("fc", "linear", {"e"}, {{"out_features", 16}}),
                                 op("ft", "transpose", {"fc"}, {{"dims", {0, 2, 1}}}), op("sc", "matmul", {"fc", "ft"}),
                                 op("att", "softmax", {"sc"}, {{"attention", true}}), op("ctx", "matmul", {"att", "fc"}),
                                 op("g", "gather", {"ctx", "pos"}),
                                 op("d0", "linear", {"g"}, {{"out_features", 50}, {"weight", "emb0"}}),
                                 op("d1", "linear", {"g"}, {{"out_features", 50}, {"weight", "emb1"}}),
                                 op("loss", "cross_entropy", {"d0", "d1", "lab"}), op("first", "gather", {"ctx"}, {{"index", 0}}),
                                 op("cls", "linear", {"first"}, {{"out_features", 4}}), op("nsp", "cross_entropy", {"cls", "next"})})},
            {"outputs", {"loss", "nsp"}}};
}

std::map<std::string, uint64_t> hostLoads(const Schedule& s)
{
    std::map<std::string, uint64_t> bytes;
    forEachProgramStep(s.programs.at(0), [&](const Step& step) {
        if (const auto* h = std::get_if<HostTransferStep>(&step.op); h && h->direction == Direction::ToIpu)
            bytes[h->name] += h->bytes;
    });
    return bytes;
}

} // namespace

TEST_CASE("Graph workload: tied weights, gathers, streams and classes in parts (BERT's heads)", "[graph]")
{
    const Experiment e = build(graphConfig(maskedLm(), {{"mode", "train"}}));
    // The decoders use the tables: 2 x 50 x 16, fc 16 x 16 + 16, two decoder biases of 50, cls 16 x 4 + 4.
    CHECK(bytesOfKind(e.schedule, "weight") == 4 * (1600 + 272 + 100 + 68));
    // Multiply-adds per sample: fc 8 x 16 x 16, scores and context 8 x 16 x 8 each, the decoders
    // 2 x (2 x 16 x 50) on the gathered rows, cls 16 x 4; training adds twice that (the tables
    // get the decoders' weight gradients and the lookups' gradients, the gathers copy).
    const double forward = 2048 + 2 * 1024 + 2 * 1600 + 64;
    CHECK(e.schedule.modelFlopsPerSample == 2 * (forward + 2 * forward));
    // One copy per stream, of every input in it (the unread mask too): 4 samples x 4 bytes.
    const std::map<std::string, uint64_t> loads = hostLoads(e.schedule);
    CHECK(loads == std::map<std::string, uint64_t>{{"host.load.seq", 4 * 4 * (8 + 8)}, {"host.load.labels", 4 * 4 * (2 + 2 + 1)}});
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    for (const char* name : {"g", "first", "g.grad", "first.grad", "d0.wgrad", "emb0.grad", "loss", "loss.grad"}) {
        INFO(name);
        CHECK(cycles[name] > 0);
    }
    // The attention softmax also scales and masks its scores.
    json plain = maskedLm();
    plain["ops"][6].erase("attention");
    CHECK(test::busiestStepCycles(build(graphConfig(plain, {{"mode", "train"}})).schedule)["att"] < cycles["att"]);

    json bad = maskedLm();
    bad["ops"][9]["weight"] = "fc";
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/9/weight: expected a weight of shape [50, 16], found [16, 16] of \"fc\""));
    bad["ops"][9]["weight"] = "d1";
    CHECK_THAT(errorOf(graphConfig(bad)),
               Catch::Contains("/workload/graph/ops/9/weight: expected the name of an earlier linear, conv2d or embedding op, found \"d1\""));
    bad = maskedLm();
    bad["ops"][12]["index"] = 8;
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/12/index: expected an index below dimension 1 of [4, 8, 16], found 8"));
    bad["ops"][12]["index"] = {0, 9};
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/12/index/1: expected an index below dimension 1 of [4, 8, 16], found 9"));
    bad["ops"][12]["index"] = json::array();
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/12/index"));
    // A list keeps the dimension: cls then reads [4, 3, 16], three times the multiply-adds.
    json listed = maskedLm();
    listed["ops"][12]["index"] = {0, 7, 7};
    listed["ops"][14]["inputs"] = {"cls", "lab3"};
    listed["inputs"].push_back({{"name", "lab3"}, {"shape", {3}}, {"dtype", "int32"}});
    const Experiment three = build(graphConfig(listed, {{"mode", "train"}}));
    CHECK(three.schedule.modelFlopsPerSample == e.schedule.modelFlopsPerSample + 2 * 3 * (2 * 64));
    bad = maskedLm();
    bad["ops"][8]["inputs"] = {"ctx", "fc"};
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/8/inputs/1: expected integer indices [4, ...], found non-integer [4, 8, 16]"));
    bad = maskedLm();
    bad["ops"][11]["inputs"] = {"d0", "ctx", "lab"};
    CHECK_THAT(errorOf(graphConfig(bad, {{"mode", "train"}})),
               Catch::Contains("/workload/graph/ops/11/inputs/1: expected a part of the classes of shape [4, 2, 50], found [4, 8, 16]"));
}

TEST_CASE("Graph workload: a per-channel operand broadcasts over the image (squeeze-and-excitation)", "[graph]")
{
    // x [N, 16, 8, 8] times sigmoid(its channel means) [N, 16, 1, 1]: runs of 64 elements share one.
    const json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {16, 8, 8}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
                        {"ops", json::array({op("c", "conv2d", {"x"}, {{"out_channels", 16}, {"kernel_size", 1}}),
                                             op("s", "global_avg_pool", {"c"}), op("g", "sigmoid", {"s"}), op("m", "mul", {"c", "g"}),
                                             op("f", "flatten", {"m"}), op("out", "linear", {"f"}, {{"out_features", 10}}),
                                             op("loss", "cross_entropy", {"out", "y"})})},
                        {"outputs", {"loss"}}};
    ModelSpec spec;
    spec.inputs = {{"x", {16, 8, 8}, false, false, "", std::nullopt}, {"y", {}, true, false, "", std::nullopt}};
    LayerSpec c;
    c.name = "c", c.kind = LayerKind::Conv2d, c.inputs = {"x"}, c.features = 16;
    LayerSpec pool;
    pool.name = "s", pool.kind = LayerKind::GlobalAvgPool, pool.inputs = {"c"};
    LayerSpec m;
    m.name = "m", m.kind = LayerKind::Mul, m.inputs = {"c", "s"};
    spec.layers = {c, pool, m};
    spec.outputs = {"m"};
    ModelGraphInfo info;
    const Graph g = buildModelGraph(spec, 4, Precision::FP32, Precision::FP32, false, Throwing(), info);
    const Op& mul = g.ops.back();
    CHECK(mul.broadcast == 1);
    CHECK(mul.window == 64);
    CHECK(mul.broadcastRun == 64);

    const Experiment e = build(graphConfig(graph, {{"mode", "train"}, {"micro_batch", 4}}));
    // Each tile receives the gate values its elements use: ceil(elements / 64) of them.
    uint64_t expected = 0, received = 0;
    for (const auto& t : e.schedule.programs[0].tensors)
        if (t.name == "c.out") // the bias is added in place
            for (const auto& r : t.bytes.runs())
                expected += uint64_t(r.count) * ceilDiv(r.value / 4, 64) * 4;
    forEachProgramStep(e.schedule.programs[0], [&](const Step& step) {
        if (const auto* x = std::get_if<ExchangeStep>(&step.op); x && x->name == "m.repeated")
            for (const auto& r : x->bytes.runs())
                received += uint64_t(r.count) * r.value.recvShared;
    });
    CHECK(expected > 0);
    CHECK(received == expected);
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    for (const char* name : {"m", "m.grad_lhs", "m.grad_rhs", "m.grad_rhs.sum", "g.grad", "s.grad"}) {
        INFO(name);
        CHECK(cycles[name] > 0);
    }
    json bad = graph;
    bad["ops"].insert(bad["ops"].begin() + 3, op("ct", "transpose", {"c"}, {{"dims", {0, 2, 3, 1}}}));
    bad["ops"][4]["inputs"] = {"ct", "g"};
    CHECK_THAT(errorOf(graphConfig(bad)),
               Catch::Contains("/workload/graph/ops/4/inputs: expected operands of one shape, or one that broadcasts to the other's "
                               "(each dimension equal or 1, the batch equal), found [4, 8, 8, 16] and [4, 16, 1, 1]"));
}

TEST_CASE("Graph workload: global average pooling is popops' reduce over the tiles holding the image", "[graph]")
{
    // popnn's pool of a kernel covering the field is popops::reduce (Pooling.cpp,
    // substPoolingWithReduction). x [4, 16, 8, 8] fp32 after a 1x1 conv: 64 outputs of runs of
    // 64 elements, c spread over 256 tiles of 16 elements (64 bytes each).
    const json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {16, 8, 8}}}})},
                        {"ops", json::array({op("c", "conv2d", {"x"}, {{"out_channels", 16}, {"kernel_size", 1}}), op("s", "global_avg_pool", {"c"})})},
                        {"outputs", {"s"}}};
    const Experiment e = build(graphConfig(graph));
    uint64_t tilesWithC = 0;
    for (const auto& t : e.schedule.programs[0].tensors)
        if (t.name == "c.out")
            for (const auto& r : t.bytes.runs())
                if (r.value) {
                    CHECK(r.value == 64);
                    tilesWithC += r.count;
                }
    REQUIRE(tilesWithC == 256);
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    // Stage one: each tile sums its 16 elements into one fp32 partial (ALL_REGIONS_CONTINUOUS,
    // §3.8: 6 workers x (ceil(ceil(16 / 6) / 2) + 12 x 1 + 17) = 6 x 31).
    CHECK(cycles["s.local"] == 186);
    // Stage two: 256 partials, 4 of each output, cross to the result's 4 tiles (256 bytes at a
    // 64-byte grain), 16 outputs each: 6 x (ceil(ceil(16 x 4 / 6) / 2) + 12 x 3 + 17) = 6 x 59.
    CHECK(cycles["s"] == 354);
    // c, its bias, s.local and s: the 1 / 64 is the reduction's scale, at no cost.
    CHECK(cycles.size() == 4);

    // A squeeze-and-excitation pool of a large image (EfficientNet-B0's first block: [32, 112,
    // 112] fp16) fits: no tile holds more than its own part of the image and its partials.
    json big = graph;
    big["inputs"][0]["shape"] = {32, 112, 112};
    big["ops"][0]["out_channels"] = 32;
    const Experiment one = build(graphConfig(big, {{"micro_batch", 1}, {"precision", "fp16"}}));
    uint64_t largest = 0;
    for (const auto& t : one.schedule.programs[0].tensors)
        if (t.name.rfind("s ", 0) == 0 || t.name.rfind("s.", 0) == 0)
            for (const auto& r : t.bytes.runs())
                largest = std::max<uint64_t>(largest, r.value);
    CHECK(largest > 0);
    CHECK(largest <= 32 * 4); // at most one fp32 partial of each of the 32 outputs on a tile
}

TEST_CASE("Graph workload: learned element-wise parameters train as weights", "[graph]")
{
    // A per-channel scale [8, 1, 1] of a [N, 8, 4, 4] activation: repeated over the batch and the image.
    const json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {8, 4, 4}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
                        {"ops", json::array({{{"name", "gamma"}, {"op", "parameter"}, {"shape", {8, 1, 1}}}, op("s", "mul", {"x", "gamma"}),
                                             op("f", "flatten", {"s"}), op("out", "linear", {"f"}, {{"out_features", 10}}),
                                             op("loss", "cross_entropy", {"out", "y"})})},
                        {"outputs", {"loss"}}};
    const Experiment e = build(graphConfig(graph, {{"mode", "train"}}));
    CHECK(bytesOfKind(e.schedule, "weight") == 4 * (8 + 128 * 10 + 10));
    CHECK(bytesOfKind(e.schedule, "optimizer state") == 8 * (8 + 128 * 10 + 10)); // AdamW's moments, gamma's too
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    for (const char* name : {"s", "s.grad_rhs", "s.grad_rhs.sum", "gamma.adamw"}) {
        INFO(name);
        CHECK(cycles[name] > 0);
    }
    json bad = graph;
    bad["ops"][1] = op("s", "relu", {"gamma"});
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/1/inputs/0: expected an activation, found parameter "
                                                          "\"gamma\" (an operand of add, sub, mul, div, concat, a comparison or where, or a "
                                                          "masked_fill's mask, only)"));
    bad = graph;
    bad["ops"][0]["shape"] = {8, 2, 1};
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/1/inputs: expected operands of one shape, or one that "
                                                          "broadcasts to the other's"));
    bad = graph;
    bad["outputs"] = {"gamma"};
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/outputs/0: expected the name of an op, found \"gamma\""));
    bad = graph;
    bad["ops"][0]["inputs"] = {"x"};
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/0/inputs"));
}

TEST_CASE("Graph workload: a parameter that is not learned is a buffer, copied to the later stages that read it", "[graph]")
{
    // A mask m [8] scales the input and, in block b on another IPU, the linear layer's output.
    json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {8}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
                  {"ops", json::array({{{"name", "m"}, {"op", "parameter"}, {"shape", {8}}, {"learned", false}, {"block", "a"}},
                                       op("s", "mul", {"x", "m"}), op("fc", "linear", {"s"}, {{"out_features", 8}}),
                                       op("t", "mul", {"fc", "m"}, {{"block", "b"}}), op("loss", "cross_entropy", {"t", "y"})})},
                  {"outputs", {"loss"}}};
    const Experiment e = build(graphConfig(graph, {{"mode", "train"}}));
    CHECK(bytesOfKind(e.schedule, "weight") == 4 * (8 * 8 + 8)); // the linear layer's only
    CHECK(bytesOfKind(e.schedule, "buffer") == 4 * 8);
    CHECK(bytesOfKind(e.schedule, "optimizer state") == 8 * (8 * 8 + 8)); // no moments for the mask
    std::map<std::string, uint64_t> cycles = test::busiestStepCycles(e.schedule);
    CHECK(cycles.count("t.grad_lhs") == 1);
    CHECK(cycles.count("t.grad_rhs") == 0); // the mask gets no gradient
    CHECK(cycles.count("s.grad_rhs") == 0);

    // Pipelined over two IPUs: block a's stage copies the mask to block b's with the activation
    // each micro-batch; the weights stay with their blocks.
    json pipelined = {{"mode", "train"}, {"strategy", {{"kind", "pipelined"}, {"block_ipus", {{"a", 0}, {"b", 1}}}}}};
    json doc = graphConfig(graph, pipelined);
    doc["system"]["base"] = "hardware/m2000.json";
    doc["run"] = {{"gradient_accumulation", 4}};
    const Experiment p = build(doc);
    REQUIRE(p.schedule.programs.size() == 2);
    CHECK(bytesOfKind(p.schedule, "buffer", 0) == 4 * 8);
    CHECK(bytesOfKind(p.schedule, "buffer", 1) == 0);
    // IPU 1 receives fc's output [4, 8] and the mask [8], fp32.
    CHECK(bytesOfKind(p.schedule, "ipu copy buffer", 1) == 4 * (4 * 8 + 8));
    // A learned parameter read on another IPU is refused, as PopART's pipelining refuses it.
    graph["ops"][0].erase("learned");
    doc = graphConfig(graph, pipelined);
    doc["system"]["base"] = "hardware/m2000.json";
    doc["run"] = {{"gradient_accumulation", 4}};
    CHECK_THAT(errorOf(doc), Catch::Contains("/workload/strategy: block \"b\" (IPU 1) uses weight \"m\" of block \"a\" (IPU 0): "
                                             "expected blocks sharing a learned weight on one IPU"));
    // Phased, each phase streams in its own weights and buffers: one read by another phase is refused.
    graph["ops"][0]["learned"] = false;
    doc = graphConfig(graph, {{"mode", "train"}, {"strategy", {{"kind", "phased"}, {"block_ipus", {{"a", 0}, {"b", 0}}}}}});
    CHECK_THAT(errorOf(doc), Catch::Contains("/workload/strategy: block \"b\" (phase 1) reads buffer \"m\" of block \"a\" (phase 0): "
                                             "expected weights and buffers read only in their own block's phase"));
}

TEST_CASE("Graph workload: the tutorial's CNN as a graph is the MNIST workload", "[graph]")
{
    const Experiment graph = buildExperiment(kRoot + "/configs/graph/mnist.json");
    const Experiment mnist = buildExperiment(kRoot + "/configs/mnist/train.json");
    REQUIRE(graph.schedule.programs.size() == 1);
    const auto& a = graph.schedule.programs[0];
    const auto& b = mnist.schedule.programs[0];
    CHECK(a.numPoints == b.numPoints);
    CHECK(a.tensors.size() == b.tensors.size());
    CHECK(graph.schedule.modelFlopsPerSample == mnist.schedule.modelFlopsPerSample);
    // Inference leaves the loss and the labels out.
    ModelGraphInfo info;
    const Graph g = buildModelGraph(mnistModel(), 16, Precision::FP32, Precision::FP32, false, Throwing(), info);
    for (const auto& o : g.ops)
        CHECK((o.kind != OpKind::SoftmaxCrossEntropy && o.name != "host.load.labels"));
    CHECK(info.losses.empty());
    REQUIRE(info.outputs.size() == 1);
    CHECK(g.tensor(info.outputs[0]).name == "layer4.biased");
}

TEST_CASE("Graph workload: IPUs named on ops place blocks like block_ipus", "[graph]")
{
    json graph = mlp();
    graph["ops"][0]["block"] = "a";
    graph["ops"][0]["ipu"] = 0;
    graph["ops"][2]["block"] = "b";
    graph["ops"][2]["ipu"] = 1;
    const json pipelined = {{"strategy", {{"kind", "pipelined"}}}, {"micro_batch", 4}};
    auto onM2000 = [](json doc) {
        doc["system"]["base"] = "hardware/m2000.json";
        doc["run"] = {{"device_iterations", 4}};
        return doc;
    };
    const Experiment byOps = build(onM2000(graphConfig(graph, pipelined)));
    json plain = mlp();
    plain["ops"][0]["block"] = "a";
    plain["ops"][2]["block"] = "b";
    json strategy = pipelined;
    strategy["strategy"]["block_ipus"] = {{"a", 0}, {"b", 1}};
    const Experiment byStrategy = build(onM2000(graphConfig(plain, strategy)));
    REQUIRE(byOps.schedule.programs.size() == 2);
    CHECK(byOps.schedule.programs[1].numPoints == byStrategy.schedule.programs[1].numPoints);
    CHECK(byOps.schedule.strategy->stages.at(1).ipu == 1);

    // Inference leaves the loss out, and with it the block only the loss opens.
    json withLoss = graph;
    withLoss["inputs"].push_back({{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}});
    withLoss["ops"].push_back(op("loss", "cross_entropy", {"fc2", "y"}, {{"block", "c"}, {"ipu", 2}}));
    CHECK(errorOf(onM2000(graphConfig(withLoss, pipelined))) == "no error");
    graph["ops"][2].erase("ipu");
    CHECK_THAT(errorOf(onM2000(graphConfig(graph, pipelined))),
               Catch::Contains("/workload/graph/ops/2: expected an \"ipu\" for block \"b\": other blocks name theirs"));
    graph["ops"][2]["ipu"] = 1;
    CHECK_THAT(errorOf(onM2000(graphConfig(graph))),
               Catch::Contains("/workload/graph/ops/2/ipu: expected /workload/strategy/kind \"pipelined\", \"sharded\" or \"phased\""));
    // A block is entered once: going back to one would compile an op before its inputs (the
    // fuzzer found this as an internal error on one IPU).
    json back = mlp();
    back["ops"][0]["block"] = "a";
    back["ops"][1]["block"] = "b";
    back["ops"][2]["block"] = "a";
    CHECK(errorOf(graphConfig(back)) == kRoot + "/configs/g.json: /workload/graph/ops/2/block: expected the ops of block \"a\" to be "
                                         "consecutive: it was left for block \"b\" before this op");
}

TEST_CASE("Graph workload: every bad graph names the op and what was expected", "[graph][errors]")
{
    auto withOps = [](json ops, json inputs = json::array({{{"name", "x"}, {"shape", {3, 8, 8}}}})) {
        return graphConfig({{"inputs", inputs}, {"ops", ops}, {"outputs", {ops.back().at("name")}}});
    };
    CHECK_THAT(errorOf(withOps(json::array({op("r", "relu", {"y"})}))),
               Catch::Contains("/workload/graph/ops/0/inputs/0: expected the name of a model input or of an earlier op, found \"y\""));
    CHECK_THAT(errorOf(withOps(json::array({op("r", "relu", {"x"}), op("r", "relu", {"x"})}))),
               Catch::Contains("/workload/graph/ops/1/name: \"r\" already names an input or an op"));
    CHECK_THAT(errorOf(withOps(json::array({op("c", "conv2d", {"x"}, {{"out_channels", 4}, {"kernel_size", 3}, {"groups", 2}})}))),
               Catch::Contains("/workload/graph/ops/0/groups: expected a divisor of the input's 3 channels and of out_channels 4, found 2"));
    CHECK_THAT(errorOf(withOps(json::array({op("c", "conv2d", {"x"}, {{"out_channels", 4}, {"kernel_size", 3}, {"dilation", 4}})}))),
               Catch::Contains("/workload/graph/ops/0/kernel_size: expected a kernel within the padded input 8 x 8, found 9 x 9 (dilated)"));
    CHECK_THAT(errorOf(withOps(json::array({op("c", "conv2d", {"x"}, {{"out_channels", 4}, {"kernel_size", 9}})}))),
               Catch::Contains("/workload/graph/ops/0/kernel_size: expected a kernel within the padded input 8 x 8, found 9 x 9"));
    CHECK_THAT(errorOf(withOps(json::array({op("c", "conv2d", {"x"}, {{"out_channel", 4}, {"kernel_size", 3}})}))),
               Catch::Contains("/workload/graph/ops/0/out_channel: unknown key \"out_channel\" (allowed: bias, block, dilation"));
    CHECK_THAT(errorOf(withOps(json::array({op("f", "linear", {"x"}, {{"out_features", 5}}), op("s", "add", {"f", "x"})}))),
               Catch::Contains("/workload/graph/ops/1/inputs: expected operands of one shape, or one that broadcasts to the "
                               "other's (each dimension equal or 1, the batch equal), found [4, 3, 8, 5] and [4, 3, 8, 8]"));
    CHECK(errorOf(withOps(json::array({op("m", "matmul", {"x", "x"})}))) == "no error"); // 8 x 8 times 8 x 8
    CHECK_THAT(errorOf(withOps(json::array({op("f", "linear", {"x"}, {{"out_features", 5}}), op("m", "matmul", {"f", "f"})}))),
               Catch::Contains("/workload/graph/ops/1/inputs: expected [..., M, K] and [..., K, N] with the same leading dimensions, "
                               "or one operand's 1 where the other's are not, found [4, 3, 8, 5] and [4, 3, 8, 5]"));
    CHECK_THAT(errorOf(withOps(json::array({op("r", "reshape", {"x"}, {{"shape", {5, -1}}})}))),
               Catch::Contains("/workload/graph/ops/0/shape: expected a shape of 192 elements per sample (the input is [4, 3, 8, 8])"));
    CHECK_THAT(errorOf(withOps(json::array({op("p", "max_pool2d", {"x"}, {{"kernel_size", 3}, {"padding", 2}})}))),
               Catch::Contains("/workload/graph/ops/0/padding: expected at most half the kernel size, found 2"));
    CHECK_THAT(errorOf(withOps(json::array({op("p", "avg_pool2d", {"x"}, {{"kernel_size", 11}, {"padding", 1}})}))),
               Catch::Contains("/workload/graph/ops/0/kernel_size: expected a window within the padded input 10 x 10"));
    CHECK_THAT(errorOf(withOps(json::array({op("g", "group_norm", {"x"}, {{"num_groups", 2}})}))),
               Catch::Contains("/workload/graph/ops/0/num_groups: expected a divisor of the 3 channels, found 2"));
    CHECK_THAT(errorOf(withOps(json::array({op("f", "flatten", {"x"}), op("b", "batch_norm", {"f"})}))),
               Catch::Contains("/workload/graph/ops/1/inputs/0: expected an input [batch, channels, height, width], found [4, 192]"));
    CHECK_THAT(errorOf(graphConfig(mlp(), {{"optimizer", "adamw"}, {"momentum", 0.9}})),
               Catch::Contains("/workload/momentum: expected only with \"optimizer\": \"sgd\" or \"lars\""));
    CHECK_THAT(errorOf(withOps(json::array({op("e", "embedding", {"x"}, {{"num_embeddings", 10}, {"embedding_dim", 4}})}))),
               Catch::Contains("/workload/graph/ops/0/inputs/0: expected an integer input (indices into the table)"));
    CHECK_THAT(errorOf(graphConfig(
                   {{"inputs", json::array({{{"name", "x"}, {"shape", {10}}}, {{"name", "y"}, {"shape", {2}}, {"dtype", "int32"}}})},
                    {"ops", json::array({op("l", "cross_entropy", {"x", "y"})})}, {"outputs", {"l"}}}, {{"mode", "train"}})),
               Catch::Contains("/workload/graph/ops/0/inputs/1: expected integer labels [4], found [4, 2]"));
    CHECK_THAT(errorOf(graphConfig({{"inputs", json::array({{{"name", "x"}, {"shape", {3}}}})}, {"ops", json::array({op("r", "relu", {"x"})})},
                                        {"outputs", {"x"}}})),
               Catch::Contains("/workload/graph/outputs/0: expected the name of an op, found \"x\""));
    CHECK_THAT(errorOf(graphConfig({{"inputs", json::array({{{"name", "x"}, {"shape", {3}}}})}, {"ops", json::array({op("r", "relu", {"x"})})},
                                    {"outputs", {"r"}}}, {{"mode", "train"}})),
               Catch::Contains("/workload/graph/ops: expected a loss op (cross_entropy or nll_loss) to train from"));
    CHECK_THAT(errorOf(withOps(json::array({op("s", "sigmoidish", {"x"})}))),
               Catch::Contains("/workload/graph/ops/0/op: expected one of") && Catch::Contains(" sigmoid, ") &&
                   Catch::Contains("(not \"sigmoidish\")"));
    CHECK_THAT(errorOf(graphConfig(mlp(), {{"strategy", {{"kind", "pipelined"}, {"layers_per_ipu", {1, 1}}}}})),
               Catch::Contains("/workload/strategy/layers_per_ipu: expected only for BERT: a graph's blocks are placed with \"stages\" or \"block_ipus\""));
}

namespace {

/** The tensors an IPU receives from its pipeline neighbours (its receive buffers). */
std::set<std::string> receiveBuffers(const Schedule& s, uint32_t ipu)
{
    std::set<std::string> names;
    for (const auto& t : s.programs.at(ipu).tensors)
        if (t.kind == "ipu copy buffer")
            names.insert(t.name);
    return names;
}

} // namespace

TEST_CASE("Graph workload: outputs of earlier blocks reach the host from the last one's stage or phase", "[graph]")
{
    // A GoogLeNet's shape: an auxiliary head on IPU 0 beside the trunk, the main head and loss on
    // IPU 1; both outputs go to the host from IPU 1, the auxiliary logits copied across with
    // the activations (listed first, as torchvision returns them last).
    json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {64}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}})},
                  {"ops", json::array({op("trunk", "linear", {"x"}, {{"out_features", 64}, {"block", "a"}, {"ipu", 0}}),
                                       op("aux", "linear", {"trunk"}, {{"out_features", 10}}),
                                       op("head", "linear", {"trunk"}, {{"out_features", 10}, {"block", "b"}, {"ipu", 1}}),
                                       op("loss", "cross_entropy", {"head", "y"})})},
                  {"outputs", {"aux", "loss"}}};
    for (const char* kind : {"pipelined", "phased"}) {
        INFO(kind);
        json doc = graphConfig(graph, {{"mode", "train"}, {"strategy", {{"kind", kind}}}});
        doc["system"]["base"] = "hardware/m2000.json";
        doc["run"] = {{"gradient_accumulation", 4}};
        const Experiment e = build(doc);
        if (std::string(kind) == "pipelined")
            CHECK(receiveBuffers(e.schedule, 1) == std::set<std::string>{"trunk.biased (received)", "aux.biased (received)"});
        CHECK(test::engineDisagreement(doc) == "");
    }
}

TEST_CASE("Graph workload: a skip connection is relayed through the stages between", "[graph]")
{
    // fc1 (IPU 0) feeds fc2 (IPU 1) and, skipping two stages, the residual add on IPU 3: IPUs 1
    // and 2 receive fc1 once and send it on with their own output; the backward pass relays
    // fc1's gradient the other way.
    json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {64}}}})},
                  {"ops", json::array({op("fc1", "linear", {"x"}, {{"out_features", 64}, {"bias", false}, {"block", "a"}, {"ipu", 0}}),
                                       op("fc2", "linear", {"fc1"}, {{"out_features", 64}, {"bias", false}, {"block", "b"}, {"ipu", 1}}),
                                       op("fc3", "linear", {"fc2"}, {{"out_features", 64}, {"bias", false}, {"block", "c"}, {"ipu", 2}}),
                                       op("skip", "add", {"fc3", "fc1"}, {{"block", "d"}, {"ipu", 3}})})},
                  {"outputs", {"skip"}}};
    json doc = graphConfig(graph, {{"strategy", {{"kind", "pipelined"}}}});
    doc["system"]["base"] = "hardware/m2000.json";
    doc["run"] = {{"device_iterations", 4}};
    const Experiment e = build(doc);
    REQUIRE(e.schedule.programs.size() == 4);
    auto received = [&](uint32_t ipu) { return receiveBuffers(e.schedule, ipu); };
    CHECK(received(1) == std::set<std::string>{"fc1.out (received)"});
    CHECK(received(2) == std::set<std::string>{"fc1.out (received)", "fc2.out (received)"});
    CHECK(received(3) == std::set<std::string>{"fc1.out (received)", "fc3.out (received)"});
    // What each IPU sends on in the pipeline copy: IPUs 1 and 2 send their output and fc1.
    auto sent = [&](uint32_t ipu) {
        uint64_t bytes = 0;
        for (const Step& s : e.schedule.programs[ipu].steps)
            if (const auto* c = std::get_if<IpuCopyStep>(&s.op))
                for (const auto& t : c->send)
                    bytes = std::max(bytes, t.bytes);
        return bytes;
    };
    CHECK(sent(0) == 4 * 64 * 4);
    CHECK(sent(1) == 2 * sent(0));
    CHECK(sent(2) == 2 * sent(0));
    // A later stage on the producer's own IPU would need the tensor kept across pipeline
    // cycles, which is not modelled: an error, not a trip round the ring.
    json back = doc;
    back["workload"]["graph"]["ops"].push_back(op("again", "add", {"skip", "fc1"}, {{"block", "e"}, {"ipu", 0}}));
    back["workload"]["graph"]["outputs"] = {"again"};
    back["run"]["device_iterations"] = 8;
    CHECK_THAT(errorOf(back), Catch::Contains("/workload/strategy: block \"e\" (stage 4) reads \"fc1.out\" of block \"a\" (stage 0) on the same IPU 0"));

    json training = doc;
    training["workload"]["mode"] = "train";
    training["workload"]["graph"]["inputs"].push_back({{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}});
    training["workload"]["graph"]["ops"].push_back(op("loss", "cross_entropy", {"skip", "y"}));
    training["workload"]["graph"]["outputs"] = {"loss"};
    training["run"] = {{"gradient_accumulation", 8}};
    const Experiment t = build(training);
    auto receivedIn = [&](uint32_t ipu) { return receiveBuffers(t.schedule, ipu); };
    // The add's gradient for fc1 passes IPU 2 on its way to fc2's IPU, which sums it with its
    // own and sends the sum to IPU 0.
    CHECK(receivedIn(2).count("dskip.out (received)"));
    CHECK(receivedIn(1) == std::set<std::string>{"dfc2.out (received)", "dskip.out (received)", "fc1.out (received)"});
    CHECK(receivedIn(0) == std::set<std::string>{"dskip.out+ (received)"});
}

TEST_CASE("Graph workload: an attention_mask op feeds a softmax over every head", "[graph][packing]")
{
    // 3 heads, micro-batch 4: the mask is [4, 16, 16], repeated over the heads.
    const json graph = {{"inputs", json::array({{{"name", "scores"}, {"shape", {3, 16, 16}}},
                                                {{"name", "ids"}, {"shape", {16}}, {"dtype", "int32"}}})},
                        {"ops", json::array({op("mask", "attention_mask", {"ids"}),
                                             op("p", "softmax", {"scores", "mask"}, {{"attention", true}})})},
                        {"outputs", {"p"}}};
    const Experiment e = build(graphConfig(graph));
    bool maskSent = false;
    forEachProgramStep(e.schedule.programs.at(0), [&](const Step& step) {
        if (const auto* x = std::get_if<ExchangeStep>(&step.op); x && x->name == "p.mask")
            maskSent = true;
    });
    CHECK(maskSent);
    CHECK(test::busiestStepCycles(e.schedule).count("mask") == 1);

    json bad = graph;
    bad["ops"][1].erase("attention");
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/1/inputs: expected one input"));
    bad = graph;
    bad["inputs"][1].erase("dtype");
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/0/inputs/0: expected integer sequence ids [batch, tokens], found non-integer"));
    bad = graph;
    bad["inputs"][0]["shape"] = {3, 16, 8};
    CHECK_THAT(errorOf(graphConfig(bad)),
               Catch::Contains("/workload/graph/ops/1/inputs/1: expected a mask [4, 16, 8] for scores [4, 3, 16, 8], found [4, 16, 16]"));
    // Only an attention_mask op's output: the softmax's gradient leaves the mask out.
    bad = graph;
    bad["inputs"].push_back({{"name", "learned"}, {"shape", {16, 16}}});
    bad["ops"][1]["inputs"] = {"scores", "learned"};
    CHECK_THAT(errorOf(graphConfig(bad)), Catch::Contains("/workload/graph/ops/1/inputs/1: expected the output of an attention_mask op, found \"learned\""));
    // Training through a mask used elsewhere: it gets no gradient, and no error.
    json train = graph;
    train["inputs"].push_back({{"name", "y"}, {"shape", {3, 16}}, {"dtype", "int32"}});
    train["ops"].push_back(op("biased", "add", {"p", "mask"}));
    train["ops"].push_back(op("loss", "cross_entropy", {"biased", "y"}));
    train["outputs"] = {"loss"};
    CHECK(errorOf(graphConfig(train, {{"mode", "train"}})) == "no error");
}

TEST_CASE("Graph workload: ceil-mode pooling keeps a last, partial window (torch's rule)", "[graph]")
{
    // torch.nn.MaxPool2d(3, 2, ceil_mode=True): 112 -> ceil(109 / 2) + 1 = 56 (floor mode 55);
    // with padding 1, 8 -> ceil(7 / 2) + 1 = 5 (floor 4); a window that would start in the right
    // padding is dropped: 5, kernel 2, stride 2, padding 1 -> ceil(5 / 2) + 1 = 4, (4 - 1) x 2 =
    // 6 >= 5 + 1, so 3.
    CHECK(ConvGeometry::outputs(112, 0, 3, 2, true) == 56);
    CHECK(ConvGeometry::outputs(112, 0, 3, 2, false) == 55);
    CHECK(ConvGeometry::outputs(8, 1, 3, 2, true) == 5);
    CHECK(ConvGeometry::outputs(8, 1, 3, 2, false) == 4);
    CHECK(ConvGeometry::outputs(5, 1, 2, 2, true) == 3);
    const json graph = {{"inputs", json::array({{{"name", "x"}, {"shape", {4, 8, 8}}}})},
                        {"ops", json::array({op("pool", "max_pool2d", {"x"}, {{"kernel_size", 3}, {"stride", 2}, {"ceil_mode", true}}),
                                             op("flat", "flatten", {"pool"}), op("fc", "linear", {"flat"}, {{"out_features", 10}})})},
                        {"outputs", {"fc"}}};
    // 4 x 4 windows of 4 channels reach the linear layer: 2 x 64 x 10 FLOPs.
    CHECK(build(graphConfig(graph)).schedule.modelFlopsPerSample == 2.0 * 64 * 10);
    json floor = graph;
    floor["ops"][0]["ceil_mode"] = false;
    CHECK(build(graphConfig(floor)).schedule.modelFlopsPerSample == 2.0 * 36 * 10);
}
