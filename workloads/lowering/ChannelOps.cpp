// SPDX-License-Identifier: MIT
// GraphLowering's per-channel ops: sums over positions (bias and norm parameter gradients),
// batch norm with its statistics, and global average pooling.
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>

namespace ipusim {

std::pair<TileVector, PlanTensor> GraphLowering::reduceChannels(OpPlan& plan, const ChannelReduce& r)
{
    // Three stages, as PopLibs spreads a reduction: each tile sums its own elements per
    // channel; then channel c's partial sums from group s of contributing tiles meet on
    // reducer tile (c, s); finally the S group sums of each channel meet on the tiles of the
    // result. Each stage is popops ReduceAdd as PopLibs specialises it (poplibs-costs §3.8):
    // per-channel columns of [rows x channels] are a STRIDED_REDUCE, one channel's partials
    // on a reducer a SINGLE_INPUT vertex per value.
    const Precision type = m_graph.tensor(r.source).type;
    const TileVector elems = elementsOn(r.source);
    const uint64_t C = r.channels, V = r.values.size();
    const uint32_t T = m_hw.tiles;
    const Precision f32 = Precision::FP32;
    ComputePlan local{r.name + ".local", TileCalls(T)};
    ShareRecipes<std::pair<uint64_t, uint64_t>> localRecipes; // by elements and channels held
    TileVector partials(T, 0);
    uint64_t partialsTotal = 0; // per value
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t]) {
            const uint64_t outs = rowPiece(r.source, C, elems[t]);
            local.calls.add(t, localRecipes({elems[t], outs}, [&] {
                std::vector<VertexCall> calls = r.extra ? r.extra(elems[t]) : std::vector<VertexCall>{};
                for (ReduceOp op : r.values) // ADD and SQUARE_ADD in one reduceMany: the square is the reduction's own
                    calls.push_back({{Vertex::ReduceStrided, op}, ReduceArgs{type, f32, outs, ceilDiv(elems[t], outs), outs}});
                return calls;
            }));
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
    const PlanTensor partialSums = plan.temporary(r.name + " partials", partials);
    PlanStep& localStep = plan.compute(std::move(local)).read(PlanTensor::graph(r.source)).read(r.localReads);
    for (PlanTensor t : r.localWrites)
        localStep.write(t);
    localStep.write(partialSums);
    const PlanTensor groupSums = reduceChannelGroups(plan, r, partials, n, groups);
    plan.steps.back().read(partialSums);
    return finishChannels(plan, r, groups, groupSums);
}

