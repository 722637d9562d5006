// SPDX-License-Identifier: MIT
#include "workloads/nets/GraphModel.hpp"

#include "workloads/graph/ModelBuilder.hpp"
#include "workloads/strategies/CompileGraph.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace ipusim {
namespace {

/** The strategy with the IPUs the model's ops name for their blocks as its block IPUs. */
StrategySpec withBlockIpus(const StrategySpec& strategy, const ModelGraphInfo& info, const Diagnostics& diag)
{
    StrategySpec s = strategy;
    if (info.blockIpus.empty())
        return s;
    for (const auto& [block, ipu] : info.blockIpus) {
        const std::string& at = info.blockIpuPointers.at(block);
        if (s.stages || s.blockIpus)
            diag.fail(at, "expected no \"ipu\" on ops when /workload/strategy places the blocks");
        if (s.kind == StrategyKind::Single && ipu != 0)
            diag.fail(at, "expected /workload/strategy/kind \"pipelined\", \"sharded\" or \"phased\" to run a block on another IPU");
    }
    s.blockIpus = info.blockIpus;
    return s;
}

/** PopART outlines identical subgraphs: the updates of weights of one shape are the same code,
 *  compiled once. Keys the steps of an update op that depend only on the weight's (linear)
 *  layout (the update, LAMB's and LARS's norms and trust ratio) by the optimizer and the
 *  weight's shape and type. */
std::function<std::string(const std::string&)> updateOutlining(const Graph& g, const TrainingOps& training)
{
    auto keys = std::make_shared<std::map<std::string, std::string>>();
    for (std::size_t i : training.update) {
        const Op& op = g.ops[i];
        const TensorDesc& w = g.tensor(op.inputs.at(0));
        const std::string optimizer = op.name.substr(op.name.rfind('.') + 1);
        (*keys)[op.name] =
            fmt::format("{}[{}]{}{}", optimizer, fmt::join(w.shape, "x"), nameOf(w.type), op.masterWeights ? "+master" : "");
    }
    return [keys](const std::string& step) {
        // Not the gradient's gather (".grad"): it depends on where the gradient's producer put it.
        for (const char* suffix : {"", ".norms", ".norms.in", ".trust_ratio", ".trust_ratio.out", ".apply"}) {
            const std::size_t n = std::char_traits<char>::length(suffix);
            if (step.size() <= n || step.compare(step.size() - n, n, suffix) != 0)
                continue;
            auto it = keys->find(step.substr(0, step.size() - n));
            if (it != keys->end())
                return it->second + suffix;
        }
        return std::string();
    };
}

/** The model with its float data inputs streamed as `type` (those given their own type keep it). */
ModelSpec withInputType(ModelSpec model, std::optional<Precision> type)
{
    for (ModelInput& in : model.inputs)
        if (type && !in.integer && !in.eightBit && !in.hostType)
            in.hostType = type;
    return model;
}

} // namespace

CompiledSchedule compileModel(const ModelSpec& model, const WorkloadOptions& options, const OptimizerSpec& optimizer,
                      const MemoryProportion& memoryProportion, const ModelCompileChoices& choices, const SystemParams& system,
                      const Diagnostics& diag)
{
    CompileOptions opt = compileOptionsOf(options);
    ModelGraphInfo info;
    ModelGraph m;
    m.graph = buildModelGraph(withInputType(model, options.inputType), options.microBatch, opt.activations, opt.partials,
                              choices.withLoss, diag, info);
    m.forwardOps = m.graph.ops.size();
    if (info.outputs.empty())
        diag.fail(model.pointer + "/outputs", "expected at least one output that the run computes");
    if (opt.train && info.losses.empty())
        diag.fail(model.lossPointer, fmt::format("expected {} to train from, or \"mode\": \"infer\"", model.lossExpected));
    opt.out.tensors = info.outputs;
    opt.out.block = info.outputBlock;
    const Placement placement = choices.place(m.graph.blocks, info);
    opt.availableMemoryProportion = memoryProportions(memoryProportion, placement, diag);
    if (opt.train)
        m.training = addTraining(m.graph, trainingOptionsOf(opt, placement, info.losses, optimizer));
    if (choices.outline)
        opt.outline = choices.outline;
    else if (opt.train)
        opt.outline = updateOutlining(m.graph, m.training);
    return compileGraph(m, system, placement, opt, diag);
}

CompiledSchedule compileGraphModel(const GraphSpec& spec, const SystemParams& system, const Diagnostics& diag)
{
    ModelCompileChoices choices;
    choices.withLoss = spec.options.train;
    choices.place = [&](const std::vector<std::string>& blocks, const ModelGraphInfo& info) {
        return resolvePlacement(withBlockIpus(spec.options.strategy, info, diag), blocks, system, diag);
    };
    return compileModel(spec.model, spec.options, spec.optimizer, spec.availableMemoryProportion, choices, system, diag);
}

} // namespace ipusim
