// SPDX-License-Identifier: MIT
// The activation table (workloads/graph/Activation.hpp), generated from the schema's graph_ops:
// every row reaches the JSON graph, ONNX, training and a recipe that prices.
#include "Simulate.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/config/ExperimentSpec.hpp"
#include "sim/config/OnnxModel.hpp"
#include "sim/config/Schema.hpp"
#include "sim/engine/Experiment.hpp"
#include "workloads/graph/Activation.hpp"
#include "workloads/graph/ModelBuilder.hpp"
#include "workloads/lowering/ActivationCalls.hpp"
#include "workloads/training/Training.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

using namespace ipusim;

namespace {

/** x -> linear -> the activation -> a cross-entropy loss, with its backward pass. */
Graph trainedThrough(const ActivationRow& row)
{
    ModelSpec m;
    m.inputs = {{"x", {16}, false, false, "", std::nullopt}, {"y", {}, true, false, "", std::nullopt}};
    LayerSpec fc, act, loss;
    fc.name = "fc";
    fc.kind = LayerKind::Linear;
    fc.inputs = {"x"};
    fc.features = 8;
    act.name = "act";
    act.kind = row.layer;
    act.inputs = {"fc"};
    loss.name = "loss";
    loss.kind = LayerKind::CrossEntropy;
    loss.inputs = {"act", "y"};
    m.layers = {fc, act, loss};
    m.outputs = {"act"};
    ModelGraphInfo info;
    Graph g = buildModelGraph(m, 2, Precision::FP16, Precision::FP32, true, test::ThrowingDiagnostics(), info);
    addTraining(g, {info.losses, false, Precision::FP32, {}});
    return g;
}

/** The compute steps of every program and fragment, by name. */
void computeSteps(const std::vector<Step>& steps, std::map<std::string, const ComputeStep*>& out)
{
    for (const Step& s : steps) {
        if (const auto* c = std::get_if<ComputeStep>(&s.op))
            out[c->name] = c;
        else if (const auto* r = std::get_if<RepeatStep>(&s.op))
            computeSteps(r->body, out);
    }
}

const Op& opOfKind(const Graph& g, OpKind kind)
{
    auto it = std::find_if(g.ops.begin(), g.ops.end(), [&](const Op& op) { return op.kind == kind; });
    REQUIRE(it != g.ops.end());
    return *it;
}

} // namespace

TEST_CASE("Activations: every row of the table is a graph op, an ONNX op, a gradient and a recipe", "[graph][activation]")
{
    const auto& table = activationTable();
    REQUIRE(table.size() >= 5);
    const auto& schemaOps = config::Schema::instance().root().at("definitions").at("graph_ops");
    const auto& onnxOps = config::supportedOnnxOps();
    std::set<std::string> names;
    const IpuParams hw;
    for (const ActivationRow& row : table) {
        INFO("activation " << row.graphName);
        CHECK(names.insert(row.graphName).second);
        // Declared in the schema as an activation, and found again by its kinds.
        REQUIRE(schemaOps.contains(row.graphName));
        CHECK(schemaOps.at(row.graphName).value("$ref", "") == "#/definitions/activation");
        CHECK(activationOf(row.layer) == &row);
        CHECK(activationOf(row.op) == &row);
        CHECK(activationOf(row.grad) == &row);
        if (*row.onnxName)
            CHECK(std::count(onnxOps.begin(), onnxOps.end(), row.onnxName) == 1);
        // A recipe forward and backward, each priced by the vertex table.
        for (OpKind kind : {row.op, row.grad}) {
            const auto calls = activationCalls(kind, Precision::FP16, 3072);
            REQUIRE_FALSE(calls.empty());
            for (const VertexCall& call : calls)
                CHECK(cyclesOf(hw, call) > 0);
        }
        // Training reads the incoming gradient and the input or output the row names.
        const Graph g = trainedThrough(row);
        const Op& forward = opOfKind(g, row.op);
        const Op& gradient = opOfKind(g, row.grad);
        REQUIRE(gradient.inputs.size() == 2);
        CHECK(gradient.inputs[1] == (row.reads == GradientReads::Output ? forward.outputs[0] : forward.inputs[0]));
    }
    // An activation whose gradient reads its input cannot give the input's memory to its output.
    for (const ActivationRow& row : table) {
        INFO("activation " << row.graphName);
        CHECK_FALSE((row.inPlace && row.reads == GradientReads::Input));
    }
    // Kinds that are not activations have no row, and no recipe.
    CHECK(activationOf(LayerKind::Conv2d) == nullptr);
    CHECK(activationOf(OpKind::Softmax) == nullptr);
    CHECK_THROWS_AS(activationCalls(OpKind::Softmax, Precision::FP16, 8), std::logic_error);
}

