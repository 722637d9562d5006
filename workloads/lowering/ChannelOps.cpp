// SPDX-License-Identifier: MIT
// GraphLowering's per-channel ops: sums over positions (bias and norm parameter gradients),
// batch norm with its statistics, and global average pooling.
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "models/timing/VertexCosts.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>

namespace ipusim {

std::pair<TileVector, int> GraphLowering::reduceChannels(const ChannelReduce& r)
{
    // Three stages, as PopLibs spreads a reduction: each tile sums its own elements per
    // channel; then channel c's partial sums from group s of contributing tiles meet on
    // reducer tile (c, s); finally the S group sums of each channel meet on the tiles of the
    // result. Each stage is popops ReduceAdd as PopLibs specialises it (poplibs-costs §3.8):
    // per-channel columns of [rows x channels] are a STRIDED_REDUCE, one channel's partials
    // on a reducer a SINGLE_INPUT vertex per value.
    const Precision type = m_graph.tensor(r.source).type;
    const TileVector elems = elementsOn(r.source);
    const uint64_t C = r.channels, V = r.values;
    const uint32_t T = m_hw.tiles;
    TileVector local(T, 0), partials(T, 0);
    uint64_t partialsTotal = 0; // per value
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t]) {
            const uint64_t outs = rowPiece(r.source, C, elems[t]);
            local[t] = V * costs::stridedReduce(m_hw, type, Precision::FP32, outs, ceilDiv(elems[t], outs), outs) +
                       (r.extra.empty() ? 0 : r.extra[t]);
            partials[t] = outs * 4 * V;
            partialsTotal += outs;
        }
    // Partial sums per channel: every contributing tile's when each holds all the channels,
    // fewer when the channels are split over the tiles (a wide layer).
    const uint64_t n = std::max<uint64_t>(1, ceilDiv(partialsTotal, std::max<uint64_t>(C, 1)));
    uint64_t groups = 1;
    while (groups * groups < n)
        ++groups;
    groups = std::max<uint64_t>(1, std::min<uint64_t>(groups, T / std::max<uint64_t>(C, 1)));
    const uint64_t perGroup = ceilDiv(n, groups);

    m_b.sync();
    const int partialHandle = m_b.allocate(r.name + " partials", "temporary", partials);
    m_b.compute(r.name + ".local", local, r.localTypes);
    m_b.touch(handleOf(r.source));

    // Stage 2: reducer (c, s) is tile c * groups + s (wrapping when C * groups > T).
    std::vector<ExchangeBytes> x(T);
    TileVector stage2(T, 0), stage2Bytes(T, 0), stage2Vertices(T, 0), stage2Partials(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        x[t].send += partials[t];
    for (uint64_t c = 0; c < C; ++c)
        for (uint64_t g = 0; g < groups; ++g) {
            const uint32_t reducer = uint32_t((c * groups + g) % T);
            const uint64_t members = std::min(perGroup, n - std::min(n, g * perGroup));
            x[reducer].recv += members * 4 * V;
            stage2Bytes[reducer] += members * 4 * V;
            stage2Vertices[reducer] += V; // a worker vertex per value, six side by side
            stage2Partials[reducer] = std::max<uint64_t>({stage2Partials[reducer], members, 1});
        }
    for (uint32_t t = 0; t < T; ++t)
        if (stage2Vertices[t])
            stage2[t] = ceilDiv(stage2Vertices[t], m_hw.workers) *
                        costs::singleInputReduce(m_hw, Precision::FP32, Precision::FP32, stage2Partials[t]);
    m_b.sync();
    const int stage2Handle = m_b.allocate(r.name + " group partials", "temporary", stage2Bytes);
    m_b.exchange(r.name + ".groups.in", x);
    m_b.compute(r.name + ".groups", stage2, {Vertex::ReduceSingleInput});
    m_b.touch(partialHandle);

    // Stage 3: the S group sums of each channel onto the result's tiles.
    TileVector outBytes(T, 0);
    const Precision outType = r.outputs.empty() ? Precision::FP32 : m_graph.tensor(r.outputs[0]).type;
    if (r.outputs.empty())
        outBytes = linearMapping(T, V * C * 4, kGrainBytes);
    for (int out : r.outputs) {
        const TileVector mine = linearMapping(T, m_graph.tensor(out).bytes(), kGrainBytes);
        for (uint32_t t = 0; t < T; ++t)
            outBytes[t] += mine[t];
    }
    std::vector<ExchangeBytes> y(T);
    TileVector final(T, 0);
    for (uint64_t c = 0; c < C; ++c)
        for (uint64_t g = 0; g < groups; ++g)
            y[uint32_t((c * groups + g) % T)].send += 4 * V;
    for (uint32_t t = 0; t < T; ++t)
        if (outBytes[t]) {
            const uint64_t outs = outBytes[t] / bytesOf(outType); // the results, in their own type
            y[t].recv += outs * groups * 4;
            final[t] = costs::stridedReduce(m_hw, Precision::FP32, outType, outs, groups, outs);
        }
    m_b.sync();
    m_b.exchange(r.name + ".final.in", y);
    int temp = -1;
    if (r.outputs.empty())
        temp = m_b.allocate(r.name + " sums", "temporary", outBytes);
    for (int out : r.outputs)
        produce(out, linearMapping(T, m_graph.tensor(out).bytes(), kGrainBytes));
    m_b.compute(r.finalName, final, {Vertex::ReduceStrided});
    m_b.touch(stage2Handle);
    for (int out : r.outputs)
        m_b.touch(handleOf(out));
    return {outBytes, temp};
}

