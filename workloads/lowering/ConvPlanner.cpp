// SPDX-License-Identifier: MIT
#include "workloads/lowering/ConvPlanner.hpp"

#include "models/common/CeilDiv.hpp"
#include "models/timing/ExchangeTiming.hpp"
#include "models/timing/VertexCosts.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace ipusim {

std::string ConvPlan::describe() const
{
    static const char* expands[] = {"none", "width", "width+height"};
    const std::string serial = serialSplits > 1 ? fmt::format(", {} serial steps over the {}", serialSplits,
                                                              serialOverReduction ? "reduction" : "output channels")
                                                : "";
    return fmt::format("tiles {}x{}x{} (positions x out groups x in groups), {} positions/tile, kernel {}x{}, expand {}{}",
                       tilesPerPositions, tilesPerOutGroups, tilesPerInGroups, positionsPerTile, kernelHeight, kernelWidth,
                       expands[int(expand)], serial);
}

ConvPlan evaluatePlan(const IpuParams& hw, const ConvProblem& pr, ConvPlan::Expand expand, uint64_t tO, uint64_t tI)
{
    const AmpParams& amp = hw.amp(pr.input, pr.partials);
    ConvPlan p;
    p.expand = expand;
    uint64_t chans = pr.reduction;
    p.kernelHeight = pr.kernelHeight;
    p.kernelWidth = pr.kernelWidth;
    if (expand != ConvPlan::Expand::None) {
        chans *= p.kernelWidth;
        p.kernelWidth = 1;
    }
    if (expand == ConvPlan::Expand::WidthAndHeight) {
        chans *= p.kernelHeight;
        p.kernelHeight = 1;
    }
    p.inChansPerGroup = amp.inChansPerGroup;
    p.outChansPerGroup = amp.units;
    const uint64_t inGroups = ceilDiv(chans, amp.inChansPerGroup);
    const uint64_t outGroups = ceilDiv(pr.outChans, amp.units);
    p.tilesPerOutGroups = std::min(tO, outGroups);
    p.tilesPerInGroups = std::min(tI, inGroups);
    p.tilesPerPositions = std::max<uint64_t>(1, std::min<uint64_t>(pr.positions, hw.tiles / (p.tilesPerOutGroups * p.tilesPerInGroups)));
    p.positionsPerTile = ceilDiv(pr.positions, p.tilesPerPositions);
    p.tilesPerPositions = ceilDiv(pr.positions, p.positionsPerTile); // no idle position slices
    p.inGroupsPerTile = uint32_t(ceilDiv(inGroups, p.tilesPerInGroups));
    p.outGroupsPerTile = uint32_t(ceilDiv(outGroups, p.tilesPerOutGroups));

    const unsigned inBytes = bytesOf(pr.input);
    const uint64_t chansPerTile = uint64_t(p.inGroupsPerTile) * amp.inChansPerGroup;
    if (p.kernelHeight * p.kernelWidth == 1 && expand == ConvPlan::Expand::None && pr.kernelHeight * pr.kernelWidth == 1) {
        p.inputBytesPerTile = p.positionsPerTile * chansPerTile * inBytes;
    } else if (expand == ConvPlan::Expand::WidthAndHeight) {
        p.inputBytesPerTile = p.positionsPerTile * chansPerTile * inBytes; // im2col patches
    } else {
        // Rows of the input window a run of output positions needs (row-major positions): each
        // output row steps the stride down the input, and the (dilated) kernel spans more.
        const bool widthExpanded = expand == ConvPlan::Expand::Width;
        const uint64_t width = widthExpanded ? pr.outWidth : pr.inWidth;
        const uint64_t rows = ceilDiv(p.positionsPerTile, pr.outWidth);
        const uint64_t inRows = (rows - 1) * pr.strideHeight + uint64_t(p.kernelHeight - 1) * pr.dilationHeight + 1;
        const uint64_t cols = p.positionsPerTile >= pr.outWidth
                                  ? width
                                  : (p.positionsPerTile - 1) * (widthExpanded ? 1 : pr.strideWidth) +
                                        uint64_t(p.kernelWidth - 1) * pr.dilationWidth + 1;
        p.inputBytesPerTile = inRows * cols * chansPerTile * inBytes;
    }
    p.weightBytesPerTile =
        uint64_t(p.outGroupsPerTile) * amp.units * chansPerTile * p.kernelHeight * p.kernelWidth * inBytes;
    p.partialBytesPerTile = p.positionsPerTile * p.outGroupsPerTile * amp.units * bytesOf(pr.partials);

    p.computeCycles = cyclesOf(hw, calls::conv(tileShape(pr, p, p.positionsPerTile, p.outGroupsPerTile)));

    const uint64_t outputsPerTile = p.positionsPerTile * p.outGroupsPerTile * amp.units;
    uint64_t reduceExchange = 0;
    if (p.tilesPerInGroups > 1) {
        const uint64_t moved = p.partialBytesPerTile * (p.tilesPerInGroups - 1) / p.tilesPerInGroups;
        reduceExchange = exchangeTileCycles(hw, {moved, moved, 0}) + exchangeLatencyCycles(hw);
        const uint64_t reduced = ceilDiv(outputsPerTile, p.tilesPerInGroups);
        p.reduceCycles = cyclesOf(hw, calls::partialsReduce(pr.partials, reduced, p.tilesPerInGroups));
        if (pr.partials != pr.output)
            p.reduceCycles += cyclesOf(hw, calls::cast(pr.partials, pr.output, reduced));
    } else if (pr.partials != pr.output) {
        p.computeCycles += cyclesOf(hw, calls::cast(pr.partials, pr.output, outputsPerTile));
    }
    const bool shared = p.tilesPerPositions >= hw.tilesPerReceiveBus;
    const ExchangeBytes in{0, p.inputBytesPerTile + (shared ? 0 : p.weightBytesPerTile), shared ? p.weightBytesPerTile : 0};
    p.estimateCycles = exchangeTileCycles(hw, in) + exchangeLatencyCycles(hw) + p.computeCycles + reduceExchange + p.reduceCycles;
    p.withinBudget = double(p.tempBytesPerTile()) <= hw.availableMemoryProportion * double(hw.tileMemoryBytes);
    return p;
}