TEST_CASE("Activations: the recipes by hand", "[graph][activation]")
{
    const IpuParams hw;
    auto cycles = [&](OpKind kind) {
        uint64_t n = 0;
        for (const VertexCall& call : activationCalls(kind, Precision::FP16, 3072))
            n += cyclesOf(hw, call);
        return n;
    };
    // poplibs-costs §3.4 and §3.5 check values, fp16, n = 3,072: UnaryOp1DInPlace<RELU> 1,886,
    // GELU 4,041, its gradient 4,005, ReLU's gradient 2,481 (as are sigmoid's and tanh's: g = 3).
    CHECK(cycles(OpKind::Relu) == 1886);
    CHECK(cycles(OpKind::ReluGrad) == 2481);
    CHECK(cycles(OpKind::Gelu) == 4041);
    CHECK(cycles(OpKind::GeluGrad) == 4005);
    CHECK(cycles(OpKind::SigmoidGrad) == 2481);
    CHECK(cycles(OpKind::TanhGrad) == 2481);
    // §3.4, 512 elements per worker, fp16 vectors of 4: SigmoidInplace 20 + 6 (55 + 128 x 4);
    // tanh 20 + 6 (17 + 128 x 4); exp 20 + 6 (33 + 128 x 4); exp's gradient, dy times the
    // output, BinaryOp1D<MULTIPLY> 11 + 6 (26 + 128 x 3).
    CHECK(cycles(OpKind::Sigmoid) == 20 + 6 * (55 + 512));
    CHECK(cycles(OpKind::Tanh) == 20 + 6 * (17 + 512));
    CHECK(cycles(OpKind::Exp) == 20 + 6 * (33 + 512));
    CHECK(cycles(OpKind::ExpGrad) == 11 + 6 * (26 + 384));
    // sqrt 20 + 6 (17 + 128 x 23); its gradient, the output times 2 (a scalar broadcast, 20 + 2
    // cycles a vector per worker) then dy divided by it (11 + 6 (26 + 128 x 21)).
    CHECK(cycles(OpKind::Sqrt) == 20 + 6 * (17 + 128 * 23));
    CHECK(cycles(OpKind::SqrtGrad) == 11 + 6 * (20 + 2 * 128) + 11 + 6 * (26 + 128 * 21));
    // erf 20 + 6 (17 + 512 x 13); its gradient: square 20 + 6 (17 + 128 x 2), negate in place
    // 20 + 6 (55 + 128 x 3), exp in place 20 + 6 (55 + 128 x 4), the scalar 11 + 6 (20 + 2 x
    // 128), times dy 11 + 6 (26 + 128 x 3).
    CHECK(cycles(OpKind::Erf) == 20 + 6 * (17 + 512 * 13));
    // pow, BroadcastScalar1D<POWER>: 11 + 6 (20 + 325 an element, 512 a worker); its gradient
    // that again (x to c - 1), times c 11 + 6 (20 + 2 x 128), times dy 11 + 6 (26 + 128 x 3),
    // and the Where (SelectInPlace's 16 a worker).
    CHECK(cycles(OpKind::Pow) == 11 + 6 * (20 + 512 * 325));
    CHECK(cycles(OpKind::PowGrad) == 11 + 6 * (20 + 512 * 325) + 11 + 6 * (20 + 2 * 128) + 11 + 6 * (26 + 128 * 3) + 6 * 16);
    // clip, ClampInPlace: 6 x (5 + 6 + 2 x 128 vectors); its gradient per bound: NOT_EQUAL against
    // the scalar 11 + 6 (20 + 10 x 128), the cast from bool 12 + 6 (19 + 2 x 512 + 18), times dy
    // 11 + 6 (26 + 128 x 3).
    CHECK(cycles(OpKind::Clip) == 6 * (5 + 6 + 2 * 128));
    // hard_sigmoid, the copy of x (an element a cycle) and one generated MultiVertex: 20 + 768
    // vectors x 4 ops = 3092, up to 3096; its gradient, not vectorised, a vertex a worker:
    // 6 x (13 + 2 inputs x 128 x 11 ops).
    CHECK(cycles(OpKind::HardSigmoid) == 3072 + 3096);
    CHECK(cycles(OpKind::HardSigmoidGrad) == 6 * (13 + 2 * 128 * 11));
    // hard_swish, PopTorch's seven ops: the copy (an element a cycle) 3072, max 11 + 6 (20 + 3 x
    // 128), abs 20 + 6 (17 + 5 x 512), the comparison 11 + 6 (20 + 8 x 128), + 3 11 + 6 (20 + 2 x
    // 128), times x in place 11 + 6 (58 + 3 x 128), / 6 11 + 6 (20 + 8 x 256), the select 6 x 16.
    CHECK(cycles(OpKind::HardSwish) == 3072 + (11 + 6 * (20 + 3 * 128)) + (20 + 6 * (17 + 5 * 512)) + (11 + 6 * (20 + 8 * 128)) +
                                           (11 + 6 * (20 + 2 * 128)) + (11 + 6 * (58 + 3 * 128)) + (11 + 6 * (20 + 8 * 256)) + 6 * 16);
    // Its gradient: two casts from bool 12 + 6 (19 + 2 x 512 + 18), six multiplies or adds
    // 11 + 6 (26 + 3 x 128), the NOT 20 + 6 (17 + 21 x 512), / 6 as above, the max's codelet
    // 6 x (13 + 3 inputs x 128 x 4 ops).
    CHECK(cycles(OpKind::HardSwishGrad) == 2 * (12 + 6 * (19 + 2 * 512 + 18)) + 6 * (11 + 6 * (26 + 3 * 128)) +
                                               (20 + 6 * (17 + 21 * 512)) + (11 + 6 * (20 + 8 * 256)) + 6 * (13 + 3 * 128 * 4));
    // reciprocal, DIVIDE 11 + 6 (26 + 128 x 21); its gradient: square 20 + 6 (17 + 128 x 2), DIVIDE,
    // negate in place 20 + 6 (55 + 128 x 3), times dy 11 + 6 (26 + 128 x 3).
    CHECK(cycles(OpKind::Reciprocal) == 11 + 6 * (26 + 128 * 21));
    CHECK(cycles(OpKind::ReciprocalGrad) ==
          20 + 6 * (17 + 128 * 2) + 11 + 6 * (26 + 128 * 21) + 20 + 6 * (55 + 128 * 3) + 11 + 6 * (26 + 128 * 3));
    CHECK(cycles(OpKind::ClipGrad) == 2 * ((11 + 6 * (20 + 10 * 128)) + (12 + 6 * (19 + 2 * 512 + 18)) + (11 + 6 * (26 + 128 * 3))));
    CHECK(cycles(OpKind::ErfGrad) == 20 + 6 * (17 + 128 * 2) + 20 + 6 * (55 + 128 * 3) + 20 + 6 * (55 + 128 * 4) + 11 + 6 * (20 + 2 * 128) +
                                         11 + 6 * (26 + 128 * 3));
}