void GraphLowering::addChannelParams(std::vector<ExchangeBytes>& x, int tensor, uint64_t channels, uint64_t bytesPerChannel) const
{
    const TileVector elems = elementsOn(tensor);
    for (uint32_t t = 0; t < m_hw.tiles; ++t)
        if (elems[t])
            x[t].recvShared += rowPiece(tensor, channels, elems[t]) * bytesPerChannel;
}

void GraphLowering::lowerBiasGrad(const Op& op)
{
    ChannelReduce r;
    r.name = r.finalName = op.name;
    r.source = op.inputs.at(0);
    r.channels = op.channels;
    r.outputs = {op.outputs.at(0)};
    reduceChannels(r);
}

void GraphLowering::lowerBatchNorm(const Op& op)
{
    // Training: the sums of x and x^2 per channel over batch and image (PopLibs' one
    // reduceMany of ADD and SQUARE_ADD), then mean and 1 / sqrt(var + eps) where the sums are,
    // with the running statistics' momentum update; the statistics, gamma and beta come to
    // every tile of x, which whitens and scales its elements.
    using costs::BinaryOpKind;
    const int x = op.inputs.at(0), gamma = op.inputs[1], beta = op.inputs[2], mean = op.inputs[3], var = op.inputs[4];
    const Precision type = m_graph.tensor(x).type;
    const TileVector elems = elementsOn(x);
    const uint64_t C = op.channels;
    const uint32_t T = m_hw.tiles;
    ChannelReduce r;
    r.name = op.name + ".stats";
    r.finalName = op.name + ".stats";
    r.source = x;
    r.channels = C;
    r.values = 2;
    // ADD and SQUARE_ADD in one reduceMany: squaring is the reduction's own, at ADD's cost.
    r.localTypes = {Vertex::ReduceStrided, {Vertex::ReduceStrided, ReduceOp::SquareAdd}};
    const auto [sums, statsHandle] = reduceChannels(r);

    TileVector inv(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        if (sums[t]) {
            const uint64_t channels = ceilDiv(sums[t] / 4, 2);
            inv[t] = costs::binaryOp(m_hw, BinaryOpKind::Mul, Precision::FP32, 2 * channels) +
                     costs::inverseStdDeviation(m_hw, channels) + 2 * costs::scaledAdd(m_hw, Precision::FP32, channels);
        }
    m_b.sync();
    m_b.compute(op.name + ".inv_std_dev", inv,
                {codelet::binary(BinaryOpKind::Mul), Vertex::InverseStdDeviation, Vertex::ScaledAddSupervisor});
    m_b.touch(handleOf(mean));
    m_b.touch(handleOf(var));

    std::vector<ExchangeBytes> in(T);
    for (uint32_t t = 0; t < T; ++t)
        in[t].send += sums[t];
    addSends(in, gamma);
    addSends(in, beta);
    addChannelParams(in, x, C, 2 * 4 + 2 * bytesOf(type));
    TileVector cycles(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t]) // (x - mean) x 1/sigma x gamma + beta
            cycles[t] = costs::binaryOp(m_hw, BinaryOpKind::Sub, type, elems[t]) + 2 * costs::binaryOp(m_hw, BinaryOpKind::Mul, type, elems[t]) +
                        costs::binaryOp(m_hw, BinaryOpKind::Add, type, elems[t]);
    m_b.sync();
    m_b.exchange(op.name + ".params", in);
    m_b.compute(op.name, cycles, {codelet::binary(BinaryOpKind::Sub), codelet::binary(BinaryOpKind::Mul), codelet::binary(BinaryOpKind::Add)}, 4);
    m_b.touch(statsHandle);
    for (int input : op.inputs)
        m_b.touch(handleOf(input));
    const int y = op.outputs.at(0);
    m_width[std::size_t(y)] = m_width[std::size_t(x)];
    produce(y, m_b.bytes(handleOf(x)));
    m_b.touch(handleOf(y));
}

