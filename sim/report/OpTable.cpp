// SPDX-License-Identifier: MIT
#include "sim/report/OpTable.hpp"

#include "models/timing/VertexTable.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/OnnxModel.hpp"
#include "sim/config/Schema.hpp"
#include "sim/engine/Experiment.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

namespace ipusim {
namespace {

using json = nlohmann::json;

json op(const std::string& name, const std::string& kind, std::vector<std::string> inputs, const json& attrs = json::object())
{
    json o = {{"name", name}, {"op", kind}, {"inputs", inputs}};
    o.update(attrs);
    return o;
}

/** The ops of a graph op's probe: "probe" is the op, on activations with gradients (pre, pre2:
 *  1 x 1 convolutions of the image x [8, 4, 4]) or token ids t [4]; flattened into the loss. */
json probeOps(const std::string& kind)
{
    static const std::map<std::string, json> special = {
        {"conv2d", {{"out_channels", 8}, {"kernel_size", 3}, {"padding", 1}}},
        {"linear", {{"out_features", 8}}},
        {"max_pool2d", {{"kernel_size", 2}}},
        {"avg_pool2d", {{"kernel_size", 2}}},
        {"group_norm", {{"num_groups", 2}}},
        {"reshape", {{"shape", {8, 16}}}},
        {"transpose", {{"dims", {0, 2, 3, 1}}}},
        {"scale", {{"factor", 0.5}}},
        {"concat", {{"dim", 1}}},
        {"slice", {{"dim", 1}, {"start", 0}, {"end", 4}}},
        {"embedding", {{"num_embeddings", 16}, {"embedding_dim", 8}}},
        {"lstm", {{"hidden_size", 8}}},
        {"reduce", {{"dims", {2, 3}}}},
        {"pad", {{"pads", {{0, 0}, {1, 1}, {1, 1}}}, {"mode", "reflect"}}},
        {"gru", {{"hidden_size", 8}}},
        {"expand", {{"shape", {8, 4, 4}}}},
    };
    static const std::set<std::string> twoOperands = {"add", "sub", "mul", "div", "matmul", "concat", "masked_fill", "eq", "lt", "gt"};
    json ops = json::array({op("pre", "conv2d", {"x"}, {{"out_channels", 8}, {"kernel_size", 1}}),
                            op("pre2", "conv2d", {"x"}, {{"out_channels", 8}, {"kernel_size", 1}})});
    std::vector<std::string> in = {"pre"};
    if (twoOperands.count(kind))
        in.push_back("pre2");
    if (kind == "embedding" || kind == "attention_mask")
        in = {"t"};
    if (kind == "gather")
        in.push_back("t");
    if (kind == "expand") { // of a mean over the image, [8, 1, 1], back over it
        ops.push_back(op("mean", "reduce", {"pre"}, {{"dims", {2, 3}}, {"keepdim", true}}));
        in = {"mean"};
    }
    if (kind == "logical_not" || kind == "where") { // of a mask: pre > pre2
        ops.push_back(op("mask", "gt", {"pre", "pre2"}));
        in = kind == "where" ? std::vector<std::string>{"mask", "pre", "pre2"} : std::vector<std::string>{"mask"};
    }
    if (kind == "lstm" || kind == "gru") { // over a sequence [8 steps, 16 features]
        ops.push_back(op("seq", "reshape", {"pre"}, {{"shape", {8, 16}}}));
        in = {"seq"};
    }
    if (kind == "cross_entropy" || kind == "nll_loss") {
        ops.push_back(op("f", "flatten", {"pre"}));
        ops.push_back(op("lp", "log_softmax", {"f"}));
        ops.push_back(op("probe", kind, {kind == "nll_loss" ? "lp" : "f", "y"}));
        return ops;
    }
    if (kind == "parameter") {
        ops.push_back({{"name", "probe"}, {"op", "parameter"}, {"shape", {8, 1, 1}}});
        ops.push_back(op("use", "mul", {"pre", "probe"}));
    } else {
        auto it = special.find(kind);
        ops.push_back(op("probe", kind, in, it == special.end() ? json::object() : it->second));
    }
    ops.push_back(op("f", "flatten", {kind == "parameter" ? "use" : "probe"}));
    ops.push_back(op("loss", "cross_entropy", {"f", "y"}));
    return ops;
}

/** A probe's training program. */
Schedule compileProbe(const std::string& kind)
{
    const json graph = {{"inputs",
                         {{{"name", "x"}, {"shape", {8, 4, 4}}},
                          {{"name", "t"}, {"shape", {4}}, {"dtype", "int32"}},
                          {{"name", "y"}, {"shape", json::array()}, {"dtype", "int32"}}}},
                        {"ops", probeOps(kind)},
                        {"outputs", {"f"}}};
    const json doc = {{"workload", {{"kind", "graph"}, {"mode", "train"}, {"micro_batch", 2}, {"graph", graph}}}};
    return buildExperiment(config::loadConfig(doc, "op probe \"" + kind + "\"", {"/system=mk2"})).schedule;
}

/** The vertex rows (names) of a probe's steps: "probe" and "probe.*", forward or gradient. */
std::map<std::string, std::set<std::string>> probeSteps(const Schedule& s)
{
    std::map<std::string, std::set<std::string>> steps;
    for (const Program& p : s.programs)
        forEachProgramStep(p, [&](const Step& step) {
            const auto* c = std::get_if<ComputeStep>(&step.op);
            if (!c || (c->name != "probe" && c->name.rfind("probe.", 0) != 0 && c->name.rfind("probe ", 0) != 0))
                return;
            for (const std::string& type : c->vertexTypes) {
                const auto codelet = Codelet::parse(type);
                steps[c->name].insert(codelet ? rowOf(codelet->vertex()).name : type);
            }
        });
    return steps;
}

bool endsWith(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string joined(const std::vector<std::string>& names, const std::string& none)
{
    if (names.empty())
        return none;
    std::vector<std::string> quoted;
    for (const auto& n : names)
        quoted.push_back("`" + n + "`");
    return fmt::format("{}", fmt::join(quoted, ", "));
}

} // namespace

std::vector<GraphOpVertices> probeGraphOps()
{
    std::vector<GraphOpVertices> out;
    for (const auto& [kind, form] : config::Schema::instance().root().at("definitions").at("graph_ops").items()) {
        (void)form;
        GraphOpVertices v{kind, {}, {}};
        std::set<std::string> forward, gradient;
        // The gradient's steps name it (probe.grad, .wgrad, .grad_lhs, .bias_add.grad); the
        // optimizer's update of the op's weights (.adamw) is the optimizer's, not the op's.
        for (const auto& [name, vertices] : probeSteps(compileProbe(kind)))
            if (!endsWith(name, ".adamw"))
                (name.find("grad") != std::string::npos ? gradient : forward).insert(vertices.begin(), vertices.end());
        v.forward.assign(forward.begin(), forward.end());
        v.gradient.assign(gradient.begin(), gradient.end());
        out.push_back(std::move(v));
    }
    return out;
}

std::string opTableMarkdown()
{
    std::map<std::string, GraphOpVertices> graphOps;
    for (auto& v : probeGraphOps())
        graphOps.emplace(v.graphOp, v);
    std::set<std::string> used;
    std::string md =
        "# Op table\n\n"
        "Generated by `ipusim ops` from the ONNX importer's registry and the compiler; the suite fails when this page and "
        "the command differ. Each ONNX op the importer maps, the [graph ops](../user-guide.md#your-own-model-graph-workloads) it becomes, "
        "the vertices those compile to, and where each vertex's cycles come from (PopLibs' estimator, restated in "
        "`poplibs-costs.md` section by section). An ONNX op not listed stops the import, with every node in the way "
        "named.\n\n"
        "## ONNX ops\n\n| ONNX op | graph ops | how |\n|---|---|---|\n";
    for (const auto& row : config::onnxOpTable())
        md += fmt::format("| `{}` | {} | {} |\n", row.op, joined(row.graphOps, "— (folded away)"), row.how);
    md += "\n## Graph ops\n\nEach compiled in a probe, a small training graph at micro-batch 2 (`sim/report/OpTable.cpp`): the "
          "codelets of its forward compute sets and of its gradient's. Other shapes may pick other vertices where a planner "
          "chooses (a convolution's `ConvPartialnx1`, which the probe's small convolution does not pick, or a "
          "reduction's specialisation).\n\n| graph op | forward vertices | gradient vertices |\n|---|---|---|\n";
    for (const auto& [kind, v] : graphOps) {
        md += fmt::format("| `{}` | {} | {} |\n", kind, joined(v.forward, "— (no compute: a view, or a weight)"), joined(v.gradient, "—"));
        used.insert(v.forward.begin(), v.forward.end());
        used.insert(v.gradient.begin(), v.gradient.end());
    }
    md += "\n## Vertices\n\n| vertex | cycles from |\n|---|---|\n";
    for (const VertexRow& row : vertexTable())
        if (used.count(row.name))
            md += fmt::format("| `{}` | {} |\n", row.name, row.source);
    return md;
}

} // namespace ipusim