PlanTensor GraphLowering::reduceChannelGroups(OpPlan& plan, const ChannelReduce& r, const TileVector& partials, uint64_t n,
                                              uint64_t groups) const
{
    // Stage 2: reducer (c, s) is tile c * groups + s (wrapping when C * groups > T).
    const uint32_t T = m_hw.tiles;
    const uint64_t V = r.values.size(), perGroup = ceilDiv(n, groups);
    std::vector<ExchangeBytes> x(T);
    TileVector bytes(T, 0), vertices(T, 0), partialsPerVertex(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        x[t].send += partials[t];
    for (uint64_t c = 0; c < r.channels; ++c)
        for (uint64_t g = 0; g < groups; ++g) {
            const uint32_t reducer = uint32_t((c * groups + g) % T);
            const uint64_t members = std::min(perGroup, n - std::min(n, g * perGroup));
            x[reducer].recv += members * 4 * V;
            bytes[reducer] += members * 4 * V;
            vertices[reducer] += V; // a worker vertex per value, six side by side
            partialsPerVertex[reducer] = std::max<uint64_t>({partialsPerVertex[reducer], members, 1});
        }
    ComputePlan reduce{r.name + ".groups", TileCalls(T)};
    ShareRecipes<std::pair<uint64_t, uint64_t>, std::vector<TileCall>> recipes; // by batches and partials
    for (uint32_t t = 0; t < T; ++t)
        if (vertices[t]) {
            const uint64_t batches = ceilDiv(vertices[t], m_hw.workers);
            reduce.calls.add(t, recipes({batches, partialsPerVertex[t]}, [&] {
                return std::vector<TileCall>{
                    {{Vertex::ReduceSingleInput, ReduceArgs{Precision::FP32, Precision::FP32, 1, partialsPerVertex[t]}}, batches}};
            }));
        }
    const PlanTensor groupSums = plan.temporary(r.name + " group partials", bytes);
    plan.exchange(r.name + ".groups.in", std::move(x)).write(groupSums);
    plan.compute(std::move(reduce), false);
    return groupSums;
}

std::pair<TileVector, PlanTensor> GraphLowering::finishChannels(OpPlan& plan, const ChannelReduce& r, uint64_t groups, PlanTensor groupSums)
{
    // Stage 3: the S group sums of each channel onto the result's tiles.
    const uint32_t T = m_hw.tiles;
    const uint64_t V = r.values.size();
    TileVector outBytes(T, 0);
    const Precision outType = r.outputs.empty() ? Precision::FP32 : m_graph.tensor(r.outputs[0]).type;
    if (r.outputs.empty())
        outBytes = linearMapping(T, V * r.channels * 4, kGrainBytes);
    std::vector<TileVector> placed; // each output's, linearly
    for (int out : r.outputs) {
        placed.push_back(linearMapping(T, m_graph.tensor(out).bytes(), kGrainBytes));
        for (uint32_t t = 0; t < T; ++t)
            outBytes[t] += placed.back()[t];
    }
    std::vector<ExchangeBytes> y(T);
    ComputePlan final{r.finalName, TileCalls(T)};
    ShareRecipes<uint64_t> recipes; // by results held
    for (uint64_t c = 0; c < r.channels; ++c)
        for (uint64_t g = 0; g < groups; ++g)
            y[uint32_t((c * groups + g) % T)].send += 4 * V;
    for (uint32_t t = 0; t < T; ++t)
        if (outBytes[t]) {
            const uint64_t outs = outBytes[t] / bytesOf(outType); // the results, in their own type
            y[t].recv += outs * groups * 4;
            final.calls.add(t, recipes(outs, [&] { return std::vector<VertexCall>{{Vertex::ReduceStrided, ReduceArgs{Precision::FP32, outType, outs, groups, outs}}}; }));
        }
    plan.exchange(r.name + ".final.in", std::move(y));
    PlanStep& sum = plan.compute(std::move(final), false).read(groupSums);
    PlanTensor sums;
    if (r.outputs.empty())
        sum.write(sums = plan.temporary(r.name + " sums", outBytes));
    for (std::size_t i = 0; i < r.outputs.size(); ++i)
        sum.write(plan.output(r.outputs[i], placed[i]));
    return {outBytes, sums};
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
    OpPlan plan;
    reduceChannels(plan, r);
    emit(plan);
}

void GraphLowering::lowerBatchNorm(const Op& op)
{
    // Training: the sums of x and x^2 per channel over batch and image (PopLibs' one
    // reduceMany of ADD and SQUARE_ADD), then mean and 1 / sqrt(var + eps) where the sums are,
    // with the running statistics' momentum update; the statistics, gamma and beta come to
    // every tile of x, which whitens and scales its elements.
    using costs::BinaryOpKind;
    using namespace calls;
    const int x = op.inputs.at(0), gamma = op.inputs[1], beta = op.inputs[2], mean = op.inputs[3], var = op.inputs[4];
    const Precision type = m_graph.tensor(x).type, f32 = Precision::FP32;
    const TileVector elems = elementsOn(x);
    const uint64_t C = op.channels;
    const uint32_t T = m_hw.tiles;
    ChannelReduce r;
    r.name = r.finalName = op.name + ".stats";
    r.source = x;
    r.channels = C;
    r.values = {ReduceOp::Add, ReduceOp::SquareAdd};
    OpPlan plan;
    const auto [sums, stats] = reduceChannels(plan, r);

    ComputePlan inv{op.name + ".inv_std_dev", TileCalls(T)};
    ShareRecipes<uint64_t> invRecipes, whitenRecipes; // by channels, by elements
    for (uint32_t t = 0; t < T; ++t)
        if (sums[t]) {
            const uint64_t channels = ceilDiv(sums[t] / 4, 2);
            inv.calls.add(t, invRecipes(channels, [&] {
                return std::vector<VertexCall>{binary(BinaryOpKind::Mul, f32, 2 * channels), {Vertex::InverseStdDeviation, CountArgs{channels}},
                                               scaledAdd(f32, channels), scaledAdd(f32, channels)};
            }));
        }
    plan.compute(std::move(inv)).read(PlanTensor::graph(mean)).read(PlanTensor::graph(var));

    std::vector<ExchangeBytes> in(T);
    for (uint32_t t = 0; t < T; ++t)
        in[t].send += sums[t];
    addSends(in, gamma);
    addSends(in, beta);
    addChannelParams(in, x, C, 2 * 4 + 2 * bytesOf(type));
    ComputePlan whiten{op.name, TileCalls(T), 4};
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t]) { // (x - mean) x 1/sigma x gamma + beta
            whiten.calls.add(t, whitenRecipes(elems[t], [&] {
                const uint64_t e = elems[t];
                return std::vector<VertexCall>{binary(BinaryOpKind::Sub, type, e), binary(BinaryOpKind::Mul, type, e),
                                               binary(BinaryOpKind::Mul, type, e), binary(BinaryOpKind::Add, type, e)};
            }));
        }
    plan.exchange(op.name + ".params", std::move(in));
    plan.compute(std::move(whiten), false).read(stats).read(op.inputs);
    const int y = op.outputs.at(0);
    m_width[std::size_t(y)] = m_width[std::size_t(x)];
    plan.output(y, m_b.bytes(handleOf(x)));
    emit(plan);
}

