// SPDX-License-Identifier: MIT
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "models/timing/VertexCosts.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

namespace ipusim {
namespace {

const char* kindOf(TensorRole r)
{
    switch (r) {
    case TensorRole::Input: return "input";
    case TensorRole::Label: return "label";
    case TensorRole::Weight: return "weight";
    case TensorRole::Activation: return "activation";
    case TensorRole::Gradient: return "gradient";
    case TensorRole::WeightGradient: return "weight gradient";
    case TensorRole::Accumulator: return "accumulator";
    case TensorRole::OptimizerState: return "optimizer state";
    case TensorRole::Output: return "output";
    case TensorRole::Buffer: return "buffer";
    }
    return "tensor";
}

} // namespace

GraphLowering::GraphLowering(const Graph& graph, ProgramBuilder& builder)
    : m_graph(graph), m_b(builder), m_hw(builder.hw()), m_handle(graph.tensors.size(), -1), m_width(graph.tensors.size(), 0)
{
}

uint64_t GraphLowering::rowPiece(int tensor, uint64_t rowLength, uint64_t elements) const
{
    const uint64_t w = m_width.at(std::size_t(tensor));
    return std::max<uint64_t>(1, std::min({rowLength, elements, w ? w : rowLength}));
}

int GraphLowering::handleOf(int tensor)
{
    int h = m_handle.at(std::size_t(tensor));
    if (h < 0)
        throw std::logic_error("tensor " + m_graph.tensor(tensor).name + " used before it is produced");
    return h;
}

int GraphLowering::produce(int tensor, TileRuns<uint64_t> bytes)
{
    const TensorDesc& d = m_graph.tensor(tensor);
    const bool always = d.role == TensorRole::Weight || d.role == TensorRole::Accumulator || d.role == TensorRole::OptimizerState ||
                        d.role == TensorRole::Buffer;
    m_handle[std::size_t(tensor)] = m_b.allocate(d.name, kindOf(d.role), std::move(bytes), always);
    return m_handle[std::size_t(tensor)];
}

void GraphLowering::alias(int tensor, int source) { m_handle[std::size_t(tensor)] = handleOf(source); }

TileVector GraphLowering::elementsOn(int tensor) const
{
    TileVector e = m_b.denseBytes(m_handle.at(std::size_t(tensor)));
    const unsigned b = bytesOf(m_graph.tensor(tensor).type);
    for (auto& x : e)
        x /= b;
    return e;
}

void GraphLowering::addSends(std::vector<ExchangeBytes>& x, int tensor) const
{
    for (const auto& r : m_b.bytes(m_handle.at(std::size_t(tensor))).runs())
        for (uint32_t t = r.first; t < r.end(); ++t)
            x[t].send += r.value;
}

void GraphLowering::importTensor(int tensor)
{
    const TensorDesc& d = m_graph.tensor(tensor);
    m_handle[std::size_t(tensor)] =
        m_b.allocate(d.name + " (received)", "ipu copy buffer", linearMappingRuns(m_hw.tiles, d.bytes(), kGrainBytes), true);
}

void GraphLowering::placePersistent(const std::vector<std::string>& blocks)
{
    const std::unordered_set<std::string_view> wanted(blocks.begin(), blocks.end()); // a stage's tens of blocks
    for (std::size_t i = 0; i < m_graph.tensors.size(); ++i) {
        const TensorDesc& d = m_graph.tensors[i];
        if (!blocks.empty() && !wanted.count(d.block))
            continue;
        if (d.role == TensorRole::Weight || d.role == TensorRole::Accumulator || d.role == TensorRole::Buffer)
            produce(int(i), linearMappingRuns(m_hw.tiles, d.bytes(), kGrainBytes));
        else if (d.role == TensorRole::OptimizerState) { // sharded: this replica's 1/R only
            const uint64_t bytes = ceilDiv(d.bytes(), m_sharded ? m_replicas : 1);
            if (m_offload)
                m_offloadedBytes += bytes; // brought in by lowerUpdate
            else
                produce(int(i), linearMappingRuns(m_hw.tiles, bytes, kGrainBytes));
        }
    }
}

void GraphLowering::lowerAfresh(const Op& op)
{
    switch (op.kind) {
    case OpKind::HostLoad:
    case OpKind::HostStore: lowerHost(op); break;
    case OpKind::Conv: lowerConv(op); break;
    case OpKind::BiasAdd:
    case OpKind::MaxPool:
    case OpKind::MaxPoolGrad:
    case OpKind::AvgPool:
    case OpKind::AvgPoolGrad:
    case OpKind::Cast:
    case OpKind::Relu:
    case OpKind::ReluGrad: lowerElementwise(op); break;
    case OpKind::BiasGrad: lowerBiasGrad(op); break;
    case OpKind::SoftmaxCrossEntropy:
    case OpKind::SoftmaxCrossEntropyGrad:
    case OpKind::NllLoss:
    case OpKind::NllLossGrad: lowerLoss(op); break;
    case OpKind::GradAccumulate: lowerAccumulate(op); break;
    case OpKind::AdamW:
    case OpKind::Lamb:
    case OpKind::Sgd:
    case OpKind::Lars: lowerOptimizer(op); break;
    case OpKind::BatchNorm: op.training ? lowerBatchNorm(op) : lowerBatchNormInference(op); break;
    case OpKind::BatchNormGrad: lowerBatchNormGrad(op); break;
    case OpKind::GlobalAvgPool:
    case OpKind::GlobalAvgPoolGrad: lowerGlobalPool(op); break;
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::SliceGrad: lowerCopy(op); break;
    case OpKind::ReduceRepeats: lowerReduceRepeats(op); break;
    case OpKind::BatchMatMul: lowerConv(op); break;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::DivGradRhs:
    case OpKind::Scale:
    case OpKind::Gelu:
    case OpKind::GeluGrad:
    case OpKind::Tanh:
    case OpKind::TanhGrad:
    case OpKind::Softmax:
    case OpKind::SoftmaxGrad:
    case OpKind::LayerNorm:
    case OpKind::LayerNormGrad:
    case OpKind::Sigmoid:
    case OpKind::SigmoidGrad:
    case OpKind::Exp:
    case OpKind::ExpGrad:
    case OpKind::Dropout:
    case OpKind::DropoutGrad:
    case OpKind::LogSoftmax:
    case OpKind::LogSoftmaxGrad: lowerRowwise(op); break;
    case OpKind::Gather: lowerGather(op); break;
    case OpKind::AttentionMask: lowerAttentionMask(op); break;
    case OpKind::GatherGrad: lowerGatherGrad(op); break;
    }
}

void GraphLowering::lowerHost(const Op& op)
{
    OpPlan plan;
    uint64_t bytes = 0;
    if (op.kind == OpKind::HostStore) {
        for (int t : op.inputs)
            bytes += m_graph.tensor(t).bytes();
        plan.host({op.name, Direction::FromIpu, bytes}).read(op.inputs);
    } else if (m_ioCount == 0) {
        PlanStep& load = plan.host({op.name, Direction::ToIpu, 0});
        for (int t : op.outputs) {
            bytes += m_graph.tensor(t).bytes();
            load.write(plan.output(t, linearMappingRuns(m_hw.tiles, m_graph.tensor(t).bytes(), kGrainBytes)));
        }
        std::get<HostPlan>(load.work).bytes = bytes;
    } else {
        // Inputs land on the IO tiles (a buffer for the micro-batch in use and one for each
        // fetched ahead: depth 1 double-buffers), then cross the exchange to the compute tiles.
        const uint32_t chip = m_ioFirst + m_ioCount;
        std::vector<ExchangeBytes> x(chip);
        for (int t : op.outputs)
            bytes += m_graph.tensor(t).bytes();
        TileVector io = linearMapping(chip, bytes, kGrainBytes, m_ioFirst, m_ioCount);
        TileVector buffers(io);
        for (auto& b : buffers)
            b *= uint64_t(m_prefetchDepth) + 1;
        const PlanTensor ioBuffers = plan.buffer(op.name + " IO buffers", "io tiles", toRuns(buffers));
        plan.host({op.name, Direction::ToIpu, bytes, true, m_prefetchDepth}).write(ioBuffers);
        for (uint32_t tile = 0; tile < chip; ++tile)
            x[tile].send += io[tile];
        PlanStep& toComputeTiles = plan.exchange(op.name + ".from_io_tiles", {});
        for (int t : op.outputs) {
            const TileVector mapping = linearMapping(m_hw.tiles, m_graph.tensor(t).bytes(), kGrainBytes);
            for (uint32_t tile = 0; tile < m_hw.tiles; ++tile)
                x[tile].recv += mapping[tile];
            toComputeTiles.write(plan.output(t, mapping));
        }
        std::get<ExchangePlan>(toComputeTiles.work).bytes = std::move(x);
    }
    emit(plan);
}

namespace {

/** Tiles' fractional shares of a tensor as whole elements, keeping the total: each tile its
 *  share rounded down, and the elements left over to the tiles with the largest remainders
 *  (the lower tile first). Rounding each share down alone would lose a narrow layer's outputs
 *  (and the work of every op after it) where each tile holds less than one element. */
std::vector<uint64_t> wholeElements(const std::vector<double>& shares)
{
    std::vector<uint64_t> whole(shares.size());
    double total = 0.0;
    uint64_t given = 0;
    std::vector<std::size_t> order(shares.size());
    for (std::size_t t = 0; t < shares.size(); ++t) {
        whole[t] = uint64_t(shares[t]);
        total += shares[t];
        given += whole[t];
        order[t] = t;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return shares[a] - double(whole[a]) > shares[b] - double(whole[b]);
    });
    const uint64_t wanted = uint64_t(std::llround(total));
    for (std::size_t k = 0; given < wanted && k < order.size() && shares[order[k]] > double(whole[order[k]]); ++k, ++given)
        ++whole[order[k]];
    return whole;
}

} // namespace

