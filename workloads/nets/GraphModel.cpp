// SPDX-License-Identifier: MIT
#include "workloads/nets/GraphModel.hpp"

#include "workloads/graph/ModelBuilder.hpp"
#include "workloads/strategies/CompileGraph.hpp"

#include <fmt/format.h>

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
        diag.fail(spec.model.lossPointer, fmt::format("expected {} to train from, or \"mode\": \"infer\"", spec.model.lossExpected));
    opt.out.tensors = info.outputs;
    opt.out.block = info.outputBlock;
    const Placement placement = resolvePlacement(withBlockIpus(w.strategy, info, diag), m.graph.blocks, system, diag);
    opt.availableMemoryProportion = memoryProportions(spec.availableMemoryProportion, placement, diag);
    if (opt.train)
        m.training = addTraining(m.graph, trainingOptionsOf(opt, placement, info.losses, spec.optimizer));
    return compileGraph(m, system, placement, opt, diag);
}

} // namespace ipusim