void GraphLowering::lowerBatchNormInference(const Op& op)
{
    // The running statistics, gamma and beta come to every tile of x, which folds its channels'
    // into a scale and a shift and applies them.
    using costs::BinaryOpKind;
    using namespace calls;
    const int x = op.inputs.at(0);
    const Precision type = m_graph.tensor(x).type;
    const TileVector elems = elementsOn(x);
    const uint64_t C = op.channels;
    std::vector<ExchangeBytes> in(m_hw.tiles);
    for (std::size_t i = 1; i < op.inputs.size(); ++i)
        addSends(in, op.inputs[i]);
    addChannelParams(in, x, C, 4 * bytesOf(type));
    ComputePlan apply{op.name, TileCalls(m_hw.tiles), 3};
    ShareRecipes<std::pair<uint64_t, uint64_t>> recipes; // by channels and elements held
    for (uint32_t t = 0; t < m_hw.tiles; ++t)
        if (elems[t]) {
            const uint64_t piece = rowPiece(x, C, elems[t]);
            apply.calls.add(t, recipes({piece, elems[t]}, [&] {
                const uint64_t e = elems[t];
                const VertexCall perChannel = binary(BinaryOpKind::Mul, type, piece);
                return std::vector<VertexCall>{unary(costs::UnaryOpKind::Rsqrt, type, piece), perChannel, perChannel, perChannel,
                                               binary(BinaryOpKind::Mul, type, e), binary(BinaryOpKind::Add, type, e)};
            }));
        }
    OpPlan plan;
    plan.exchange(op.name + ".params", std::move(in));
    plan.compute(std::move(apply), false).read(op.inputs);
    const int y = op.outputs.at(0);
    m_width[std::size_t(y)] = m_width[std::size_t(x)];
    plan.output(y, m_b.bytes(handleOf(x)));
    emit(plan);
}

