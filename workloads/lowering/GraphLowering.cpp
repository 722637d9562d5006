// SPDX-License-Identifier: MIT
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "models/timing/VertexCosts.hpp"
#include "workloads/graph/Activation.hpp"
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
    case OpKind::Cast: lowerElementwise(op); break;
#define IPUSIM_ACTIVATION_CASE(kind, ...) case OpKind::kind: case OpKind::kind##Grad:
    IPUSIM_ACTIVATIONS(IPUSIM_ACTIVATION_CASE) activationOf(op.kind)->inPlace ? lowerElementwise(op) : lowerRowwise(op); break;
#undef IPUSIM_ACTIVATION_CASE
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
    case OpKind::Reduce:
    case OpKind::ReduceGrad:
    case OpKind::Expand: lowerReduce(op); break;
    case OpKind::Pad:
    case OpKind::PadGrad: lowerPad(op); break;
    case OpKind::Concat:
    case OpKind::Slice:
    case OpKind::SliceGrad: lowerCopy(op); break;
    case OpKind::ReduceRepeats: lowerReduceRepeats(op); break;
    case OpKind::BatchMatMul: lowerConv(op); break;
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::MaskedFill:
    case OpKind::Compare:
    case OpKind::LogicalNot:
    case OpKind::Select:
    case OpKind::DivGradRhs:
    case OpKind::Scale:
    case OpKind::Softmax:
    case OpKind::SoftmaxGrad:
    case OpKind::LayerNorm:
    case OpKind::LayerNormGrad:
    case OpKind::Dropout:
    case OpKind::DropoutGrad:
    case OpKind::LogSoftmax:
    case OpKind::LogSoftmaxGrad: lowerRowwise(op); break;
    case OpKind::Gather: lowerGather(op); break;
    case OpKind::AttentionMask: lowerAttentionMask(op); break;
    case OpKind::GatherGrad: lowerGatherGrad(op); break;
    case OpKind::Recurrent: lowerRecurrent(op); break;
    case OpKind::RecurrentGrad: lowerRecurrentGrad(op); break;
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
