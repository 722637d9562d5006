// SPDX-License-Identifier: MIT
// GraphLowering's element-wise and row-wise ops: where their operand lives, one recipe each.
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "workloads/graph/Activation.hpp"
#include "workloads/lowering/ActivationCalls.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ipusim {

costs::PoolTileWork GraphLowering::poolWork(const Op& op, Precision type, uint64_t elements) const
{
    const bool gradient = op.kind == OpKind::MaxPoolGrad || op.kind == OpKind::AvgPoolGrad;
    // PopLibs pools channels-innermost in groups of chansPerGroup: here the largest multiple of
    // the 8-byte grain, at most 8 grains, that divides the channels rounded up to the grain
    // (the planner's candidates; the widest has the least overhead). A tile's positions carry
    // all of their channels and start a row of the field (the outputs; for a gradient, the
    // inputs, whose rows each kernel row of ceil(kh / stride) taps visits every stride).
    const ConvGeometry& g = op.geometry;
    const uint64_t grain = m_hw.vectorWidth(type);
    const uint64_t channels = ceilDiv(g.inChans, grain) * grain;
    uint64_t perGroup = grain;
    for (uint64_t c = 8 * grain; c > grain; c -= grain)
        if (channels % c == 0) {
            perGroup = c;
            break;
        }
    const uint64_t onTile = std::max<uint64_t>(1, std::min(channels, elements));
    costs::PoolTileWork w;
    w.channelVectors = perGroup / grain;
    w.channelGroups = ceilDiv(onTile, perGroup);
    w.positions = ceilDiv(elements, onTile);
    if (gradient) {
        w.rowWidth = g.inWidth;
        w.itemsPerRow = ceilDiv(g.kernelHeight, g.strideHeight) * g.kernelWidth;
        w.stride = g.strideWidth;
        return w;
    }
    // Windows that tile the input exactly (stride >= kernel, no padding) make the image one row.
    const bool oneRow = g.strideHeight >= g.kernelHeight && g.strideWidth >= g.kernelWidth && g.padHeight == 0 &&
                        g.padWidth == 0 && g.inHeight % g.strideHeight == 0 && g.inWidth % g.strideWidth == 0;
    w.rowWidth = oneRow ? g.outHeight() * g.outWidth() : g.outWidth();
    w.itemsPerRow = uint64_t(g.kernelHeight) * g.kernelWidth;
    return w;
}

std::vector<VertexCall> GraphLowering::elementwiseCalls(const Op& op, Precision type, uint64_t e) const
{
    using costs::BinaryOpKind;
    // Pooling: the outputs of a tile's inputs, as the tensors' sizes relate (the pooled tensor
    // is the gradient's input and the forward's output).
    const bool backward = op.kind == OpKind::AvgPoolGrad || op.kind == OpKind::MaxPoolGrad;
    const uint64_t inElements = std::max<uint64_t>(1, m_graph.tensor(backward ? op.outputs.at(0) : op.inputs.at(0)).elements());
    const uint64_t outElements = std::max<uint64_t>(1, m_graph.tensor(backward ? op.inputs.at(0) : op.outputs.at(0)).elements());
    const uint64_t pooled = ceilDiv(e * outElements, inElements), unpooled = ceilDiv(e * inElements, outElements);
    switch (op.kind) {
    case OpKind::BiasAdd: return {{codelet::binary(BinaryOpKind::Add), ElementArgs{type, e}}};
    case OpKind::Cast: return {{Vertex::Cast1D, CastArgs{type, m_graph.tensor(op.outputs.at(0)).type, e}}};
    case OpKind::MaxPool: return {{Vertex::MaxPooling, poolWork(op, type, pooled)}};
    // SumPooling applies the 1 / window itself
    case OpKind::AvgPool: return {{Vertex::SumPooling, poolWork(op, type, pooled)}};
    case OpKind::AvgPoolGrad: // the gradient times 1 / window (a scalar), then summed into the inputs' windows
        return {{codelet::byScalar(BinaryOpKind::Mul), ElementArgs{type, e}}, {Vertex::SumPooling, poolWork(op, type, unpooled)}};
    case OpKind::MaxPoolGrad: return {{Vertex::MaxPoolingGrad, poolWork(op, type, unpooled)}};
    default:
        if (activationOf(op.kind)) // an activation that runs in place
            return activationCalls(op.kind, type, e);
        throw std::logic_error("not an element-wise op: " + op.name);
    }
}