void GraphLowering::lowerBatchNormGrad(const Op& op)
{
    // PopLibs' normStatisticsGradients: x^ = (x - mean) / sigma again, then per channel the
    // sums of x^ dy and of dy (the gamma and beta gradients, one reduction), which come back to
    // every tile of x for dx = gamma / sigma x (dy - dbeta / M - x^ dgamma / M).
    using costs::BinaryOpKind;
    using namespace calls;
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
    OpPlan plan;
    gather(plan, op.name + ".x", op.inputs[1], dy);
    plan.exchange(op.name + ".params", std::move(in));

    TileVector xHatBytes(T, 0);
    ChannelReduce r;
    r.name = r.finalName = op.name + ".params_grad";
    r.source = dy;
    r.channels = C;
    r.values = {ReduceOp::Add, ReduceOp::Add};
    r.extra = [&](uint64_t e) { // x^ again, and x^ dy
        return std::vector<VertexCall>{binary(BinaryOpKind::Sub, type, e), binary(BinaryOpKind::Mul, type, e),
                                       binary(BinaryOpKind::Mul, type, e)};
    };
    for (uint32_t t = 0; t < T; ++t)
        xHatBytes[t] = elems[t] * bytesOf(type);
    r.outputs = {dgamma, dbeta};
    const PlanTensor xHat = plan.temporary(op.name + " x_hat", xHatBytes);
    r.localWrites = {xHat};
    r.localReads = {PlanTensor::graph(op.inputs[1])}; // x, for x^
    reduceChannels(plan, r);
    if (!withDx) {
        plan.steps.back().read(xHat).read(PlanTensor::graph(dy));
        emit(plan);
        return;
    }
    const int dx = op.outputs.at(0);
    std::vector<ExchangeBytes> back(T);
    for (int grad : {dgamma, dbeta}) { // placed by this plan's reduction, linearly
        const TileVector placed = linearMapping(T, m_graph.tensor(grad).bytes(), kGrainBytes);
        for (uint32_t t = 0; t < T; ++t)
            back[t].send += placed[t];
    }
    addChannelParams(back, dy, C, 2 * bytesOf(type));
    ComputePlan apply{op.name, TileCalls(T), 4};
    ShareRecipes<uint64_t> recipes; // by elements held
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t]) {
            apply.calls.add(t, recipes(elems[t], [&] {
                const uint64_t e = elems[t];
                return std::vector<VertexCall>{binary(BinaryOpKind::Sub, type, e), binary(BinaryOpKind::Sub, type, e),
                                               binary(BinaryOpKind::Mul, type, e), binary(BinaryOpKind::Mul, type, e)};
            }));
        }
    plan.exchange(op.name + ".params_grad.out", std::move(back)).read(PlanTensor::graph(dgamma)).read(PlanTensor::graph(dbeta));
    plan.compute(std::move(apply), false).read(xHat).read(PlanTensor::graph(dy));
    m_width[std::size_t(dx)] = m_width[std::size_t(dy)];
    plan.output(dx, m_b.bytes(handleOf(dy)));
    emit(plan);
}

void GraphLowering::lowerReduceRepeats(const Op& op)
{
    // A broadcast operand's gradient: the repeats of each of its elements sum, a run of
    // elements sharing one repeated element into one partial sum, fp32 throughout.
    reduceRuns(op, op.broadcastRun, {Precision::FP32, false});
}

