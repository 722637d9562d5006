// SPDX-License-Identifier: MIT
// Recurrent layers (lstm, gru): one op that loops over the steps on the IPU, as popnn's RNNs;
// its training ops, the cell's vertices by hand, the loop in the program, the engines agreeing.
#include "Simulate.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/Experiment.hpp"
#include "workloads/graph/ModelBuilder.hpp"
#include "workloads/lowering/RecurrentCalls.hpp"
#include "workloads/training/Training.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;

namespace {

using test::kRoot;

/** ids [S] -> embedding [S, 32] -> 2 recurrent layers of 64 -> linear 256 -> cross-entropy. */
json languageModel(const std::string& cell, const std::string& mode = "train", uint64_t steps = 16)
{
    auto op = [](const std::string& name, const std::string& kind, const std::string& in, const json& attrs) {
        json o = {{"name", name}, {"op", kind}, {"inputs", {in}}};
        o.update(attrs);
        return o;
    };
    json ops = json::array({op("emb", "embedding", "ids", {{"num_embeddings", 256}, {"embedding_dim", 32}}),
                            op("rnn0", cell, "emb", {{"hidden_size", 64}}), op("rnn1", cell, "rnn0", {{"hidden_size", 64}}),
                            op("out", "linear", "rnn1", {{"out_features", 256}})});
    ops.push_back({{"name", "loss"}, {"op", "cross_entropy"}, {"inputs", {"out", "labels"}}});
    json graph = {{"inputs", {{{"name", "ids"}, {"shape", {steps}}, {"dtype", "int32"}}, {{"name", "labels"}, {"shape", {steps}}, {"dtype", "int32"}}}},
                  {"ops", ops},
                  {"outputs", {mode == "train" ? "loss" : "out"}}};
    return {{"system", {{"base", "hardware/mk2.json"}}},
            {"workload", {{"kind", "graph"}, {"mode", mode}, {"micro_batch", 4}, {"graph", graph}}}};
}

Experiment build(const json& doc) { return buildExperiment(config::loadConfig(doc, kRoot + "/configs/rnn.json")); }

const RepeatStep* findRepeat(const std::vector<Step>& steps, const std::string& name)
{
    for (const Step& s : steps)
        if (const auto* r = std::get_if<RepeatStep>(&s.op)) {
            if (r->name == name)
                return r;
            if (const RepeatStep* inner = findRepeat(r->body, name))
                return inner;
        }
    return nullptr;
}

std::vector<std::string> computeNames(const std::vector<Step>& steps)
{
    std::vector<std::string> names;
    for (const Step& s : steps)
        if (const auto* c = std::get_if<ComputeStep>(&s.op))
            names.push_back(c->name);
    return names;
}

uint64_t cycles(const std::vector<VertexCall>& calls)
{
    const IpuParams hw;
    uint64_t n = 0;
    for (const VertexCall& c : calls)
        n += cyclesOf(hw, c);
    return n;
}

} // namespace

TEST_CASE("Recurrent: an LSTM step's cell by hand", "[graph][recurrent]")
{
    // fp16, u = 96 state elements on the tile (each worker's share a whole number of vectors of
    // 4), poplibs-costs §3.4 and §3.7: BinaryOp1D 11 + 6 (26 + 3 a vector), in place 58 for 26;
    // UnaryOp1D 20 + 6 (17 + c a vector), in place 55 for 17, sigmoid in place 4, tanh 4 (in
    // place 2); the copy an fp16 element a cycle.
    const uint64_t expected = (11 + 6 * (58 + 3 * 16))   // AddBias, 4u in place: 16 vectors a worker
                              + (20 + 6 * (55 + 4 * 12)) // three gates' sigmoid, 3u in place
                              + (20 + 6 * (55 + 2 * 4))  // candidate's tanh, in place
                              + (11 + 6 * (26 + 3 * 8))  // {f, i} x {c, g}, 2u
                              + (11 + 6 * (58 + 3 * 4))  // c = f c + i g, in place
                              + (20 + 6 * (17 + 4 * 4))  // tanh(c)
                              + (11 + 6 * (26 + 3 * 4))  // h = o tanh(c)
                              + 7 * 96;                  // h and the six intermediates into their sequences
    CHECK(expected == 3554);
    CHECK(cycles(recurrentStepCalls(RecurrentCell::Lstm, Precision::FP16, 96)) == expected);
    // Backward: the step's dy and intermediates out (7u elements), dy + dh (u), MulOGate (2u),
    // tanh' and sigmoid' (NonLinearityGrad1D 9 + 6 (20 + 5 + 3 (v - 1) + 6), v = 4 vectors a
    // worker), AddCellState in place, the four products (4u), three more gradients, and the
    // four gate gradients into their sequence (4u).
    const uint64_t grad1 = 9 + 6 * (20 + 5 + 3 * 3 + 6);
    const uint64_t backward = 7 * 96 + (11 + 6 * (26 + 3 * 4)) + (11 + 6 * (26 + 3 * 8)) + 2 * grad1 + (11 + 6 * (58 + 3 * 4)) +
                              (11 + 6 * (26 + 3 * 16)) + 3 * grad1 + 4 * 96;
    CHECK(cycles(recurrentStepGradCalls(RecurrentCell::Lstm, Precision::FP16, 96)) == backward);
    // A GRU step: the biases (6u) and the reset and update gates' recurrent part (2u) added in
    // place, their sigmoid in place (2u), the reset times the candidate's recurrent part and the
    // input part added (in place), the candidate's tanh in place, h = c + u (h - c) as three
    // element-wise ops, and h with four intermediates into their sequences.
    const uint64_t gru = (11 + 6 * (58 + 3 * 24)) + (11 + 6 * (58 + 3 * 8)) + (20 + 6 * (55 + 4 * 8)) + 2 * (11 + 6 * (58 + 3 * 4)) +
                         (20 + 6 * (55 + 2 * 4)) + (11 + 6 * (26 + 3 * 4)) + 2 * (11 + 6 * (58 + 3 * 4)) + 5 * 96;
    CHECK(cycles(recurrentStepCalls(RecurrentCell::Gru, Precision::FP16, 96)) == gru);
}

