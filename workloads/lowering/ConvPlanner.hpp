// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/IpuParams.hpp"
#include "models/timing/VertexCosts.hpp"
#include "workloads/graph/Graph.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace ipusim {

/** How a ConvProblem is spread over tiles, in the spirit of PopLibs' ConvPlan: the positions
 *  split `tilesPerPositions` ways, output-channel groups `tilesPerOutGroups` ways and the
 *  reduction `tilesPerInGroups` ways (partials then reduced across those tiles). */
struct ConvPlan
{
    // Kernel dimensions folded into the input channels for small channel counts (expandDims).
    enum class Expand { None, Width, WidthAndHeight } expand = Expand::None;
    uint64_t tilesPerPositions = 1, tilesPerOutGroups = 1, tilesPerInGroups = 1;
    uint64_t positionsPerTile = 1;
    uint32_t inGroupsPerTile = 1, outGroupsPerTile = 1;
    uint32_t kernelHeight = 1, kernelWidth = 1;  // after expansion
    uint64_t inChansPerGroup = 1, outChansPerGroup = 1;
    uint64_t inputBytesPerTile = 0;   // activations a tile receives
    uint64_t weightBytesPerTile = 0;  // weights a tile receives (shared with its bus partner)
    uint64_t partialBytesPerTile = 0;
    uint64_t computeCycles = 0;       // busiest tile's AMP vertex
    uint64_t reduceCycles = 0;        // busiest tile's reduction (0 when not split)
    uint64_t estimateCycles = 0;      // exchange + compute + reduction, what the planner minimised
    bool withinBudget = true;
    // PopLibs' serial splits: when no plan's temporaries fit the budget, the problem runs as
    // `serialSplits` smaller ones in turn (a Repeat), each 1/serialSplits of the output channels
    // or (serialOverReduction) of the reduction, whose partial outputs add up across the steps.
    // The fields above then describe one step's problem (serialStep).
    uint32_t serialSplits = 1;
    bool serialOverReduction = false;
    [[nodiscard]] uint64_t tilesUsed() const { return tilesPerPositions * tilesPerOutGroups * tilesPerInGroups; }
    [[nodiscard]] uint64_t tempBytesPerTile() const
    {
        // A reduction split serially keeps its running sum of partials besides one step's.
        return inputBytesPerTile + weightBytesPerTile + (serialOverReduction ? 3 : 2) * partialBytesPerTile;
    }
    [[nodiscard]] std::string describe() const;
};

/** The AMP vertex one tile of `plan` runs: `positions` output positions of `outGroups` output
 *  groups, for `convGroups` groups of the problem in turn. */
costs::ConvShape tileShape(const ConvProblem& problem, const ConvPlan& plan, uint64_t positions, uint32_t outGroups, uint32_t convGroups = 1);

/** One serial step's problem of a plan (the problem itself without serial splits). */
ConvProblem serialStep(const ConvProblem& problem, const ConvPlan& plan);

/** Chooses the plan with the fewest estimated cycles whose temporaries fit
 *  available_memory_proportion of a tile; if none does, the plan needing the least memory,
 *  unless its temporaries exceed a whole tile: then the fewest serial splits (of the output
 *  channels or the reduction, as PopLibs' planner splits serially) with a plan within the
 *  budget, the fastest of those (if none even so, the plan needing the least memory). */
ConvPlan planConv(const IpuParams& hw, const ConvProblem& problem);

/** planConv remembered: a model's identical layers pose identical problems (BERT's encoder
 *  layers, ResNet's repeated blocks), each planned once. For one IPU's parameters; the tiles
 *  and memory proportion a problem is planned on may vary and are part of the key. */
class ConvPlanCache
{
public:
    const ConvPlan& plan(const IpuParams& hw, const ConvProblem& problem);

private:
    using Key = std::tuple<uint64_t, uint64_t, uint64_t, uint32_t, uint32_t, uint64_t, uint64_t, uint64_t, uint32_t, uint32_t, uint32_t,
                           uint32_t, uint64_t, Precision, Precision, Precision, uint32_t, double>;
    std::map<Key, ConvPlan> m_plans;
};

/** Costs one candidate (exposed for tests). */
ConvPlan evaluatePlan(const IpuParams& hw, const ConvProblem& problem, ConvPlan::Expand expand, uint64_t tilesPerOutGroups,
                      uint64_t tilesPerInGroups);

} // namespace ipusim
