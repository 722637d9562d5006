// SPDX-License-Identifier: MIT
// Identical ops lowered once: a BERT-Large pipeline stage holds seven identical encoder layers,
// whose hundreds of ops differ only in their names. Lowering one costs its vertices tile by tile
// and builds its exchanges; the others emit the same steps and tensors again under their names.
#include "workloads/lowering/GraphLowering.hpp"

#include <boost/container_hash/hash.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace ipusim {
namespace {

void addConv(std::vector<uint64_t>& k, const ConvProblem& c)
{
    k.insert(k.end(), {c.groups, c.positions, c.reduction, c.kernelHeight, c.kernelWidth, c.outChans, c.outWidth, c.inWidth,
                       c.strideHeight, c.strideWidth, c.dilationHeight, c.dilationWidth, c.outputPositions, uint64_t(c.input),
                       uint64_t(c.partials), uint64_t(c.output)});
}

void addGeometry(std::vector<uint64_t>& k, const ConvGeometry& g)
{
    k.insert(k.end(), {g.batch, g.inChans, g.inHeight, g.inWidth, g.outChans, g.kernelHeight, g.kernelWidth, g.padHeight,
                       g.padWidth, g.strideHeight, g.strideWidth, g.dilationHeight, g.dilationWidth, g.groups});
}

std::vector<int> slotsOf(const Op& op)
{
    std::vector<int> slots(op.inputs);
    slots.insert(slots.end(), op.outputs.begin(), op.outputs.end());
    return slots;
}

/** Every reading of `name` as the op's name or a slot tensor's name plus a suffix; the name
 *  itself when it starts with neither. */
NameReadings readingsOf(const std::string& name, const Op& op, const Graph& g, const std::vector<int>& slots)
{
    NameReadings readings;
    auto consider = [&](int source, const std::string& prefix) {
        if (name.compare(0, prefix.size(), prefix) == 0)
            readings.push_back({source, name.substr(prefix.size())});
    };
    consider(NameTemplate::kOpName, op.name);
    for (std::size_t s = 0; s < slots.size(); ++s)
        consider(int(s), g.tensor(slots[s]).name);
    if (readings.empty())
        readings.push_back({NameTemplate::kLiteral, name});
    return readings;
}

std::string nameOf(const NameTemplate& t, const Op& op, const Graph& g, const std::vector<int>& slots)
{
    if (t.source == NameTemplate::kLiteral)
        return t.suffix;
    return (t.source == NameTemplate::kOpName ? op.name : g.tensor(slots.at(std::size_t(t.source))).name) + t.suffix;
}

/** The name for `op` when every reading gives the same one. */
std::optional<std::string> nameOf(const NameReadings& readings, const Op& op, const Graph& g, const std::vector<int>& slots)
{
    std::string name = nameOf(readings.front(), op, g, slots);
    for (std::size_t i = 1; i < readings.size(); ++i)
        if (nameOf(readings[i], op, g, slots) != name)
            return std::nullopt;
    return name;
}

template <class F>
void forEachStepName(std::vector<Step>& steps, F&& f)
{
    for (auto& s : steps)
        std::visit([&](auto& op) {
            if constexpr (kIsPointStep<std::decay_t<decltype(op)>>)
                f(op.name);
        }, s.op);
}

} // namespace

std::size_t LoweredOps::KeyHash::operator()(const std::vector<uint64_t>& key) const
{
    return boost::hash_range(key.begin(), key.end());
}

void GraphLowering::shareLoweredOps(const GraphLowering& other)
{
    if (other.m_hw != m_hw || other.m_b.pools() != m_b.pools())
        throw std::logic_error("lowered ops are shared only between equivalent IPUs whose builders share their pools");
    m_lowered = other.m_lowered;
}

void GraphLowering::lower(const Op& op)
{
    // A recurrent layer's loop is a Repeat, which a recording of flat steps cannot hold; so is
    // a convolution's or matmul's serial split.
    ConvSlots slots;
    const bool serial = (op.kind == OpKind::Conv || op.kind == OpKind::BatchMatMul) && slotPlan(op.conv, slots).serialSplits > 1;
    if (!m_reuse || op.kind == OpKind::Recurrent || op.kind == OpKind::RecurrentGrad || serial) {
        lowerAfresh(op);
        return;
    }
    std::vector<uint64_t> key = reuseKey(op);
    if (const LoweredOp* kept = m_lowered->find(key); !kept)
        lowerAndKeep(op, std::move(key));
    else if (!replay(op, *kept))
        lowerAfresh(op); // its names do not follow from the op's as the kept one's did
}

std::vector<int> GraphLowering::slotHandles(const Op& op) const
{
    std::vector<int> handles;
    for (int t : slotsOf(op))
        handles.push_back(m_handle.at(std::size_t(t)));
    return handles;
}

