// SPDX-License-Identifier: MIT
// GraphLowering's data movement: concat and slices, pads, and gathers of rows by index.
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ipusim {

void GraphLowering::lowerCopy(const Op& op)
{
    // Concat, slice and a slice's gradient are data movement: the output is spread linearly
    // and each tile receives its part from where the inputs live (a slice sends the share of
    // its input it keeps) and copies it into place; a slice's gradient first zeroes the rest.
    const int output = op.outputs.at(0);
    const TensorDesc& od = m_graph.tensor(output);
    const uint32_t T = m_hw.tiles;
    const TileVector outMap = linearMapping(T, od.bytes(), kGrainBytes);
    std::vector<ExchangeBytes> x(T);
    uint64_t moved = 0;
    // A concatenated parameter (a class token, no batch) goes into every sample: its tiles send
    // it once per sample, what the batched inputs leave of the output.
    uint64_t batchedBytes = 0, parameterBytes = 0;
    for (int in : op.inputs)
        (isModelTensor(m_graph.tensor(in).role) ? parameterBytes : batchedBytes) += m_graph.tensor(in).bytes();
    const double repeats = op.kind == OpKind::Concat && parameterBytes ? double(od.bytes() - batchedBytes) / double(parameterBytes) : 1.0;
    for (int in : op.inputs) {
        const TileVector bytes = m_b.denseBytes(handleOf(in));
        const bool parameter = isModelTensor(m_graph.tensor(in).role) && op.kind == OpKind::Concat;
        const double share = op.kind == OpKind::Slice ? double(od.bytes()) / double(std::max<uint64_t>(m_graph.tensor(in).bytes(), 1))
                             : parameter       ? repeats
                                               : 1.0;
        for (uint32_t t = 0; t < T; ++t)
            x[t].send += uint64_t(double(bytes[t]) * share);
        moved += op.kind == OpKind::Slice ? od.bytes() : uint64_t(double(m_graph.tensor(in).bytes()) * share);
    }
    const double received = double(moved) / double(std::max<uint64_t>(od.bytes(), 1)); // a slice's gradient: the part only
    ComputePlan copy{op.name, TileCalls(T)};
    const unsigned elementBytes = bytesOf(od.type);
    for (uint32_t t = 0; t < T; ++t)
        if (outMap[t]) {
            const uint64_t mine = uint64_t(double(outMap[t]) * received);
            x[t].recv += mine;
            if (op.kind == OpKind::SliceGrad)
                copy.calls.add(t, {Vertex::Fill, ElementArgs{od.type, outMap[t] / elementBytes}});
            copy.calls.add(t, {Vertex::Copy, CopyArgs{mine, elementBytes}});
        }
    OpPlan plan;
    plan.exchange(op.name + ".in", std::move(x)).read(op.inputs);
    const PlanTensor out = plan.output(output, outMap);
    plan.compute(std::move(copy), false).write(out);
    emit(plan);
}

void GraphLowering::lowerPad(const Op& op)
{
    // PopART's Pad is popops::pad: a new tensor, spread linearly, each tile receiving its share
    // of the interior from where the input lives and copying it into place. A constant border
    // is filled; a reflection or edge is copied from the input too (more bytes in). The
    // gradient takes the interior back out, and adds a copied border's gradients into it.
    const bool forward = op.kind == OpKind::Pad;
    const int source = op.inputs.at(0), result = op.outputs.at(0);
    const TensorDesc& big = m_graph.tensor(forward ? result : source);
    const TensorDesc& small = m_graph.tensor(forward ? source : result);
    const uint64_t border = big.bytes() - small.bytes();
    const bool copied = op.padMode != PadMode::Constant;
    const uint64_t moved = small.bytes() + (copied ? border : 0); // bytes from one tensor into the other
    const uint32_t T = m_hw.tiles;
    const unsigned eb = bytesOf(big.type);
    const TileVector outMap = linearMapping(T, m_graph.tensor(result).bytes(), kGrainBytes);
    const TileVector from = m_b.denseBytes(handleOf(source));
    const double outShare = double(moved) / double(std::max<uint64_t>(m_graph.tensor(result).bytes(), 1));
    const double inShare = double(moved) / double(std::max<uint64_t>(m_graph.tensor(source).bytes(), 1));
    std::vector<ExchangeBytes> x(T);
    ComputePlan copy{op.name, TileCalls(T)};
    for (uint32_t t = 0; t < T; ++t) {
        x[t].send += uint64_t(double(from[t]) * inShare);
        if (!outMap[t])
            continue;
        const uint64_t mine = uint64_t(double(outMap[t]) * outShare);
        x[t].recv += mine;
        // A tile with no border elements runs no fill or add (times 0: no call).
        if (forward) {
            const uint64_t fill = copied ? 0 : (outMap[t] - std::min(outMap[t], mine)) / eb;
            copy.calls.add(t, calls::copy(mine, eb));
            copy.calls.add(t, calls::fill(big.type, fill), fill > 0);
        } else {
            const uint64_t added = copied ? (mine - std::min(mine, outMap[t])) / eb : 0; // a copied border's gradients, into the interior
            copy.calls.add(t, calls::copy(outMap[t], eb));
            copy.calls.add(t, calls::binary(costs::BinaryOpKind::Add, big.type, added), added > 0);
        }
    }
    OpPlan plan;
    plan.exchange(op.name + ".in", std::move(x)).read(op.inputs);
    plan.compute(std::move(copy), false).write(plan.output(result, outMap));
    emit(plan);
}

void GraphLowering::lowerGather(const Op& op)
{
    // Every tile holding part of the table checks every index against its rows and copies the
    // hits (MultiSlice); the rows then cross the exchange to the output's linear layout. A
    // fixed slice (no indices) is a plain copy of the rows.
    const int table = op.inputs.at(0);
    const bool indexed = op.inputs.size() > 1;
    const TensorDesc& td = m_graph.tensor(table);
    const int output = op.outputs.at(0);
    const uint64_t outBytes = m_graph.tensor(output).bytes();
    const TileVector tb = m_b.denseBytes(handleOf(table));
    const uint64_t tableBytes = std::max<uint64_t>(td.bytes(), 1);
    const uint32_t T = m_hw.tiles;
    std::vector<ExchangeBytes> idx(T), rows(T);
    ComputePlan slice{op.name, TileCalls(T)};
    TileVector slices(T, 0);
    if (indexed)
        addSends(idx, op.inputs[1]);
    const uint64_t indexBytes = indexed ? m_graph.tensor(op.inputs[1]).bytes() : 0;
    const TileVector outMap = linearMapping(T, outBytes, kGrainBytes);
    for (uint32_t t = 0; t < T; ++t) {
        rows[t].recv += outMap[t];
        if (!tb[t])
            continue;
        const uint64_t mine = uint64_t(double(outBytes) * double(tb[t]) / double(tableBytes));
        rows[t].send += mine;
        slices[t] = mine + indexBytes;
        if (indexed) {
            idx[t].recvShared += indexBytes;
            slice.calls.add(t, {Vertex::MultiSlice, SliceArgs{td.type, op.rows, mine / bytesOf(td.type)}});
        } else {
            slice.calls.add(t, calls::copy(mine, bytesOf(td.type)));
        }
    }
    OpPlan plan;
    const PlanTensor hits = plan.temporary(op.name + " slices", slices); // with the indices they were picked by
    if (indexed)
        plan.exchange(op.name + ".indices", std::move(idx)).write(hits);
    plan.compute(std::move(slice), !indexed).read(op.inputs).write(hits);
    plan.exchange(op.name + ".rows", std::move(rows)).read(hits);
    plan.output(output, outMap);
    emit(plan);
}

void GraphLowering::lowerGatherGrad(const Op& op)
{
    // The table-shaped gradient is zeroed where the table lives; each of its tiles receives the
    // rows' gradients that hit its rows and adds them in (MultiUpdateAdd).
    const int dy = op.inputs.at(0);
    const bool indexed = op.inputs.size() > 1;
    const int output = op.outputs.at(0);
    const TensorDesc& od = m_graph.tensor(output);
    const uint64_t dyBytes = m_graph.tensor(dy).bytes();
    const uint64_t tableBytes = std::max<uint64_t>(od.bytes(), 1);
    const uint32_t T = m_hw.tiles;
    const TileVector outMap = linearMapping(T, od.bytes(), kGrainBytes);
    std::vector<ExchangeBytes> x(T);
    addSends(x, dy);
    if (indexed)
        addSends(x, op.inputs[1]);
    const uint64_t indexBytes = indexed ? m_graph.tensor(op.inputs[1]).bytes() : 0;
    ComputePlan update{op.name, TileCalls(T)};
    TileVector incoming(T, 0);
    const unsigned elementBytes = bytesOf(od.type);
    for (uint32_t t = 0; t < T; ++t) {
        if (!outMap[t])
            continue;
        const uint64_t mine = uint64_t(double(dyBytes) * double(outMap[t]) / double(tableBytes));
        x[t].recv += mine;
        x[t].recvShared += indexBytes;
        incoming[t] = mine + indexBytes;
        update.calls.add(t, calls::fill(od.type, outMap[t] / elementBytes));
        update.calls.add(t, indexed ? VertexCall{Vertex::MultiUpdateAdd, SliceArgs{od.type, op.rows, mine / elementBytes}}
                                    : calls::copy(mine, elementBytes));
    }
    OpPlan plan;
    const PlanTensor rows = plan.temporary(op.name + " rows", incoming);
    plan.exchange(op.name + ".in", std::move(x)).read(op.inputs).write(rows);
    plan.compute(std::move(update), false).read(rows).write(plan.output(output, outMap));
    emit(plan);
}

} // namespace ipusim
