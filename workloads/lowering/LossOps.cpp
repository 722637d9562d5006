// SPDX-License-Identifier: MIT
// GraphLowering's losses: softmax cross-entropy and NLL per row, summed onto tile 0.
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ipusim {

std::vector<VertexCall> GraphLowering::lossCalls(const Op& op, Precision type, uint64_t e, uint64_t rows, uint64_t perRow) const
{
    using costs::BinaryOpKind;
    using costs::UnaryOpKind;
    using namespace calls;
    const bool forward = op.kind == OpKind::SoftmaxCrossEntropy || op.kind == OpKind::NllLoss;
    const Precision f32 = Precision::FP32;
    if (op.kind == OpKind::NllLoss || op.kind == OpKind::NllLossGrad) {
        // PopART's NLL: the labels one-hot encoded, times the log-probabilities (scaled by
        // -1/batch for the gradient), summed per row going forward.
        std::vector<VertexCall> nll{{Vertex::EncodeOneHot, CountArgs{rows}}, binary(BinaryOpKind::Mul, type, e)};
        if (forward)
            nll.push_back(rowReduce(f32, rows, perRow));
        return nll;
    }
    if (forward)
        return {rowReduce(type, rows, perRow, ReduceOp::Max), binary(BinaryOpKind::Sub, type, e), unary(UnaryOpKind::Exp, type, e),
                rowReduce(f32, rows, perRow), unary(UnaryOpKind::Log, f32, rows), binary(BinaryOpKind::Sub, f32, rows)};
    // softmax - one-hot, scaled by 1/batch (a scalar)
    return {unary(UnaryOpKind::Exp, type, e), binary(BinaryOpKind::Div, type, e), binary(BinaryOpKind::Sub, type, e),
            byScalar(BinaryOpKind::Mul, type, e)};
}

void GraphLowering::lowerLoss(const Op& op)
{
    // Softmax cross-entropy per row of `classes` logits, on the tiles holding the logits; the
    // labels come to them, and the per-row losses are summed onto tile 0. Logits serialised
    // into parts (a split vocabulary) combine their per-row max and sum across the parts.
    const std::size_t parts = op.inputs.size() - 1;
    const uint32_t T = m_hw.tiles;
    const Precision type = m_graph.tensor(op.inputs[0]).type;
    const uint64_t classes = op.channels;
    const bool forward = op.kind == OpKind::SoftmaxCrossEntropy || op.kind == OpKind::NllLoss;
    const bool nll = op.kind == OpKind::NllLoss || op.kind == OpKind::NllLossGrad;
    std::vector<ExchangeBytes> x(T), stats(T);
    addSends(x, op.inputs.back()); // the labels
    ComputePlan loss{op.name, TileCalls(T), uint32_t(nll ? (forward ? 3 : 2) : 6)}, combine{op.name + ".combine", TileCalls(T)};
    uint64_t rowsTotal = 0;
    bool piecesCombine = false;
    ShareRecipes<std::pair<uint64_t, uint64_t>> combines; // by rows and pieces a row
    ShareRecipes<std::tuple<std::size_t, uint64_t, uint64_t>> recipes; // by part, elements and row piece
    TileVector firstPart; // the first part's logits per tile: its rows' losses are summed
    for (std::size_t part = 0; part < parts; ++part) {
        const TileVector elems = elementsOn(op.inputs[part]);
        if (part == 0)
            firstPart = elems;
        for (uint32_t t = 0; t < T; ++t) {
            const uint64_t e = elems[t];
            if (!e)
                continue;
            // A tile holds whole rows, or a piece of a row when a row is spread over tiles.
            const uint64_t perRow = rowPiece(op.inputs[part], classes, e);
            const uint64_t rows = ceilDiv(e, perRow);
            if (part == 0)
                rowsTotal += perRow < classes ? 0 : rows;
            x[t].recv += rows * 4;
            loss.calls.add(t, recipes({part, e, perRow}, [&] { return lossCalls(op, type, e, rows, perRow); }));
            // Pieces of a row (over tiles or vocabulary parts) send their row max and sum to
            // the row's reducer and get the combined pair back; reducers rotate over the
            // tiles, so each tile also combines as many rows as it holds pieces of.
            // NLL's pieces combine only their share of each row's picked value, and only going forward.
            const uint64_t pieces = parts * ceilDiv(classes, perRow);
            if (pieces > 1 && (!nll || forward)) {
                const uint64_t statistics = nll ? 1 : 2;
                stats[t].send += statistics * rows * 8;
                stats[t].recv += statistics * rows * 8;
                // A tile holding pieces of several parts combines rows for each of them.
                combine.calls.add(t, combines({rows, pieces}, [&] {
                    std::vector<VertexCall> c;
                    if (!nll)
                        c.push_back(calls::partialsReduce(Precision::FP32, rows, pieces, ReduceOp::Max));
                    c.push_back(calls::partialsReduce(Precision::FP32, rows, pieces));
                    return c;
                }));
                piecesCombine = true;
            }
        }
    }
    OpPlan plan;
    plan.exchange(op.name + ".labels", std::move(x));
    plan.compute(std::move(loss), false).read(op.inputs);
    if (piecesCombine) {
        plan.exchange(op.name + ".row_pieces", std::move(stats));
        plan.compute(std::move(combine), false);
    }
    if (forward)
        sumLosses(plan, op, firstPart, rowsTotal);
    else
        for (std::size_t part = 0; part < parts; ++part) {
            plan.output(op.outputs.at(part), m_b.bytes(handleOf(op.inputs[part])));
            m_width[std::size_t(op.outputs.at(part))] = m_width[std::size_t(op.inputs[part])];
        }
    emit(plan);
}

void GraphLowering::sumLosses(OpPlan& plan, const Op& op, const TileVector& elems, uint64_t rows) const
{
    // Each tile's per-row losses go to tile 0, which sums them into the loss.
    const uint32_t T = m_hw.tiles;
    std::vector<ExchangeBytes> r(T);
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t])
            r[t].send = ceilDiv(elems[t], op.channels) * 4;
    r[0].recv += rows * 4;
    plan.exchange(op.name + ".sum.in", std::move(r));
    const int out = op.outputs.at(0);
    TileVector bytes(T, 0);
    bytes[0] = m_graph.tensor(out).bytes();
    ComputePlan sum{op.name + ".sum", TileCalls(T)};
    sum.calls.add(0, calls::partialsReduce(Precision::FP32, 1, rows));
    plan.compute(std::move(sum), false).write(plan.output(out, bytes));
}

} // namespace ipusim
