// SPDX-License-Identifier: MIT
// GraphLowering's one emitter: an op's plan becomes its syncs, exchanges and compute sets, and
// its tensors' lifetimes follow from what each step reads and writes.
#include "workloads/lowering/GraphLowering.hpp"

#include <stdexcept>

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
    auto bringIntoBeing = [&](PlanTensor t) {
        if (t.temporaryIndex >= 0) {
            const auto& temp = plan.temporaries.at(std::size_t(t.temporaryIndex));
            temporaries[std::size_t(t.temporaryIndex)] = m_b.allocate(temp.name, "temporary", temp.bytes);
            return;
        }
        for (std::size_t i = 0; i < plan.outputs.size(); ++i)
            if (plan.outputs[i].tensor == t.graphTensor && plan.outputs[i].source < 0 && !produced[i]) {
                produce(t.graphTensor, plan.outputs[i].bytes);
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
        if (const auto* x = std::get_if<ExchangePlan>(&step.work))
            m_b.exchange(x->name, x->bytes);
        else
            emitCompute(std::get<ComputePlan>(step.work));
        for (PlanTensor t : step.reads)
            m_b.touch(handle(t));
    }
    for (std::size_t i = 0; i < plan.outputs.size(); ++i) {
        const OpPlan::Output& out = plan.outputs[i];
        if (out.source >= 0)
            alias(out.tensor, out.source);
        else if (!produced[i])
            produce(out.tensor, out.bytes);
    }
    for (const OpPlan::Output& out : plan.outputs)
        m_b.touch(handleOf(out.tensor));
}

void GraphLowering::emitCompute(const ComputePlan& c)
{
    std::vector<Codelet> codelets;
    const TileVector cycles = pricedCycles(m_hw, c.calls, codelets);
    m_b.compute(c.name, cycles, codelets, c.verticesPerActiveTile, c.flops);
}

} // namespace ipusim