void GraphLowering::lowerConv(const Op& op)
{
    // A batched problem's groups spread over equal slots of tiles (PopLibs splits conv groups
    // across tiles first); each slot plans one group on its tiles and runs its groups in turn.
    const ConvProblem& whole = op.conv;
    const uint32_t T = m_hw.tiles;
    ConvSlots slots;
    slots.groups = std::max<uint64_t>(whole.groups, 1);
    slots.tilesPerSlot = slots.groups >= T ? 1 : uint32_t(T / slots.groups);
    slots.count = T / slots.tilesPerSlot;
    const uint64_t groupsPerSlot = ceilDiv(slots.groups, slots.count);
    ConvProblem pr = whole;
    pr.groups = 1;
    IpuParams slotHw = m_hw;
    slotHw.tiles = slots.tilesPerSlot;
    slotHw.availableMemoryProportion = m_hw.availableMemoryProportion / double(groupsPerSlot);
    const ConvPlan plan = m_planCache.plan(slotHw, pr);
    m_plans[op.name] = plan;
    // Model FLOPs as CompileGraph counts them: 2 per multiply-accumulate of the micro-batch.
    ConvWork w(T, op.name, 2.0 * double(op.conv.macs()));
    for (int in : op.inputs)
        addSends(w.x, in);
    planConvTiles(pr, plan, slots, w);
    const TileVector out = convOutputsHeld(pr, w);

    OpPlan p;
    const PlanTensor inputs = p.temporary(op.name + " inputs", w.temp);
    p.exchange(op.name + ".in", std::move(w.x)).read(op.inputs).write(inputs);
    const PlanTensor partials = p.temporary(op.name + " partials", w.partials);
    p.compute(std::move(w.conv), false).read(inputs).write(partials);
    if (plan.tilesPerInGroups > 1) { // the reduction slices' partials meet on the tiles reducing them
        std::vector<ExchangeBytes> r(T);
        for (uint32_t t = 0; t < T; ++t) {
            const uint64_t moved = w.partials[t] * (plan.tilesPerInGroups - 1) / plan.tilesPerInGroups;
            r[t] = {moved, moved, 0};
        }
        const PlanTensor received = p.temporary(op.name + " reduce buffer", w.partials);
        p.exchange(op.name + ".reduce.in", std::move(r)).write(received);
        p.compute(std::move(w.reduce), false).read(received);
    }
    p.steps.back().read(partials);
    p.output(op.outputs.at(0), out);
    if (plan.tilesPerOutGroups > 1)
        m_width[std::size_t(op.outputs.at(0))] =
            std::min<uint64_t>(pr.outChans, uint64_t(plan.outGroupsPerTile) * m_hw.amp(pr.input, pr.partials).units);
    emit(p);
}