void GraphLowering::lowerBatchNormInference(const Op& op)
{
    // The running statistics, gamma and beta come to every tile of x, which folds its channels'
    // into a scale and a shift and applies them.
    using costs::BinaryOpKind;
    const int x = op.inputs.at(0);
    const Precision type = m_graph.tensor(x).type;
    const TileVector elems = elementsOn(x);
    const uint64_t C = op.channels;
    std::vector<ExchangeBytes> in(m_hw.tiles);
    for (std::size_t i = 1; i < op.inputs.size(); ++i)
        addSends(in, op.inputs[i]);
    addChannelParams(in, x, C, 4 * bytesOf(type));
    TileVector cycles(m_hw.tiles, 0);
    for (uint32_t t = 0; t < m_hw.tiles; ++t)
        if (elems[t]) {
            const uint64_t piece = rowPiece(x, C, elems[t]);
            cycles[t] = costs::unaryOp(m_hw, costs::UnaryOpKind::Rsqrt, type, piece) +
                        3 * costs::binaryOp(m_hw, BinaryOpKind::Mul, type, piece) +
                        costs::binaryOp(m_hw, BinaryOpKind::Mul, type, elems[t]) + costs::binaryOp(m_hw, BinaryOpKind::Add, type, elems[t]);
        }
    m_b.sync();
    m_b.exchange(op.name + ".params", in);
    m_b.compute(op.name, cycles, {codelet::unary(costs::UnaryOpKind::Rsqrt), codelet::binary(BinaryOpKind::Mul), codelet::binary(BinaryOpKind::Add)}, 3);
    for (int input : op.inputs)
        m_b.touch(handleOf(input));
    const int y = op.outputs.at(0);
    m_width[std::size_t(y)] = m_width[std::size_t(x)];
    produce(y, m_b.bytes(handleOf(x)));
    m_b.touch(handleOf(y));
}