TEST_CASE("Activations: each gradient reads what its derivative needs", "[graph][activation]")
{
    // d relu = dy [y > 0]; d tanh = dy (1 - y^2); d sigmoid = dy y (1 - y); d exp = dy y;
    // d sqrt = dy / (2 y); d erf = dy 2 / sqrt(pi) exp(-x^2); d clip = dy inside the bounds;
    // d reciprocal = -dy / x^2, as PopART's pattern computes it from x; d pow = dy c x^(c - 1);
    // hard_sigmoid's and hard_swish's are functions of x; GELU's
    // derivative is a function of x only. A new row adds its line here.
    const std::map<std::string, GradientReads> expected = {{"relu", GradientReads::Output}, {"tanh", GradientReads::Output},
                                                           {"sigmoid", GradientReads::Output}, {"exp", GradientReads::Output},
                                                           {"sqrt", GradientReads::Output}, {"erf", GradientReads::Input},
                                                           {"clip", GradientReads::Output}, {"hard_sigmoid", GradientReads::Input},
                                                           {"hard_swish", GradientReads::Input}, {"reciprocal", GradientReads::Input},
                                                           {"gelu", GradientReads::Input}, {"pow", GradientReads::Input}};
    for (const ActivationRow& row : activationTable()) {
        INFO("activation " << row.graphName);
        REQUIRE(expected.count(row.graphName));
        CHECK(row.reads == expected.at(row.graphName));
    }
}

TEST_CASE("Activations: every row trains end to end from a JSON graph, its codelets the recipe's", "[graph][activation]")
{
    using json = nlohmann::json;
    for (const ActivationRow& row : activationTable()) {
        INFO("activation " << row.graphName);
        const json graph = {
            {"inputs", {{{"name", "x"}, {"shape", {64}}}, {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}}},
            {"ops",
             {{{"name", "fc"}, {"op", "linear"}, {"inputs", {"x"}}, {"out_features", 32}},
              {{"name", "act"}, {"op", row.graphName}, {"inputs", {"fc"}}},
              {{"name", "loss"}, {"op", "cross_entropy"}, {"inputs", {"act", "y"}}}}},
            {"outputs", {"act"}}};
        const json doc = {{"system", {{"base", "hardware/mk2.json"}}},
                          {"workload", {{"kind", "graph"}, {"mode", "train"}, {"micro_batch", 4}, {"graph", graph}}}};
        const Experiment e = buildExperiment(config::loadConfig(doc, test::kRoot + "/configs/g.json"));
        std::map<std::string, const ComputeStep*> steps;
        for (const Program& p : e.schedule.programs) {
            computeSteps(p.steps, steps);
            for (const auto& f : p.fragments)
                computeSteps(f, steps);
        }
        for (const auto& [name, kind] : {std::pair{"act", row.op}, std::pair{"act.grad", row.grad}}) {
            INFO(name);
            REQUIRE(steps.count(name));
            std::set<std::string> expected;
            for (const VertexCall& call : activationCalls(kind, Precision::FP32, 8))
                expected.insert(call.codelet.name());
            CHECK(std::set<std::string>(steps.at(name)->vertexTypes.begin(), steps.at(name)->vertexTypes.end()) == expected);
        }
    }
}
