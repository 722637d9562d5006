// SPDX-License-Identifier: MIT
#include "workloads/strategies/StrategyParts.hpp"

#include <string_view>
#include <unordered_map>

namespace ipusim {

std::vector<const Op*> opsOf(const Graph& g, const std::vector<std::size_t>& indices, const std::function<bool(const Op&)>& keep)
{
    std::vector<const Op*> out;
    for (std::size_t i : indices)
        if (keep(g.ops[i]))
            out.push_back(&g.ops[i]);
    return out;
}

bool recomputable(const Op& op)
{
    // The attention mask feeds only forward softmaxes (their gradients read the outputs), and
    // the recomputed layers read it from the stash: nothing needs it built again.
    return op.kind != OpKind::HostLoad && op.kind != OpKind::AttentionMask && !isLoss(op.kind);
}

Op storeOp(const OutputPlan& out)
{
    Op op{"host.store", OpKind::HostStore, out.tensors, {}, {}, {}, 1, 1, true, out.block};
    return op;
}

std::vector<std::string> producerBlocks(const Graph& g)
{
    std::vector<std::string> producer(g.tensors.size());
    std::vector<bool> seen(g.tensors.size(), false);
    for (const auto& op : g.ops)
        for (int o : op.outputs)
            if (!seen[std::size_t(o)]) {
                seen[std::size_t(o)] = true;
                producer[std::size_t(o)] = op.block;
            }
    return producer;
}

std::vector<int> producerStages(const Graph& g, const Placement& placement)
{
    std::vector<int> stage;
    for (const auto& block : producerBlocks(g))
        stage.push_back(block.empty() ? -1 : int(placement.stageOfBlock.at(block)));
    return stage;
}

std::vector<std::size_t> forwardOps(const ModelGraph& m)
{
    std::vector<std::size_t> ops;
    for (std::size_t i = 0; i < m.forwardOps; ++i)
        ops.push_back(i);
    return ops;
}

std::vector<std::size_t> backwardOps(const ModelGraph& m)
{
    std::vector<std::size_t> ops(m.training.backward);
    ops.insert(ops.end(), m.training.accumulate.begin(), m.training.accumulate.end());
    return ops;
}

void lowerBackward(GraphLowering& l, const ModelGraph& m, const std::vector<std::string>& blocks, bool recompute)
{
    // Each block's ops, in the order of their lists, found in one pass over the lists (a
    // stage holds tens of blocks; a model, thousands of ops).
    const Graph& g = m.graph;
    std::unordered_map<std::string_view, std::size_t> position;
    for (std::size_t b = 0; b < blocks.size(); ++b)
        position.emplace(blocks[b], b);
    std::vector<std::vector<std::size_t>> recomputed(blocks.size()), ops(blocks.size());
    if (recompute)
        for (std::size_t i = 0; i < m.forwardOps; ++i)
            if (auto it = position.find(g.ops[i].block); it != position.end() && recomputable(g.ops[i]))
                recomputed[it->second].push_back(i);
    for (const auto* list : {&m.training.backward, &m.training.accumulate}) // a block's accumulations after its backward ops
        for (std::size_t i : *list)
            if (auto it = position.find(g.ops[i].block); it != position.end())
                ops[it->second].push_back(i);
    for (std::size_t b = blocks.size(); b-- > 0;) {
        for (std::size_t i : recomputed[b])
            l.lower(g.ops[i]);
        for (std::size_t i : ops[b])
            l.lower(g.ops[i]);
    }
}

namespace {
IpuParams computeTilesOf(const SystemParams& system, const CompileOptions& opt, uint32_t ipu)
{
    IpuParams p = system.ipu;
    p.tiles -= opt.ioTiles;
    if (ipu < opt.availableMemoryProportion.size())
        p.availableMemoryProportion = opt.availableMemoryProportion[ipu];
    return p;
}

const IpuLowering* equivalentOf(const std::vector<std::unique_ptr<IpuLowering>>& earlier, const IpuParams& params)
{
    for (const auto& l : earlier)
        if (l->params == params)
            return l.get();
    return nullptr;
}

std::shared_ptr<TileRunsPools> poolsFor(const IpuLowering* equivalent)
{
    return equivalent ? equivalent->builder.pools() : std::make_shared<TileRunsPools>();
}
} // namespace

IpuLowering::IpuLowering(const Graph& g, const SystemParams& system, const Placement& placement, const CompileOptions& opt, uint32_t ipu,
                         const std::vector<std::unique_ptr<IpuLowering>>& earlier)
    : params(computeTilesOf(system, opt, ipu)), builder(params, poolsFor(equivalentOf(earlier, params))), lowering(g, builder)
{
    if (const IpuLowering* equivalent = equivalentOf(earlier, params))
        lowering.shareLoweredOps(equivalent->lowering);
    builder.setOutlineRule(opt.outline);
    lowering.setIoTiles(params.tiles, opt.ioTiles, opt.prefetchDepth);
    lowering.setReplication(placement.replicas, placement.replicatedTensorSharding);
    lowering.setOffloadOptimizer(opt.offloadOptimizer);
    lowering.setReuseIdenticalOps(opt.reuseIdenticalOps);
}

} // namespace ipusim
