// SPDX-License-Identifier: MIT
// GraphLowering's one emitter: an op's plan becomes its syncs, exchanges and compute sets, and
// its tensors' lifetimes follow from what each step reads and writes.
#include "workloads/lowering/GraphLowering.hpp"

#include <stdexcept>
#include <type_traits>

namespace ipusim {

void GraphLowering::emit(const OpPlan& plan)
{
    std::vector<int> temporaries(plan.temporaries.size(), -1);
    std::vector<bool> produced(plan.outputs.size(), false);
    auto handle = [&](PlanTensor t) {
        const int h = t.graphTensor >= 0 ? handleOf(t.graphTensor) : temporaries.at(std::size_t(t.temporaryIndex));
        if (h < 0)
            throw std::logic_error("a plan reads a temporary before a step writes it");
        return h;
    };
    // A tensor comes into being at its first write; later writes find it there.
    auto bringIntoBeing = [&](PlanTensor t) {
        if (t.temporaryIndex >= 0) {
            const auto& temp = plan.temporaries.at(std::size_t(t.temporaryIndex));
            if (int& h = temporaries[std::size_t(t.temporaryIndex)]; h < 0)
                h = m_b.allocate(temp.name, temp.kind, temp.bytes, temp.alwaysLive);
            return;
        }
        for (std::size_t i = 0; i < plan.outputs.size(); ++i)
            if (plan.outputs[i].tensor == t.graphTensor && plan.outputs[i].source < 0) {
                if (!produced[i])
                    produceOutput(plan.outputs[i]);
                produced[i] = true;
                return;
            }
        throw std::logic_error("a plan's step writes a tensor the plan does not produce");
    };
    for (const PlanStep& step : plan.steps) {
        if (step.sync)
            m_b.sync();
        for (PlanTensor t : step.writes)
            bringIntoBeing(t);
        emitStep(step);
        for (PlanTensor t : step.reads)
            m_b.touch(handle(t));
    }
    // Results no step writes begin as the op ends; in-place results take their source's place.
    for (std::size_t i = 0; i < plan.outputs.size(); ++i) {
        const OpPlan::Output& out = plan.outputs[i];
        if (out.source >= 0)
            alias(out.tensor, out.source);
        else if (!produced[i])
            produceOutput(out);
    }
}

void GraphLowering::produceOutput(const OpPlan::Output& out)
{
    if (!out.streamed)
        produce(out.tensor, out.bytes);
    else
        m_handle[std::size_t(out.tensor)] = m_b.allocate(out.streamed->first, out.streamed->second, out.bytes);
}

void GraphLowering::emitStep(const PlanStep& step)
{
    std::visit(
        [&](const auto& s) {
            using T = std::decay_t<decltype(s)>;
            if constexpr (std::is_same_v<T, ExchangePlan>)
                m_b.exchange(s.name, s.bytes);
            else if constexpr (std::is_same_v<T, ComputePlan>) {
                std::vector<Codelet> codelets;
                const TileVector cycles = pricedCycles(m_hw, s.calls, codelets);
                m_b.compute(s.name, cycles, codelets, s.verticesPerActiveTile, s.flops);
            } else if constexpr (std::is_same_v<T, HostPlan>)
                m_b.host(s.name, s.direction, s.bytes, s.prefetch, s.prefetchDepth);
            else if constexpr (std::is_same_v<T, StreamingMemoryPlan>)
                m_b.streamingMemory(s.name, s.direction, s.bytes);
            else if constexpr (std::is_same_v<T, RepeatPlan>)
                m_b.beginRepeat(s.name, s.count);
            else if constexpr (std::is_same_v<T, EndRepeatPlan>)
                m_b.endRepeat();
            else {
                static_assert(std::is_same_v<T, CollectivePlan>, "a plan step the emitter does not emit");
                m_b.collective(s.name, s.kind, s.bytes, s.ring);
            }
        },
        step.work);
}

} // namespace ipusim