void GraphLowering::lowerBatchNormGrad(const Op& op)
{
    // PopLibs' normStatisticsGradients: x^ = (x - mean) / sigma again, then per channel the
    // sums of x^ dy and of dy (the gamma and beta gradients, one reduction), which come back to
    // every tile of x for dx = gamma / sigma x (dy - dbeta / M - x^ dgamma / M).
    using costs::BinaryOpKind;
    const int dy = op.inputs.at(0), gamma = op.inputs.at(2);
    const bool withDx = op.outputs.size() == 3;
    const int dgamma = op.outputs.at(withDx ? 1 : 0), dbeta = op.outputs.at(withDx ? 2 : 1);
    const Precision type = m_graph.tensor(dy).type;
    const TileVector elems = elementsOn(dy);
    const uint64_t C = op.channels;
    const uint32_t T = m_hw.tiles;
    std::vector<ExchangeBytes> in(T);
    const TileVector stats = linearMapping(T, 2 * C * 4, kGrainBytes);
    for (uint32_t t = 0; t < T; ++t)
        in[t].send += stats[t];
    addSends(in, gamma);
    addChannelParams(in, dy, C, 2 * 4 + bytesOf(type));
    gather(op.name + ".x", op.inputs[1], dy);
    m_b.sync();
    m_b.exchange(op.name + ".params", in);

    TileVector xHatBytes(T, 0);
    ChannelReduce r;
    r.name = r.finalName = op.name + ".params_grad";
    r.source = dy;
    r.channels = C;
    r.values = 2;
    r.extra.assign(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t]) {
            r.extra[t] = costs::binaryOp(m_hw, BinaryOpKind::Sub, type, elems[t]) + 2 * costs::binaryOp(m_hw, BinaryOpKind::Mul, type, elems[t]);
            xHatBytes[t] = elems[t] * bytesOf(type);
        }
    r.localTypes = {codelet::binary(BinaryOpKind::Sub), codelet::binary(BinaryOpKind::Mul), Vertex::ReduceStrided};
    r.outputs = {dgamma, dbeta};
    const int xHat = m_b.allocate(op.name + " x_hat", "temporary", xHatBytes);
    reduceChannels(r);
    m_b.touch(handleOf(op.inputs[1]));
    if (!withDx) {
        m_b.touch(xHat);
        m_b.touch(handleOf(dy));
        return;
    }

    const int dx = op.outputs.at(0);
    std::vector<ExchangeBytes> back(T);
    addSends(back, dgamma);
    addSends(back, dbeta);
    addChannelParams(back, dy, C, 2 * bytesOf(type));
    TileVector cycles(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t])
            cycles[t] = 2 * costs::binaryOp(m_hw, BinaryOpKind::Sub, type, elems[t]) + 2 * costs::binaryOp(m_hw, BinaryOpKind::Mul, type, elems[t]);
    m_b.sync();
    m_b.exchange(op.name + ".params_grad.out", back);
    m_b.compute(op.name, cycles, {codelet::binary(BinaryOpKind::Sub), codelet::binary(BinaryOpKind::Mul)}, 4);
    m_b.touch(xHat);
    m_b.touch(handleOf(dy));
    m_width[std::size_t(dx)] = m_width[std::size_t(dy)];
    produce(dx, m_b.bytes(handleOf(dy)));
    m_b.touch(handleOf(dx));
}

