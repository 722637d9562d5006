// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/lowering/ConvPlanner.hpp"
#include "workloads/lowering/ProgramBuilder.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ipusim {

/** A name an op's lowering gave, in terms of the op: the op's name or one of its tensors'
 *  names followed by `suffix`, or `suffix` alone. */
struct NameTemplate
{
    static constexpr int kLiteral = -2, kOpName = -1;
    int source = kLiteral; // kLiteral, kOpName, or a slot: inputs, then outputs
    std::string suffix;
};
/** Every way a name reads in terms of its op ("fc.in" of op "fc" reading input "fc.in": the
 *  op's name plus ".in", or the input's name); an identical op is renamed only when all of
 *  them agree for it, else it is lowered afresh. */
using NameReadings = std::vector<NameTemplate>;

/** One op's lowering, kept to be emitted again for an identical op (same kind, attributes,
 *  tensor shapes and types, and tensors placed alike), as Poplar outlines identical
 *  subgraphs: the model's identical layers are lowered once. */
struct LoweredOp
{
    EmittedSteps emitted;
    std::vector<NameReadings> stepNames;   // one per step of `emitted`
    std::vector<NameReadings> tensorNames; // one per tensor of `emitted`
    std::vector<int> touchSlots;           // per touch of `emitted`: the slot whose tensor it was
    /** Each slot's handle after the op: its own from before, a tensor the op allocated, or
     *  the tensor another slot had before (an alias). */
    struct SlotAfter
    {
        enum class Kind { Unchanged, Allocated, SlotBefore } kind = Kind::Unchanged;
        int index = 0; // Allocated: among the op's tensors; SlotBefore: the slot
        uint64_t width = 0;
    };
    std::vector<SlotAfter> slots;
    std::optional<ConvPlan> plan;
};

/** Lowered ops by the key of what their lowering reads (GraphLowering::reuseKey). One store
 *  serves the lowerings of equivalent IPUs, whose builders share their pools of runs. */
class LoweredOps
{
public:
    [[nodiscard]] const LoweredOp* find(const std::vector<uint64_t>& key) const
    {
        const auto it = m_ops.find(key);
        return it == m_ops.end() ? nullptr : &it->second;
    }
    void keep(std::vector<uint64_t> key, LoweredOp op) { m_ops.emplace(std::move(key), std::move(op)); }
    /** Ops lowered (not replayed) so far. */
    [[nodiscard]] std::size_t size() const { return m_ops.size(); }

private:
    struct KeyHash
    {
        std::size_t operator()(const std::vector<uint64_t>& key) const;
    };
    std::unordered_map<std::vector<uint64_t>, LoweredOp, KeyHash> m_ops;
};

} // namespace ipusim
