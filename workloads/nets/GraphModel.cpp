// SPDX-License-Identifier: MIT
#include "workloads/nets/GraphModel.hpp"

#include "workloads/graph/ModelBuilder.hpp"
#include "workloads/strategies/CompileGraph.hpp"

#include <fmt/format.h>

#include <map>

namespace ipusim {
namespace {

/** The strategy with the IPUs the layers name (poptorch.BeginBlock's ipu_id) as block IPUs;
 *  once one block names its IPU, every block must. */
StrategySpec withLayerIpus(const GraphSpec& spec, const Diagnostics& diag)
{
    StrategySpec s = spec.options.strategy;
    std::map<std::string, uint32_t> placed;
    const auto& layers = spec.model.layers;
    std::map<std::string, std::size_t> firstLayer; // block -> its first layer
    std::string block = "model";
    for (std::size_t i = 0; i < layers.size(); ++i) {
        block = layers[i].block.empty() ? block : layers[i].block;
        firstLayer.emplace(block, i);
        if (!layers[i].ipu)
            continue;
        const std::string at = fmt::format("{}/ops/{}/ipu", spec.model.pointer, i);
        if (s.stages || s.blockIpus)
            diag.fail(at, "expected no \"ipu\" on ops when /workload/strategy places the blocks");
        if (s.kind == StrategyKind::Single && *layers[i].ipu != 0)
            diag.fail(at, "expected /workload/strategy/kind \"pipelined\", \"sharded\" or \"phased\" to run a block on another IPU");
        auto [it, added] = placed.emplace(block, *layers[i].ipu);
        if (!added && it->second != *layers[i].ipu)
            diag.fail(at, fmt::format("block \"{}\" is already on IPU {}", block, it->second));
    }
    if (placed.empty())
        return s;
    for (const auto& [b, i] : firstLayer)
        if (!placed.count(b))
            diag.fail(fmt::format("{}/ops/{}", spec.model.pointer, i), fmt::format("expected an \"ipu\" for block \"{}\": other blocks name theirs", b));
    s.blockIpus = placed;
    return s;
}

} // namespace

Schedule compileGraphModel(const GraphSpec& spec, const SystemParams& system, const Diagnostics& diag)
{
    const WorkloadOptions& w = spec.options;
    CompileOptions opt = compileOptionsOf(w);
    ModelGraphInfo info;
    ModelGraph m;
    m.graph = buildModelGraph(spec.model, w.microBatch, opt.activations, opt.partials, opt.train, diag, info);
    m.forwardOps = m.graph.ops.size();
    if (info.outputs.empty())
        diag.fail(spec.model.pointer + "/outputs", "expected at least one output that the run computes");
    if (opt.train && info.losses.empty())
        diag.fail(spec.model.pointer + "/ops", "expected a loss op (cross_entropy) to train from, or \"mode\": \"infer\"");
    opt.out.tensors = info.outputs;
    opt.out.block = info.outputBlock;
    const Placement placement = resolvePlacement(withLayerIpus(spec, diag), m.graph.blocks, system, diag);
    opt.availableMemoryProportion = memoryProportions(spec.availableMemoryProportion, placement, diag);
    if (opt.train)
        m.training = addTraining(m.graph, trainingOptionsOf(opt, placement, info.losses, spec.optimizer, spec.masterWeights, spec.lossScaling));
    return compileGraph(m, system, placement, opt, w.microBatch, diag);
}

} // namespace ipusim