TEST_CASE("Recurrent: a layer is one op forward and backward through time, its weights' gradients over every step", "[graph][recurrent]")
{
    for (const char* cell : {"lstm", "gru"}) {
        INFO(cell);
        const Experiment e = build(languageModel(cell));
        const uint64_t G = std::string(cell) == "lstm" ? 4 : 3, S = 16, H = 64;
        const Program& p = e.schedule.programs.at(0);
        // The forward loop: S steps of the step's matmul of [x_t, h_t-1] and the cell.
        auto repeatOf = [&](const std::string& name) {
            const RepeatStep* r = findRepeat(p.steps, name);
            for (std::size_t f = 0; !r && f < p.fragments.size(); ++f)
                r = findRepeat(p.fragments[f], name);
            return r;
        };
        const RepeatStep* forward = repeatOf("rnn1.steps");
        REQUIRE(forward != nullptr);
        CHECK(forward->count == S);
        const auto names = computeNames(forward->body);
        CHECK(std::count(names.begin(), names.end(), "rnn1.step.cell") == 1);
        const RepeatStep* backward = repeatOf("rnn1.grad.steps");
        REQUIRE(backward != nullptr);
        CHECK(backward->count == S);
        // Model FLOPs: forward each step's matmuls and the head; training three times that.
        const double forwardFlops = 2.0 * double(S) * double(G * H * (32 + H) + G * H * (2 * H) + H * 256);
        CHECK(e.schedule.modelFlopsPerSample == Approx(3 * forwardFlops));
        // The weights: [G H, I + H] and [2 G H] biases a layer, as torch's parameters count.
        const uint64_t params = 256 * 32 + (G * H * (32 + H) + 2 * G * H) + (G * H * (2 * H) + 2 * G * H) + (H * 256 + 256);
        uint64_t weights = 0;
        for (const auto& t : p.tensors)
            if (t.kind == "weight")
                for (const auto& r : t.bytes.runs())
                    weights += uint64_t(r.count) * r.value;
        CHECK(weights == 4 * params);
    }
}

TEST_CASE("Recurrent: training adds the backward loop, the weights' matmul over every step and the biases' sums", "[graph][recurrent]")
{
    ModelSpec m;
    m.inputs = {{"x", {8, 16}, false, false, "", std::nullopt}};
    LayerSpec l;
    l.name = "rnn";
    l.kind = LayerKind::Lstm;
    l.inputs = {"x"};
    l.features = 32;
    m.layers = {l};
    LayerSpec head;
    head.name = "loss";
    head.kind = LayerKind::CrossEntropy;
    head.inputs = {"rnn", "y"};
    m.inputs.push_back({"y", {8}, true, false, "", std::nullopt});
    m.layers.push_back(head);
    m.outputs = {"loss"};
    ModelGraphInfo info;
    Graph g = buildModelGraph(m, 2, Precision::FP16, Precision::FP32, true, test::ThrowingDiagnostics(), info);
    const auto rnn = std::find_if(g.ops.begin(), g.ops.end(), [](const Op& op) { return op.kind == OpKind::Recurrent; });
    REQUIRE(rnn != g.ops.end());
    CHECK(g.tensor(rnn->outputs.at(0)).shape == std::vector<uint64_t>{2, 8, 32});
    CHECK(g.tensor(rnn->outputs.at(1)).shape == std::vector<uint64_t>{2, 8, 6 * 32}); // six saved [B, H] a step
    CHECK(g.tensor(rnn->inputs.at(1)).shape == std::vector<uint64_t>{4 * 32, 16 + 32});
    CHECK(g.tensor(rnn->inputs.at(2)).shape == std::vector<uint64_t>{8 * 32});
    TrainingOptions opt;
    opt.losses = info.losses;
    addTraining(g, opt);
    auto named = [&](const std::string& name) -> const Op& {
        const auto it = std::find_if(g.ops.begin(), g.ops.end(), [&](const Op& op) { return op.name == name; });
        REQUIRE(it != g.ops.end());
        return *it;
    };
    const Op& grad = named("rnn.grad");
    CHECK(grad.kind == OpKind::RecurrentGrad);
    CHECK(grad.outputs.size() == 1); // x is a model input: no dx
    CHECK(g.tensor(grad.outputs[0]).shape == std::vector<uint64_t>{2, 8, 4 * 32});
    const Op& wgrad = named("rnn.wgrad");
    CHECK(wgrad.kind == OpKind::Conv);
    CHECK(wgrad.conv.positions == 16 + 32);
    CHECK(wgrad.conv.reduction == 2 * 8);
    CHECK(wgrad.conv.outChans == 4 * 32);
    CHECK(named("rnn.bias_grad").channels == 4 * 32);
    CHECK(g.tensor(named("rnn.bias_grad_both").outputs[0]).shape == std::vector<uint64_t>{8 * 32});
}

TEST_CASE("Recurrent: inference saves nothing, and the reference engine agrees with the fast one", "[graph][recurrent]")
{
    const Experiment e = build(languageModel("gru", "infer"));
    for (const auto& t : e.schedule.programs.at(0).tensors)
        CHECK(t.name.find(".saved") == std::string::npos);
    for (const char* cell : {"lstm", "gru"}) {
        INFO(cell);
        CHECK(test::engineDisagreement(languageModel(cell, "train", 4)) == "");
    }
}