void GraphLowering::lowerElementwise(const Op& op)
{
    // Element-wise ops run where their main operand lives (Poplar maps them to the input).
    const int main = op.inputs.at(0);
    const TensorDesc& d = m_graph.tensor(main);
    const TileVector elems = elementsOn(main);
    ComputePlan compute{op.name, TileCalls(m_hw.tiles)};
    std::vector<ExchangeBytes> x(m_hw.tiles);
    ShareRecipes<uint64_t> byElements;
    for (uint32_t t = 0; t < m_hw.tiles; ++t) {
        const uint64_t e = elems[t];
        if (!e)
            continue;
        if (op.kind == OpKind::BiasAdd)
            x[t].recvShared += std::min<uint64_t>(op.channels, e) * bytesOf(d.type); // the bias slice
        compute.calls.add(t, byElements(e, [&] { return elementwiseCalls(op, d.type, e); }));
    }
    OpPlan plan;
    if (op.kind == OpKind::BiasAdd && !byElements.empty()) { // the bias to the tiles it is added on
        for (std::size_t i = 1; i < op.inputs.size(); ++i)
            addSends(x, op.inputs[i]);
        plan.exchange(op.name + ".in", std::move(x));
    }
    plan.compute(std::move(compute), plan.steps.empty()).read(op.inputs);
    const int output = op.outputs.at(0);
    m_width[std::size_t(output)] = m_width[std::size_t(main)];
    if (op.kind == OpKind::BiasAdd || activationOf(op.kind))
        plan.inPlace(output, main);
    else {
        // Pooling shrinks by the window; its gradient has the input's size and layout.
        TileVector bytes = m_b.denseBytes(handleOf(main));
        const double ratio = double(m_graph.tensor(output).bytes()) / double(std::max<uint64_t>(d.bytes(), 1));
        for (auto& b : bytes)
            b = uint64_t(double(b) * ratio);
        plan.output(output, bytes);
    }
    emit(plan);
}