void GraphLowering::reduceRuns(const Op& op, uint64_t run, RunReduction how, uint64_t inner)
{
    // popops::reduce over tiles: each tile sums the runs it holds into partial sums (at most one
    // per output: runs of `run` elements, each of one output); the partials cross to the tiles
    // of the result (spread linearly), which add them up. Elements `inner` apart (a reduction
    // over middle dimensions) are summed by a strided reduce, a partial for each of the inner
    // positions a tile's piece covers.
    const auto reduceCall = [&](Precision type, uint64_t outputs, uint64_t partials) {
        if (inner > 1)
            return VertexCall{{Vertex::ReduceStrided, ReduceOp::Add}, ReduceArgs{type, Precision::FP32, outputs, partials, outputs}};
        return how.continuous ? calls::rowReduce(type, outputs, partials) : calls::partialsReduce(type, outputs, partials);
    };
    const int source = op.inputs.at(0), out = op.outputs.at(0);
    const TensorDesc& od = m_graph.tensor(out);
    const uint64_t outputs = std::max<uint64_t>(od.elements(), 1);
    const uint32_t T = m_hw.tiles;
    const TileVector elems = elementsOn(source);
    ComputePlan local{op.name + ".local", TileCalls(T)}, sum{op.name, TileCalls(T)};
    TileVector partialBytes(T, 0);
    std::vector<ExchangeBytes> x(T);
    uint64_t partials = 0;
    for (uint32_t t = 0; t < T; ++t)
        if (elems[t]) {
            const uint64_t sums = std::min(std::min(elems[t], inner) * ceilDiv(elems[t], run * inner), outputs);
            local.calls.add(t, reduceCall(how.localType, sums, ceilDiv(elems[t], sums)));
            partialBytes[t] = sums * 4;
            x[t].send += sums * 4;
            partials += sums;
        }
    const TileVector outMap = linearMapping(T, od.bytes(), kGrainBytes);
    const uint64_t perOutput = ceilDiv(partials, outputs);
    for (uint32_t t = 0; t < T; ++t)
        if (outMap[t]) {
            const uint64_t mine = outMap[t] / bytesOf(od.type);
            x[t].recv += mine * perOutput * 4;
            sum.calls.add(t, how.continuous ? calls::rowReduce(Precision::FP32, mine, perOutput) : calls::partialsReduce(Precision::FP32, mine, perOutput));
        }
    OpPlan plan;
    const PlanTensor partialSums = plan.temporary(op.name + " partials", partialBytes);
    plan.compute(std::move(local)).read(PlanTensor::graph(source)).write(partialSums);
    plan.exchange(op.name + ".in", std::move(x));
    plan.compute(std::move(sum), false).read(partialSums).write(plan.output(out, outMap));
    emit(plan);
}

void GraphLowering::lowerReduce(const Op& op)
{
    // PopART's ReduceMean and ReduceSum are popops::reduce (the mean's 1 / window an output
    // scale, free, §3.8): in runs over the last dimensions, strided over middle ones. So is
    // popnn's global pool, whose kernel covers the whole field (Pooling.cpp,
    // substPoolingWithReduction: the pooling planner never splits a kernel): each tile sums the
    // pieces of images it holds (ALL_REGIONS_CONTINUOUS, the input's type in, fp32 partials
    // out), and the partials meet on the result's tiles. The gradient broadcasts the output's
    // back (substPoolingGradientWithBroadcast; PopART's ReduceMeanGrad), scaled for a mean;
    // PopART's Expand is that broadcast too (a broadcast view, then cloneNcopy), unscaled.
    if (op.kind == OpKind::Reduce)
        return reduceRuns(op, op.window, {m_graph.tensor(op.inputs.at(0)).type, op.inner == 1}, op.inner);
    broadcastGradient(op, op.inner, op.kind == OpKind::ReduceGrad && op.mean);
}

void GraphLowering::broadcastGradient(const Op& op, uint64_t inner, bool scaled)
{
    // The gradients spread linearly, each tile receiving those of the outputs its elements
    // read (runs of `window`, or `inner` positions of each block of window x inner), then
    // scaled by 1 / window in place, or (a sum's) copied into the broadcast shape.
    const int source = op.inputs.at(0), result = op.outputs.at(0);
    const Precision type = m_graph.tensor(source).type;
    const unsigned bytes = bytesOf(type);
    const uint32_t T = m_hw.tiles;
    const TileVector outMap = linearMapping(T, m_graph.tensor(result).bytes(), kGrainBytes);
    std::vector<ExchangeBytes> in(T);
    addSends(in, source);
    ComputePlan scale{op.name, TileCalls(T)};
    for (uint32_t t = 0; t < T; ++t) {
        const uint64_t e = outMap[t] / bytes;
        if (!outMap[t])
            continue;
        in[t].recv += (std::min(e, inner) * ceilDiv(e, op.window * inner) + 1) * bytes;
        scale.calls.add(t, scaled ? calls::byScalar(costs::BinaryOpKind::Mul, type, e) : calls::copy(e * bytes, bytes));
    }
    OpPlan plan;
    plan.exchange(op.name + ".in", std::move(in)).read(PlanTensor::graph(source));
    plan.compute(std::move(scale), false).write(plan.output(result, outMap));
    emit(plan);
}

} // namespace ipusim