void GraphLowering::planConvTiles(const ConvProblem& pr, const ConvPlan& plan, const ConvSlots& slots, ConvWork& w) const
{
    // Inputs and weights travel from where they live to the tiles that need them; a tile's
    // share of the weights is also wanted by its bus partner, so it arrives once for both.
    const AmpParams& amp = m_hw.amp(pr.input, pr.partials);
    const bool shared = plan.tilesPerPositions >= m_hw.tilesPerReceiveBus;
    const uint64_t outGroups = ceilDiv(pr.outChans, amp.units);
    std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint64_t>, std::vector<VertexCall>> tileCalls; // few distinct tiles
    for (uint32_t slot = 0; slot < slots.count; ++slot) {
        const uint64_t n = slots.groups / slots.count + (slot < slots.groups % slots.count ? 1 : 0); // groups this slot runs
        for (uint64_t t = 0; n > 0 && t < plan.tilesUsed() && t < slots.tilesPerSlot; ++t) {
            // Tile t of the slot works on position slice p, output-group slice o, reduction slice i.
            const uint64_t p = t % plan.tilesPerPositions;
            const uint64_t o = (t / plan.tilesPerPositions) % plan.tilesPerOutGroups;
            const uint64_t positions = std::min(plan.positionsPerTile, pr.positions - std::min(pr.positions, p * plan.positionsPerTile));
            const uint32_t og = uint32_t(std::min<uint64_t>(plan.outGroupsPerTile, outGroups - std::min(outGroups, o * plan.outGroupsPerTile)));
            if (positions == 0 || og == 0)
                continue;
            const uint32_t tile = uint32_t(slot * slots.tilesPerSlot + t);
            const double share = double(positions) / double(plan.positionsPerTile);
            const uint64_t inBytes = uint64_t(double(plan.inputBytesPerTile) * share) * n;
            const uint64_t weightBytes = plan.weightBytesPerTile / plan.outGroupsPerTile * og * n;
            w.x[tile].recv += inBytes;
            (shared ? w.x[tile].recvShared : w.x[tile].recv) += weightBytes;
            w.temp[tile] = inBytes + weightBytes;
            const uint64_t slice = positions * og * amp.units * n; // outputs of the tile's slice
            w.partials[tile] = slice * bytesOf(pr.partials);
            auto [it, added] = tileCalls.try_emplace(std::make_tuple(positions, plan.inGroupsPerTile, og, n));
            if (added) {
                it->second.push_back(calls::conv(tileShape(pr, plan, positions, og, uint32_t(n))));
                if (plan.tilesPerInGroups == 1 && pr.partials != pr.output)
                    it->second.push_back(calls::cast(pr.partials, pr.output, slice));
            }
            for (const VertexCall& call : it->second)
                w.conv.calls.add(tile, call);
            // The reduced outputs of the slice split evenly over its reduction tiles (tile t is
            // reduction slice i); each tile reduces its share of them.
            const uint64_t i = t / (plan.tilesPerPositions * plan.tilesPerOutGroups);
            const uint64_t mine = slice * (i + 1) / plan.tilesPerInGroups - slice * i / plan.tilesPerInGroups;
            if (plan.tilesPerInGroups > 1 && mine > 0) {
                w.reduce.calls.add(tile, calls::partialsReduce(pr.partials, mine, plan.tilesPerInGroups));
                if (pr.partials != pr.output)
                    w.reduce.calls.add(tile, calls::cast(pr.partials, pr.output, mine));
            }
            w.out[tile] = mine * bytesOf(pr.output);
        }
    }
}