std::vector<VertexCall> GraphLowering::rowwiseCalls(const Op& op, const RowShare& share) const
{
    using costs::BinaryOpKind;
    using costs::UnaryOpKind;
    using namespace calls;
    const Precision type = share.type, f32 = Precision::FP32;
    const uint64_t e = share.elements, rows = share.rows, piece = share.piece;
    auto bin = [&](BinaryOpKind k) { return binary(k, type, e); };
    auto un = [&](UnaryOpKind k) { return unary(k, type, e); };
    // Attention's scores are scaled (and going forward the mask added) before the softmax.
    std::vector<VertexCall> scaled;
    if (op.attentionScaleMask)
        scaled.push_back(byScalar(BinaryOpKind::Mul, type, e));
    if (op.attentionScaleMask && op.kind == OpKind::Softmax)
        scaled.push_back(bin(BinaryOpKind::Add));
    auto then = [&](std::vector<VertexCall> first, const std::vector<VertexCall>& more) {
        first.insert(first.end(), more.begin(), more.end());
        return first;
    };
    switch (op.kind) {
    case OpKind::Add: return {bin(BinaryOpKind::Add)};
    case OpKind::LogSoftmax: // x - max - log(sum(exp(x - max))): the row max, exponentiate, sum, one log per row
        return {rowReduce(type, rows, piece, ReduceOp::Max), bin(BinaryOpKind::Sub), un(UnaryOpKind::Exp), rowReduce(f32, rows, piece),
                unary(UnaryOpKind::Log, f32, rows), bin(BinaryOpKind::Sub)};
    case OpKind::LogSoftmaxGrad: // dx = dy - exp(y) sum(dy)
        return {un(UnaryOpKind::Exp), rowReduce(f32, rows, piece), bin(BinaryOpKind::Mul), bin(BinaryOpKind::Sub)};
    case OpKind::Sub: return {bin(BinaryOpKind::Sub)};
    case OpKind::Mul: return {bin(BinaryOpKind::Mul)};
    case OpKind::Div: return {bin(BinaryOpKind::Div)};
    // PopART's Where (torch.where, masked_fill) is popops::select of the tensor, the constant
    // broadcast and the mask: Select, a worker's region each (its gradient, dy by the mask, too).
    case OpKind::MaskedFill:
    case OpKind::Select: return {{Vertex::Select, CountArgs{e}}};
    // PopART's Equal, Less and Greater are popops' EQUAL, LESS_THAN and GREATER_THAN maps
    // (BinaryOp1D, bool out), its Not LOGICAL_NOT (UnaryOp1D on bools).
    case OpKind::Compare: return {bin(op.comparison == Comparison::Equal ? BinaryOpKind::Equal
                                      : op.comparison == Comparison::Less ? BinaryOpKind::Less
                                                                           : BinaryOpKind::Greater)};
    case OpKind::LogicalNot: return {un(UnaryOpKind::LogicalNot)};
    case OpKind::DivGradRhs: return {bin(BinaryOpKind::Mul), bin(BinaryOpKind::Mul), bin(BinaryOpKind::Div)}; // -dy a / b / b
    // A constant factor: popops' scalar broadcast, in place (poplibs-costs §3.9).
    case OpKind::Scale: return {byScalar(BinaryOpKind::Mul, type, e)};
    // The gradient draws the same mask again from the op's seed, as PopART does.
    case OpKind::Dropout:
    case OpKind::DropoutGrad: return {{Vertex::DropoutSupervisor, ElementArgs{type, e}}};
    case OpKind::Softmax: // subtract the row max, exponentiate, normalise (a reciprocal per row, then a multiply)
        return then(scaled, {rowReduce(type, rows, piece, ReduceOp::Max), bin(BinaryOpKind::Sub), un(UnaryOpKind::Exp),
                             rowReduce(f32, rows, piece), binary(BinaryOpKind::Div, f32, rows), bin(BinaryOpKind::Mul)});
    case OpKind::SoftmaxGrad: // dx = y (dy - sum(dy y)), then (attention) the scale
        return then({bin(BinaryOpKind::Mul), rowReduce(f32, rows, piece), bin(BinaryOpKind::Sub), bin(BinaryOpKind::Mul)}, scaled);
    // mean; the centred values' SQUARE_ADD (the square is the reduction's, §3.10); normalise;
    // (affine) gamma, beta
    case OpKind::LayerNorm:
        return then({rowReduce(f32, rows, piece), bin(BinaryOpKind::Sub), rowReduce(f32, rows, piece, ReduceOp::SquareAdd),
                     unary(UnaryOpKind::Rsqrt, f32, rows), bin(BinaryOpKind::Mul)},
                    share.affine ? std::vector<VertexCall>{bin(BinaryOpKind::Mul), bin(BinaryOpKind::Add)} : std::vector<VertexCall>{});
    case OpKind::LayerNormGrad: // x^ again; (affine) dy gamma; its mean and its mean against x^
        return then({bin(BinaryOpKind::Sub), bin(BinaryOpKind::Mul)},
                    then(share.affine ? std::vector<VertexCall>{bin(BinaryOpKind::Mul)} : std::vector<VertexCall>{},
                         {rowReduce(f32, rows, piece), rowReduce(f32, rows, piece), bin(BinaryOpKind::Mul), bin(BinaryOpKind::Mul),
                          bin(BinaryOpKind::Sub), bin(BinaryOpKind::Sub)}));
    default:
        if (activationOf(op.kind))
            return activationCalls(op.kind, type, e);
        throw std::logic_error("not a row-wise op: " + op.name);
    }
}

void GraphLowering::addRepeatedOperand(std::vector<ExchangeBytes>& x, const Op& op, const TileVector& elems) const
{
    // A tile's elements read ceil(elements / run) elements of the repeated operand, at most
    // all of it.
    const int repeated = op.inputs.at(std::size_t(op.broadcast));
    const uint64_t whole = m_graph.tensor(repeated).elements();
    for (uint32_t t = 0; t < m_hw.tiles; ++t)
        if (elems[t])
            x[t].recvShared += std::min(ceilDiv(elems[t], op.broadcastRun), whole) * bytesOf(m_graph.tensor(repeated).type);
    addSends(x, repeated);
}

