// SPDX-License-Identifier: MIT
// GraphLowering's weight update: gradient accumulation, the optimizers, and the collectives
// and Streaming Memory transfers around them.
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ipusim {

void GraphLowering::lowerAccumulate(const Op& op)
{
    const int grad = op.inputs.at(0), acc = op.inputs.at(1);
    OpPlan plan;
    gather(plan, op.name + ".in", grad, acc);
    const TileVector elems = elementsOn(acc);
    ComputePlan add{op.name, TileCalls(m_hw.tiles)};
    ShareRecipes<uint64_t> byElements;
    for (uint32_t t = 0; t < m_hw.tiles; ++t)
        if (elems[t])
            add.calls.add(t, byElements(elems[t], [&] { return std::vector<VertexCall>{calls::scaledAdd(m_graph.tensor(acc).type, elems[t])}; }));
    plan.compute(std::move(add)).read(op.inputs);
    emit(plan);
}

GraphLowering::OptimizerCalls GraphLowering::optimizerCalls(const Op& op, uint64_t e) const
{
    using costs::BinaryOpKind;
    using costs::UnaryOpKind;
    using namespace calls;
    const Precision s = Precision::FP32; // optimizer state is kept in fp32
    const Precision wt = m_graph.tensor(op.inputs.at(0)).type;
    const bool adam = op.kind == OpKind::AdamW || op.kind == OpKind::Lamb;
    const bool velocity = !adam && op.inputs.size() - 2 - (op.masterWeights ? 1 : 0) > 0;
    OptimizerCalls c;
    // Multiplies by a scalar (popops' scalar broadcast in place, §3.9): the first takes the
    // mean over micro-batches and replicas (PopTorch's Mean); loss scaling adds one more to
    // undo the scale.
    const VertexCall timesScalar = byScalar(BinaryOpKind::Mul, s, e);
    c.update.push_back({timesScalar, op.unscale ? 2u : 1u});
    if (adam) // m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;  u = m^ / (sqrt(v^) + eps) + wd w
        c.update.insert(c.update.end(), {{timesScalar, 2}, {scaledAdd(s, e), 3}, {unary(UnaryOpKind::Square, s, e)},
                                         {unary(UnaryOpKind::Sqrt, s, e)}, {binary(BinaryOpKind::Add, s, e)}, {binary(BinaryOpKind::Div, s, e)}});
    else // g += wd w
        c.update.push_back({scaledAdd(s, e)});
    // Then (after LAMB's or LARS's trust ratio) SGD's and LARS's v = m v + g, and every
    // optimizer's w -= lr x ratio x update.
    if (velocity)
        c.apply.insert(c.apply.end(), {{timesScalar}, {scaledAdd(s, e)}});
    c.apply.push_back({scaledAdd(s, e)});
    if (op.masterWeights) // fp16 gradient in, the updated fp32 master cast back to the weight
        c.apply.insert(c.apply.end(), {{cast(wt, s, e)}, {cast(s, wt, e)}});
    // LAMB's and LARS's |w| and |update| (LARS: |g + wd w|) over the whole tensor.
    c.norms = {{unary(UnaryOpKind::Square, s, e), 2}, {rowReduce(s, 1, e), 2}};
    c.updateThenApply = c.update;
    c.updateThenApply.insert(c.updateThenApply.end(), c.apply.begin(), c.apply.end());
    return c;
}

void GraphLowering::lowerOptimizer(const Op& op)
{
    // inputs: weight, gradient (or accumulator), optimizer state (AdamW/LAMB: two moments;
    // SGD/LARS: the velocity, if any)[, fp32 master].
    const int w = op.inputs.at(0), g = op.inputs.at(1);
    OpPlan plan;
    gather(plan, op.name + ".grad", g, w);
    const TileVector elems = elementsOn(w);
    const bool adam = op.kind == OpKind::AdamW || op.kind == OpKind::Lamb;
    const bool trustRatio = op.kind == OpKind::Lamb || op.kind == OpKind::Lars;
    const bool velocity = !adam && op.inputs.size() - 2 - (op.masterWeights ? 1 : 0) > 0;
    const uint32_t T = m_hw.tiles;
    ComputePlan update{op.name, TileCalls(T), uint32_t(adam ? 8 : trustRatio ? 2 : velocity ? 4 : 3)};
    ComputePlan norms{op.name + ".norms", TileCalls(T)}, apply{op.name + ".apply", TileCalls(T)};
    std::vector<ExchangeBytes> partialNorms(T), ratio(T);
    uint64_t holders = 0;
    ShareRecipes<uint64_t, OptimizerCalls> byElements;
    for (uint32_t t = 0; t < T; ++t) {
        // With sharded state a replica updates 1/R of the weights.
        const uint64_t e = m_sharded ? ceilDiv(elems[t], m_replicas) : elems[t];
        if (!e)
            continue;
        ++holders;
        const OptimizerCalls& c = byElements(e, [&] { return optimizerCalls(op, e); });
        if (!trustRatio)
            update.calls.add(t, c.updateThenApply);
        else {
            update.calls.add(t, c.update);
            apply.calls.add(t, c.apply);
            norms.calls.add(t, c.norms);
            partialNorms[t].send = 8;
            ratio[t].recvShared = 4;
        }
    }
    plan.compute(std::move(update)).read(op.inputs);
    if (trustRatio) {
        // Per-tile squared sums of w and u meet on tile 0, which sends back the trust ratio.
        plan.compute(std::move(norms), false);
        partialNorms[0].recv += holders * 8;
        plan.exchange(op.name + ".norms.in", std::move(partialNorms));
        const Precision s = Precision::FP32;
        ComputePlan trust{op.name + ".trust_ratio", TileCalls(T)};
        for (const VertexCall& call : {calls::partialsReduce(s, 2, holders), calls::unary(costs::UnaryOpKind::Sqrt, s, 2),
                                       calls::binary(costs::BinaryOpKind::Div, s, 1)})
            trust.calls.add(0, call);
        plan.compute(std::move(trust), false);
        ratio[0].send = 4;
        plan.exchange(op.name + ".trust_ratio.out", std::move(ratio));
        plan.compute(std::move(apply)).read(op.inputs); // the weights are updated last
    }
    emit(plan);
}

void GraphLowering::lowerUpdate(const std::vector<const Op*>& updates, const std::vector<uint32_t>& ring)
{
    // One fused collective for all of this IPU's gradients, as PopART merges them.
    uint64_t bytes = 0;
    for (const Op* op : updates)
        bytes += m_graph.tensor(op->inputs.at(1)).bytes();
    OpPlan load, store;
    if (m_replicas > 1)
        load.collective({"gradients " + std::string(m_sharded ? "reduce-scatter" : "all-reduce"),
                         m_sharded ? CollectiveKind::ReduceScatter : CollectiveKind::AllReduce, bytes, ring});
    // Offloaded optimizer state comes in for the update and goes back after it, in one
    // remote-buffer transfer each way (PopART batches them).
    if (m_offload) {
        PlanStep& in = load.streamingMemory({"optimizer state load", Direction::ToIpu, 0});
        PlanStep& out = store.streamingMemory({"optimizer state store", Direction::FromIpu, 0});
        uint64_t stateBytes = 0;
        for (const Op* op : updates)
            for (std::size_t i = 2; i < op->inputs.size(); ++i) {
                const int state = op->inputs[i];
                const uint64_t share = ceilDiv(m_graph.tensor(state).bytes(), m_sharded ? m_replicas : 1);
                stateBytes += share;
                in.write(load.streamed(state, linearMappingRuns(m_hw.tiles, share, kGrainBytes), m_graph.tensor(state).name,
                                       "optimizer state (streamed)"));
                out.read(PlanTensor::graph(state));
            }
        std::get<StreamingMemoryPlan>(in.work).bytes = stateBytes;
        std::get<StreamingMemoryPlan>(out.work).bytes = stateBytes;
    }
    emit(load);
    for (const Op* op : updates)
        lower(*op);
    if (m_replicas > 1 && m_sharded) {
        uint64_t weights = 0;
        for (const Op* op : updates)
            weights += m_graph.tensor(op->inputs.at(0)).bytes();
        store.collective({"weights all-gather", CollectiveKind::AllGather, weights, ring});
    }
    emit(store);
}

} // namespace ipusim