TileVector GraphLowering::convOutputsHeld(const ConvProblem& pr, ConvWork& w) const
{
    // Outputs hold the real channels only (AMP groups are padded); a problem that computes
    // fewer positions than it writes (a strided layer's data gradient) zero-fills the rest.
    const uint32_t T = m_hw.tiles;
    const uint64_t units = m_hw.amp(pr.input, pr.partials).units;
    const double realShare = double(pr.outChans) / double(ceilDiv(pr.outChans, units) * units);
    const double written = pr.outputPositions ? double(pr.outputPositions) / double(pr.positions) : 1.0;
    std::vector<double> held(T, 0.0); // real elements each tile holds, before whole-element rounding
    for (uint32_t t = 0; t < T; ++t) {
        const uint64_t computed = w.out[t] / bytesOf(pr.output);
        if (pr.outputPositions && computed) // the positions no tap reaches
            w.conv.calls.add(t, calls::fill(pr.output, uint64_t(double(computed) * realShare * (written - 1.0))));
        held[t] = double(computed) * realShare * written;
    }
    const std::vector<uint64_t> elements = wholeElements(held);
    TileVector out(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        out[t] = elements[t] * bytesOf(pr.output);
    return out;
}

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
    // PopART runs ReLU in place (ReluInplace): UnaryOp1DInPlace<RELU> (poplibs-costs §2).
    case OpKind::Relu: return {{codelet::unaryInPlace(costs::UnaryOpKind::Relu), ElementArgs{type, e}}};
    case OpKind::Cast: return {{Vertex::Cast1D, CastArgs{type, m_graph.tensor(op.outputs.at(0)).type, e}}};
    case OpKind::ReluGrad: return {{{Vertex::NonLinearityGrad1D, costs::NonLinearity::Relu}, ElementArgs{type, e}}};
    case OpKind::MaxPool: return {{Vertex::MaxPooling, poolWork(op, type, pooled)}};
    // SumPooling applies the 1 / window itself
    case OpKind::AvgPool: return {{Vertex::SumPooling, poolWork(op, type, pooled)}};
    case OpKind::AvgPoolGrad: // the gradient times 1 / window (a scalar), then summed into the inputs' windows
        return {{codelet::byScalar(BinaryOpKind::Mul), ElementArgs{type, e}}, {Vertex::SumPooling, poolWork(op, type, unpooled)}};
    case OpKind::MaxPoolGrad: return {{Vertex::MaxPoolingGrad, poolWork(op, type, unpooled)}};
    default: throw std::logic_error("not an element-wise op: " + op.name);
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
    std::map<uint64_t, std::vector<VertexCall>> byElements; // tiles hold few distinct counts
    for (uint32_t t = 0; t < m_hw.tiles; ++t) {
        const uint64_t e = elems[t];
        if (!e)
            continue;
        if (op.kind == OpKind::BiasAdd)
            x[t].recvShared += std::min<uint64_t>(op.channels, e) * bytesOf(d.type); // the bias slice
        auto it = byElements.find(e);
        if (it == byElements.end())
            it = byElements.emplace(e, elementwiseCalls(op, d.type, e)).first;
        for (const VertexCall& call : it->second)
            compute.calls.add(t, call);
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
    if (op.kind == OpKind::BiasAdd || op.kind == OpKind::Relu || op.kind == OpKind::ReluGrad)
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

void GraphLowering::gather(OpPlan& plan, const std::string& name, int source, int target) const
{
    if (m_b.bytes(m_handle.at(std::size_t(source))) == m_b.bytes(m_handle.at(std::size_t(target))))
        return;
    const TileVector to = m_b.denseBytes(m_handle.at(std::size_t(target)));
    std::vector<ExchangeBytes> x(m_hw.tiles);
    addSends(x, source);
    const double ratio = double(m_graph.tensor(source).bytes()) / double(std::max<uint64_t>(m_graph.tensor(target).bytes(), 1));
    for (uint32_t t = 0; t < m_hw.tiles; ++t)
        x[t].recv += uint64_t(double(to[t]) * ratio);
    plan.exchange(name, std::move(x)).read(PlanTensor::graph(source));
}

void GraphLowering::gather(const std::string& name, int source, int target)
{
    OpPlan plan;
    gather(plan, name, source, target);
    emit(plan);
}

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
    std::vector<std::pair<uint64_t, uint64_t>> combined(T); // per tile: rows and pieces a row it combines
    for (std::size_t part = 0; part < parts; ++part) {
        const TileVector elems = elementsOn(op.inputs[part]);
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
            for (const VertexCall& call : lossCalls(op, type, e, rows, perRow))
                loss.calls.add(t, call);
            // Pieces of a row (over tiles or vocabulary parts) send their row max and sum to
            // the row's reducer and get the combined pair back; reducers rotate over the
            // tiles, so each tile also combines as many rows as it holds pieces of.
            // NLL's pieces combine only their share of each row's picked value, and only going forward.
            const uint64_t pieces = parts * ceilDiv(classes, perRow);
            if (pieces > 1 && (!nll || forward)) {
                const uint64_t statistics = nll ? 1 : 2;
                stats[t].send += statistics * rows * 8;
                stats[t].recv += statistics * rows * 8;
                combined[t] = {rows, pieces}; // a tile holding several parts combines for the last
                piecesCombine = true;
            }
        }
    }
    for (uint32_t t = 0; t < T; ++t)
        if (const auto [rows, pieces] = combined[t]; rows > 0) {
            if (!nll)
                combine.calls.add(t, calls::partialsReduce(Precision::FP32, rows, pieces, ReduceOp::Max));
            combine.calls.add(t, calls::partialsReduce(Precision::FP32, rows, pieces));
        }
    OpPlan plan;
    plan.exchange(op.name + ".labels", std::move(x));
    plan.compute(std::move(loss), false).read(op.inputs);
    if (piecesCombine) {
        plan.exchange(op.name + ".row_pieces", std::move(stats));
        plan.compute(std::move(combine), false);
    }
    if (forward)
        sumLosses(plan, op, rowsTotal);
    else
        for (std::size_t part = 0; part < parts; ++part) {
            plan.output(op.outputs.at(part), m_b.bytes(handleOf(op.inputs[part])));
            m_width[std::size_t(op.outputs.at(part))] = m_width[std::size_t(op.inputs[part])];
        }
    emit(plan);
}