const ConvPlan& ConvPlanCache::plan(const IpuParams& hw, const ConvProblem& p)
{
    const Key key{p.groups, p.positions, p.reduction, p.kernelHeight, p.kernelWidth, p.outChans, p.outWidth, p.inWidth,
                  p.strideHeight, p.strideWidth, p.dilationHeight, p.dilationWidth, p.outputPositions, p.input, p.partials,
                  p.output, hw.tiles, hw.availableMemoryProportion};
    auto it = m_plans.find(key);
    if (it == m_plans.end())
        it = m_plans.emplace(key, planConv(hw, p)).first;
    return it->second;
}

costs::ConvShape tileShape(const ConvProblem& problem, const ConvPlan& plan, uint64_t positions, uint32_t outGroups, uint32_t convGroups)
{
    costs::ConvShape s;
    s.positions = positions;
    s.inGroups = plan.inGroupsPerTile;
    s.outGroups = outGroups;
    s.convGroups = convGroups;
    s.kernelHeight = plan.kernelHeight;
    s.kernelWidth = plan.kernelWidth;
    s.input = problem.input;
    s.partials = problem.partials;
    return s;
}

namespace {

struct Search
{
    ConvPlan best, smallest;
    bool haveBest = false;
};

/** Every split of the problem over tiles: the fastest within the budget, and the smallest. */
Search searchPlans(const IpuParams& hw, const ConvProblem& pr)
{
    const AmpParams& amp = hw.amp(pr.input, pr.partials);
    std::vector<ConvPlan::Expand> expands{ConvPlan::Expand::None};
    if (pr.kernelWidth > 1) {
        expands.push_back(ConvPlan::Expand::Width);
        if (pr.kernelHeight > 1)
            expands.push_back(ConvPlan::Expand::WidthAndHeight);
    }
    Search s;
    ConvPlan& best = s.best;
    ConvPlan& smallest = s.smallest;
    bool& haveBest = s.haveBest;
    bool haveSmallest = false;
    for (auto expand : expands) {
        uint64_t chans = pr.reduction * (expand == ConvPlan::Expand::None ? 1 : pr.kernelWidth) *
                         (expand == ConvPlan::Expand::WidthAndHeight ? pr.kernelHeight : 1);
        const uint64_t inGroups = ceilDiv(chans, amp.inChansPerGroup);
        const uint64_t outGroups = ceilDiv(pr.outChans, amp.units);
        std::vector<uint64_t> inSplits;
        for (uint64_t t = 1; t < inGroups && t <= hw.tiles; t *= 2)
            inSplits.push_back(t);
        if (inGroups <= hw.tiles)
            inSplits.push_back(inGroups);
        for (uint64_t tO = 1; tO <= outGroups && tO <= hw.tiles; ++tO)
            for (uint64_t tI : inSplits) {
                if (tO * tI > hw.tiles)
                    continue;
                ConvPlan p = evaluatePlan(hw, pr, expand, tO, tI);
                if (p.withinBudget && (!haveBest || p.estimateCycles < best.estimateCycles)) {
                    best = p;
                    haveBest = true;
                }
                if (!haveSmallest || p.tempBytesPerTile() < smallest.tempBytesPerTile()) {
                    smallest = p;
                    haveSmallest = true;
                }
            }
    }
    return s;
}

/** A serial step's plan: `steps` of them in turn, each also adding its partials into the running
 *  sum when the reduction is split (a BinaryOp1D ADD of the step's outputs a tile). */
ConvPlan serialPlan(const IpuParams& hw, ConvPlan step, uint32_t steps, bool overReduction, Precision partials)
{
    step.serialSplits = steps;
    step.serialOverReduction = overReduction;
    uint64_t perStep = step.estimateCycles;
    if (overReduction)
        perStep += cyclesOf(hw, calls::binary(costs::BinaryOpKind::Add, partials, step.partialBytesPerTile / bytesOf(partials)));
    step.estimateCycles = perStep * steps;
    step.withinBudget = double(step.tempBytesPerTile()) <= hw.availableMemoryProportion * double(hw.tileMemoryBytes);
    return step;
}

} // namespace