void GraphLowering::lowerRowwise(const Op& op)
{
    // Runs where the first operand lives; other activations are brought to its layout first,
    // and LayerNorm's gamma (and beta) reach every tile that holds a part of a row.
    // A repeated (broadcast) operand is not gathered: each tile receives the part its
    // elements repeat, at most the whole operand.
    const int main = op.inputs.at(op.broadcast == 0 ? 1 : 0);
    const Precision type = m_graph.tensor(main).type;
    const bool layerNorm = op.kind == OpKind::LayerNorm || op.kind == OpKind::LayerNormGrad;
    // A norm's gamma and beta (its gradient: gamma) reach every tile holding part of a row: all
    // of them, or for group norm those of the channels in the tile's piece of the row.
    const bool affine = layerNorm && op.inputs.size() == 3;
    auto paramsOnTile = [&](uint64_t piece) { return op.paramChannels ? std::min(piece, op.paramChannels) : piece; };
    OpPlan plan;
    for (std::size_t i = 0; i < op.inputs.size(); ++i)
        if (op.inputs[i] != main && int(i) != op.broadcast && !(layerNorm && m_graph.tensor(op.inputs[i]).role == TensorRole::Weight))
            gather(plan, op.name + ".in" + std::to_string(i), op.inputs[i], main);
    const TileVector elems = elementsOn(main);
    const uint64_t C = std::max<uint64_t>(op.channels, 1);
    ComputePlan compute{op.name, TileCalls(m_hw.tiles)}, combine{op.name + ".combine", TileCalls(m_hw.tiles)};
    std::vector<ExchangeBytes> params(m_hw.tiles), stats(m_hw.tiles);
    const bool reducesRows = op.kind == OpKind::Softmax || op.kind == OpKind::SoftmaxGrad || op.kind == OpKind::LogSoftmax ||
                             op.kind == OpKind::LogSoftmaxGrad || layerNorm;
    // Softmax's pieces combine their row maxima and sums, the others two sums.
    const bool maxima = op.kind == OpKind::Softmax || op.kind == OpKind::LogSoftmax;
    bool splitRows = false;
    ShareRecipes<std::pair<uint64_t, uint64_t>> recipes, combines; // by elements (rows) and row piece
    for (uint32_t t = 0; t < m_hw.tiles; ++t) {
        const uint64_t e = elems[t];
        if (!e)
            continue;
        // Rows spread over tiles (a producer split the channels) reduce in pieces: each piece
        // sends its partial statistics to the row's reducer and gets the row's back.
        const uint64_t piece = rowPiece(main, C, e);
        const uint64_t rows = ceilDiv(e, piece);
        if (reducesRows && piece < C) {
            splitRows = true;
            stats[t].send += 2 * rows * 8;
            stats[t].recv += 2 * rows * 8;
            combine.calls.add(t, combines({rows, piece}, [&] {
                return std::vector<VertexCall>{
                    calls::partialsReduce(Precision::FP32, rows, ceilDiv(C, piece), maxima ? ReduceOp::Max : ReduceOp::Add),
                    calls::partialsReduce(Precision::FP32, rows, ceilDiv(C, piece))};
            }));
        }
        compute.calls.add(t, recipes({e, piece}, [&] { return rowwiseCalls(op, {type, e, rows, piece, affine}); }));
        if (affine)
            params[t].recvShared += (op.kind == OpKind::LayerNorm ? 2 : 1) * paramsOnTile(piece) * bytesOf(type);
    }
    if (op.broadcast >= 0)
        addRepeatedOperand(params, op, elems);
    const bool exchangesParams = affine || op.broadcast >= 0;
    if (exchangesParams) {
        for (std::size_t i = 1; affine && i < op.inputs.size(); ++i)
            if (m_graph.tensor(op.inputs[i]).role == TensorRole::Weight)
                addSends(params, op.inputs[i]);
        plan.exchange(op.name + (affine ? ".params" : op.attentionScaleMask ? ".mask" : ".repeated"), std::move(params));
    }
    plan.compute(std::move(compute), !exchangesParams).read(op.inputs);
    if (splitRows) { // the inputs stay for the normalisation after the pieces have combined
        plan.exchange(op.name + ".row_pieces", std::move(stats));
        plan.compute(std::move(combine), false).read(op.inputs);
    }
    const int output = op.outputs.at(0);
    const TensorRole role = m_graph.tensor(output).role;
    m_width[std::size_t(output)] = m_width[std::size_t(main)];
    if (op.kind == OpKind::Add && (role == TensorRole::Gradient || role == TensorRole::WeightGradient))
        plan.inPlace(output, main); // gradient sums run in place
    else
        plan.output(output, m_b.bytes(handleOf(main)));
    emit(plan);
}

} // namespace ipusim