std::vector<uint64_t> GraphLowering::reuseKey(const Op& op) const
{
    std::vector<uint64_t> k{uint64_t(op.kind), op.inputs.size(), op.outputs.size(), op.window, op.channels, op.forward, op.rows,
                            op.unscale, op.masterWeights, op.attentionScaleMask, op.training, uint64_t(int64_t(op.broadcast)),
                            op.broadcastRun, op.paramChannels, uint64_t(op.cell), op.inner, op.mean, uint64_t(op.padMode),
                            // This lowering's settings: a store may serve several lowerings.
                            m_replicas, m_sharded, m_offload, m_ioFirst, m_ioCount};
    addConv(k, op.conv);
    addGeometry(k, op.geometry);
    const std::vector<int> slots = slotsOf(op);
    const std::vector<int> handles = slotHandles(op);
    for (std::size_t s = 0; s < slots.size(); ++s) {
        const TensorDesc& d = m_graph.tensor(slots[s]);
        k.insert(k.end(), {uint64_t(d.type), uint64_t(d.role), d.shape.size()});
        k.insert(k.end(), d.shape.begin(), d.shape.end());
        // The same tensor, or the same placement, as an earlier slot: the lowering sees that.
        const auto sameTensor = std::find(slots.begin(), slots.end(), slots[s]) - slots.begin();
        const auto sameHandle = std::find(handles.begin(), handles.end(), handles[s]) - handles.begin();
        k.insert(k.end(), {uint64_t(sameTensor), uint64_t(sameHandle), m_width.at(std::size_t(slots[s]))});
        // The placement by the address of its runs: the pools keep equal runs once and keep
        // every set alive while their builders build, and every lowering this store serves
        // builds with the same pools, so one address is one placement, never reused (equal
        // runs at two addresses would only cost a lowering).
        if (handles[s] >= 0 && std::size_t(sameHandle) == s)
            k.push_back(uint64_t(reinterpret_cast<std::uintptr_t>(&m_b.bytes(handles[s]).runs())));
    }
    return k;
}

void GraphLowering::lowerAndKeep(const Op& op, std::vector<uint64_t> key)
{
    const std::vector<int> slots = slotsOf(op);
    const std::vector<int> before = slotHandles(op);
    const ProgramBuilder::Mark mark = m_b.startRecording();
    EmittedSteps emitted;
    try {
        lowerAfresh(op);
    } catch (...) {
        m_b.cancelRecording();
        throw;
    }
    emitted = m_b.stopRecording();

    LoweredOp lowered;
    for (const auto& touch : emitted.touches) {
        const auto slot = std::find(before.begin(), before.end(), touch.handle) - before.begin();
        if (std::size_t(slot) == before.size())
            return; // a tensor outside the op: not the op's alone to emit again
        lowered.touchSlots.push_back(int(slot));
    }
    for (std::size_t s = 0; s < slots.size(); ++s) {
        const int after = m_handle.at(std::size_t(slots[s]));
        LoweredOp::SlotAfter a;
        a.width = m_width.at(std::size_t(slots[s]));
        if (after == before[s]) {
            a.kind = LoweredOp::SlotAfter::Kind::Unchanged;
        } else if (after >= 0 && std::size_t(after) >= mark.tensors) {
            a.kind = LoweredOp::SlotAfter::Kind::Allocated;
            a.index = int(std::size_t(after) - mark.tensors);
        } else if (const auto j = std::find(before.begin(), before.end(), after) - before.begin(); std::size_t(j) < before.size()) {
            a.kind = LoweredOp::SlotAfter::Kind::SlotBefore;
            a.index = int(j);
        } else {
            return;
        }
        lowered.slots.push_back(a);
    }
    forEachStepName(emitted.steps, [&](const std::string& name) { lowered.stepNames.push_back(readingsOf(name, op, m_graph, slots)); });
    for (const auto& t : emitted.tensors)
        lowered.tensorNames.push_back(readingsOf(t.name, op, m_graph, slots));
    if (auto p = m_plans.find(op.name); p != m_plans.end())
        lowered.plan = p->second;
    // A replay names its steps and tensors afresh (and the builder outlines them): the kept
    // copy holds none, so that copying it for each replay copies no strings.
    forEachStepName(emitted.steps, [](std::string& name) { std::string().swap(name); });
    for (auto& step : emitted.steps)
        std::visit([](auto& op) {
            if constexpr (kHasOutline<std::decay_t<decltype(op)>>)
                std::string().swap(op.outline);
        }, step.op);
    for (auto& t : emitted.tensors)
        std::string().swap(t.name);
    lowered.emitted = std::move(emitted);
    m_lowered->keep(std::move(key), std::move(lowered));
}

bool GraphLowering::replay(const Op& op, const LoweredOp& lowered)
{
    const std::vector<int> slots = slotsOf(op);
    // Names first: an op whose names do not follow from it as the kept one's did emits nothing.
    auto namesOf = [&](const std::vector<NameReadings>& kept, std::vector<std::string>& names) {
        for (const NameReadings& r : kept) {
            auto name = nameOf(r, op, m_graph, slots);
            if (!name)
                return false;
            names.push_back(std::move(*name));
        }
        return true;
    };
    std::vector<std::string> stepNames, tensorNames;
    if (!namesOf(lowered.stepNames, stepNames) || !namesOf(lowered.tensorNames, tensorNames))
        return false;
    EmittedSteps e = lowered.emitted;
    std::size_t n = 0;
    forEachStepName(e.steps, [&](std::string& name) { name = std::move(stepNames[n++]); });
    for (std::size_t i = 0; i < e.tensors.size(); ++i)
        e.tensors[i].name = std::move(tensorNames[i]);
    const std::vector<int> before = slotHandles(op);
    std::vector<int> touched;
    for (int slot : lowered.touchSlots)
        touched.push_back(before.at(std::size_t(slot)));
    const int first = m_b.replay(std::move(e), touched);
    for (std::size_t s = 0; s < slots.size(); ++s) {
        const LoweredOp::SlotAfter& a = lowered.slots[s];
        int& handle = m_handle.at(std::size_t(slots[s]));
        if (a.kind == LoweredOp::SlotAfter::Kind::Allocated)
            handle = first + a.index;
        else if (a.kind == LoweredOp::SlotAfter::Kind::SlotBefore)
            handle = before.at(std::size_t(a.index));
        m_width.at(std::size_t(slots[s])) = a.width;
    }
    if (lowered.plan)
        m_plans[op.name] = *lowered.plan;
    return true;
}

} // namespace ipusim