ConvProblem serialStep(const ConvProblem& pr, const ConvPlan& plan)
{
    ConvProblem step = pr;
    if (plan.serialSplits > 1)
        (plan.serialOverReduction ? step.reduction : step.outChans) = ceilDiv(plan.serialOverReduction ? pr.reduction : pr.outChans,
                                                                              plan.serialSplits);
    return step;
}

ConvPlan planConv(const IpuParams& hw, const ConvProblem& pr)
{
    const Search whole = searchPlans(hw, pr);
    if (whole.haveBest)
        return whole.best;
    // Serial steps only where even the smallest plan's temporaries exceed a tile (estimate:
    // PopLibs' planner weighs serial splits against available_memory_proportion itself, so it
    // may split serially sooner; over the budget but within a tile, the smallest plan stands, as
    // before serial splits were modelled). The fewest steps that fit the budget, the faster of
    // splitting the output channels or the reduction.
    if (whole.smallest.tempBytesPerTile() <= hw.tileMemoryBytes)
        return whole.smallest;
    const AmpParams& amp = hw.amp(pr.input, pr.partials);
    for (uint32_t steps = 2; steps <= 64; steps *= 2) {
        std::optional<ConvPlan> chosen;
        for (bool overReduction : {false, true}) {
            const uint64_t dim = overReduction ? pr.reduction : pr.outChans;
            const uint64_t grain = overReduction ? amp.inChansPerGroup : amp.units;
            if (dim < uint64_t(steps) * grain)
                continue; // each step keeps at least one group
            ConvPlan probe;
            probe.serialSplits = steps;
            probe.serialOverReduction = overReduction;
            const Search part = searchPlans(hw, serialStep(pr, probe));
            if (!part.haveBest)
                continue;
            const ConvPlan p = serialPlan(hw, part.best, steps, overReduction, pr.partials);
            if (p.withinBudget && (!chosen || p.estimateCycles < chosen->estimateCycles))
                chosen = p;
        }
        if (chosen)
            return *chosen;
    }
    return whole.smallest;
}

} // namespace ipusim