void GraphLowering::sumLosses(OpPlan& plan, const Op& op, uint64_t rows) const
{
    // Each tile's per-row losses go to tile 0, which sums them into the loss.
    const uint32_t T = m_hw.tiles;
    const TileVector elems = elementsOn(op.inputs[0]);
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

void GraphLowering::lowerAccumulate(const Op& op)
{
    const int grad = op.inputs.at(0), acc = op.inputs.at(1);
    OpPlan plan;
    gather(plan, op.name + ".in", grad, acc);
    const TileVector elems = elementsOn(acc);
    ComputePlan add{op.name, TileCalls(m_hw.tiles)};
    for (uint32_t t = 0; t < m_hw.tiles; ++t)
        if (elems[t])
            add.calls.add(t, calls::scaledAdd(m_graph.tensor(acc).type, elems[t]));
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
    auto addAll = [](ComputePlan& c, uint32_t t, const std::vector<TileCall>& calls) {
        for (const TileCall& call : calls)
            c.calls.add(t, call.call, call.times);
    };
    for (uint32_t t = 0; t < T; ++t) {
        // With sharded state a replica updates 1/R of the weights.
        const uint64_t e = m_sharded ? ceilDiv(elems[t], m_replicas) : elems[t];
        if (!e)
            continue;
        ++holders;
        const OptimizerCalls c = optimizerCalls(op, e);
        addAll(update, t, c.update);
        addAll(trustRatio ? apply : update, t, c.apply);
        if (trustRatio) {
            addAll(norms, t, c.norms);
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

} // namespace ipusim

namespace ipusim {

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

namespace ipusim {

void GraphLowering::lowerOutputSum(const std::vector<int>& outputs)
{
    OpPlan plan;
    ComputePlan sum{"output sum", TileCalls(m_hw.tiles)};
    std::vector<PlanTensor> sums;
    for (int t : outputs) {
        sums.push_back(plan.buffer(m_graph.tensor(t).name + " (sum)", "output sum", m_b.bytes(handleOf(t))));
        const TileVector elems = elementsOn(t);
        for (uint32_t tile = 0; tile < m_hw.tiles; ++tile)
            if (elems[tile])
                sum.calls.add(tile, calls::binary(costs::BinaryOpKind::Add, Precision::FP32, elems[tile]));
    }
    PlanStep& add = plan.compute(std::move(sum)).read(outputs);
    for (PlanTensor s : sums)
        add.write(s);
    emit(plan);
}

} // namespace ipusim

namespace ipusim {

void GraphLowering::streamIn(const std::string& name, const std::vector<int>& tensors)
{
    OpPlan plan;
    PlanStep& load = plan.streamingMemory({name, Direction::ToIpu, 0});
    for (int t : tensors) {
        const TensorDesc& d = m_graph.tensor(t);
        std::get<StreamingMemoryPlan>(load.work).bytes += d.bytes();
        load.write(plan.streamed(t, linearMappingRuns(m_hw.tiles, d.bytes(), kGrainBytes), d.name + " (streamed)", kindOf(d.role)));
    }
    emit(plan);
}

void GraphLowering::streamOut(const std::string& name, const std::vector<int>& tensors)
{
    OpPlan plan;
    PlanStep& store = plan.streamingMemory({name, Direction::FromIpu, 0}).read(tensors);
    for (int t : tensors)
        std::get<StreamingMemoryPlan>(store.work).bytes += m_graph.tensor(t).bytes();
    emit(plan);
}

} // namespace ipusim

namespace ipusim {

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
    // PopTorch's gelu (exact or tanh) is popnn's GELU, the tanh approximation, in place; each
    // gradient is one popnn NonLinearityGrad1D vertex (poplibs-costs §2, §3.5).
    case OpKind::Gelu: return {gelu(type, e)};
    case OpKind::GeluGrad: return {nonLinearityGrad(costs::NonLinearity::Gelu, type, e)};
    case OpKind::Tanh: return {un(UnaryOpKind::Tanh)};
    case OpKind::TanhGrad: return {nonLinearityGrad(costs::NonLinearity::Tanh, type, e)};
    case OpKind::LogSoftmax: // x - max - log(sum(exp(x - max))): the row max, exponentiate, sum, one log per row
        return {rowReduce(type, rows, piece, ReduceOp::Max), bin(BinaryOpKind::Sub), un(UnaryOpKind::Exp), rowReduce(f32, rows, piece),
                unary(UnaryOpKind::Log, f32, rows), bin(BinaryOpKind::Sub)};
    case OpKind::LogSoftmaxGrad: // dx = dy - exp(y) sum(dy)
        return {un(UnaryOpKind::Exp), rowReduce(f32, rows, piece), bin(BinaryOpKind::Mul), bin(BinaryOpKind::Sub)};
    case OpKind::Sub: return {bin(BinaryOpKind::Sub)};
    case OpKind::Mul: return {bin(BinaryOpKind::Mul)};
    case OpKind::Div: return {bin(BinaryOpKind::Div)};
    case OpKind::DivGradRhs: return {bin(BinaryOpKind::Mul), bin(BinaryOpKind::Mul), bin(BinaryOpKind::Div)}; // -dy a / b / b
    // A constant factor: popops' scalar broadcast, in place (poplibs-costs §3.9).
    case OpKind::Scale: return {byScalar(BinaryOpKind::Mul, type, e)};
    case OpKind::Sigmoid: return {unaryInPlace(UnaryOpKind::Sigmoid, type, e)}; // SigmoidInplace
    case OpKind::SigmoidGrad: return {nonLinearityGrad(costs::NonLinearity::Sigmoid, type, e)};
    case OpKind::Exp: return {un(UnaryOpKind::Exp)};
    case OpKind::ExpGrad: return {bin(BinaryOpKind::Mul)};
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
    default: throw std::logic_error("not a row-wise op: " + op.name);
    }
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
            combine.calls.add(t, calls::partialsReduce(Precision::FP32, rows, ceilDiv(C, piece), maxima ? ReduceOp::Max : ReduceOp::Add));
            combine.calls.add(t, calls::partialsReduce(Precision::FP32, rows, ceilDiv(C, piece)));
        }
        for (const VertexCall& call : rowwiseCalls(op, {type, e, rows, piece, affine}))
            compute.calls.add(t, call);
        if (affine)
            params[t].recvShared += (op.kind == OpKind::LayerNorm ? 2 : 1) * paramsOnTile(piece) * bytesOf(type);
    }
    if (op.broadcast >= 0) {
        // A tile's elements read ceil(elements / run) elements of the repeated operand, at most
        // all of it.
        const int repeated = op.inputs.at(std::size_t(op.broadcast));
        const uint64_t whole = m_graph.tensor(repeated).elements();
        for (uint32_t t = 0; t < m_hw.tiles; ++t)
            if (elems[t])
                params[t].recvShared += std::min(ceilDiv(elems[t], op.broadcastRun), whole) * bytesOf(m_graph.tensor(repeated).type);
        addSends(params, repeated);
    }
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
    for (int in : op.inputs) {
        const TileVector bytes = m_b.denseBytes(handleOf(in));
        const double share = op.kind == OpKind::Slice ? double(od.bytes()) / double(std::max<uint64_t>(m_graph.tensor(in).bytes(), 1)) : 1.0;
        for (uint32_t t = 0; t < T; ++t)
            x[t].send += uint64_t(double(bytes[t]) * share);
        moved += op.kind == OpKind::Slice ? od.bytes() : m_graph.tensor(in).bytes();
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