void GraphLowering::lowerReduceRepeats(const Op& op)
{
    // A broadcast operand's gradient: each tile sums its elements' repeats into partial sums of
    // at most the whole operand (a run of elements sharing one repeated element sums into one);
    // the partials meet on the tiles of the result (spread linearly), which add them up.
    const int dy = op.inputs.at(0), out = op.outputs.at(0);
    const TensorDesc& od = m_graph.tensor(out);
    const uint64_t outputs = std::max<uint64_t>(od.elements(), 1);
    const uint32_t T = m_hw.tiles;
    const TileVector elems = elementsOn(dy);
    TileVector local(T, 0), partialBytes(T, 0);
    std::vector<ExchangeBytes> x(T);
    uint64_t partials = 0;
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t]) {
            const uint64_t sums = std::min(ceilDiv(elems[t], op.broadcastRun), outputs);
            local[t] = costs::reduce(m_hw, Precision::FP32, sums, ceilDiv(elems[t], sums));
            partialBytes[t] = sums * 4;
            x[t].send += sums * 4;
            partials += sums;
        }
    const TileVector outMap = linearMapping(T, od.bytes(), kGrainBytes);
    TileVector final(T, 0);
    const uint64_t perOutput = ceilDiv(partials, outputs);
    for (uint32_t t = 0; t < T; ++t)
        if (outMap[t]) {
            const uint64_t mine = outMap[t] / bytesOf(od.type);
            x[t].recv += mine * perOutput * 4;
            final[t] = costs::reduce(m_hw, Precision::FP32, mine, perOutput);
        }
    m_b.sync();
    const int partialHandle = m_b.allocate(op.name + " partials", "temporary", partialBytes);
    m_b.compute(op.name + ".local", local, {codelet::partialsReduce()});
    m_b.touch(handleOf(dy));
    m_b.sync();
    m_b.exchange(op.name + ".in", x);
    produce(out, outMap);
    m_b.compute(op.name, final, {codelet::partialsReduce()});
    m_b.touch(partialHandle);
    m_b.touch(handleOf(out));
}

void GraphLowering::lowerGlobalPool(const Op& op)
{
    // PopLibs' pooling planner puts each output's whole window on one tile: the image of every
    // (sample, channel) crosses the exchange to the output's tile, which sums and scales it.
    const int x = op.inputs.at(0), y = op.outputs.at(0);
    const Precision type = m_graph.tensor(x).type;
    const uint32_t T = m_hw.tiles;
    const TileVector outMap = linearMapping(T, m_graph.tensor(y).bytes(), kGrainBytes);
    std::vector<ExchangeBytes> in(T);
    addSends(in, x);
    TileVector windows(T, 0), cycles(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        if (outMap[t]) {
            const uint64_t rows = outMap[t] / bytesOf(type);
            windows[t] = rows * op.window * bytesOf(type);
            in[t].recv += windows[t];
            cycles[t] = costs::reduceRows(m_hw, type, rows, op.window) + costs::broadcastScalar(m_hw, costs::BinaryOpKind::Mul, type, rows);
        }
    m_b.sync();
    const int temp = m_b.allocate(op.name + " windows", "temporary", windows);
    m_b.exchange(op.name + ".in", in);
    m_b.touch(handleOf(x));
    produce(y, outMap);
    m_b.compute(op.name, cycles, {codelet::rowReduce(), codelet::byScalar(costs::BinaryOpKind::Mul)});
    m_b.touch(temp);
    m_b.touch(handleOf(y));
}

void GraphLowering::lowerGlobalPoolGrad(const Op& op)
{
    // Each image position gets its (sample, channel)'s gradient scaled by 1 / window: the
    // gradients spread linearly, each tile receiving those of the images it holds part of.
    const int dy = op.inputs.at(0), dx = op.outputs.at(0);
    const Precision type = m_graph.tensor(dy).type;
    const uint32_t T = m_hw.tiles;
    const TileVector outMap = linearMapping(T, m_graph.tensor(dx).bytes(), kGrainBytes);
    std::vector<ExchangeBytes> in(T);
    addSends(in, dy);
    TileVector cycles(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        if (outMap[t]) {
            const uint64_t e = outMap[t] / bytesOf(type);
            in[t].recv += (ceilDiv(e, op.window) + 1) * bytesOf(type);
            cycles[t] = costs::broadcastScalar(m_hw, costs::BinaryOpKind::Mul, type, e); // times 1 / window
        }
    m_b.sync();
    m_b.exchange(op.name + ".in", in);
    m_b.touch(handleOf(dy));
    produce(dx, outMap);
    m_b.compute(op.name, cycles, {codelet::byScalar(costs::BinaryOpKind::Mul)});
    m_b.touch(handleOf(dx));
}

} // namespace ipusim
