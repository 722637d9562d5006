// SPDX-License-Identifier: MIT
// The plan cache remembers planConv's answer per problem, and only per problem.
#include "workloads/lowering/ConvPlanner.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace ipusim;

TEST_CASE("A conv plan cache gives planConv's plan for each problem and tile count", "[unit][planner]")
{
    IpuParams hw;
    ConvProblem ffn; // BERT-Large's intermediate matmul of one micro-batch: 128 x 1024 -> 4096
    ffn.positions = 128;
    ffn.reduction = 1024;
    ffn.outChans = 4096;
    ffn.input = ffn.partials = ffn.output = Precision::FP16;
    ConvProblem back = ffn; // its data gradient
    back.reduction = 4096;
    back.outChans = 1024;

    ConvPlanCache cache;
    auto same = [](const ConvPlan& a, const ConvPlan& b) {
        return a.describe() == b.describe() && a.estimateCycles == b.estimateCycles && a.tilesUsed() == b.tilesUsed();
    };
    const ConvPlan& first = cache.plan(hw, ffn);
    CHECK(same(first, planConv(hw, ffn)));
    CHECK(same(cache.plan(hw, back), planConv(hw, back)));
    CHECK(&cache.plan(hw, ffn) == &first); // remembered
    CHECK_FALSE(same(cache.plan(hw, back), first));

    IpuParams fewer = hw; // the same problem on a slot of fewer tiles is planned again
    fewer.tiles = 92;
    CHECK(same(cache.plan(fewer, ffn), planConv(fewer, ffn)));
    CHECK(cache.plan(fewer, ffn).tilesUsed() <= 92);
    CHECK(cache.plan(hw, ffn).tilesUsed() > 92);
}

TEST_CASE("A problem whose smallest plan exceeds a tile runs in serial steps, each within the budget", "[unit][planner]")
{
    IpuParams hw;
    // GPT-2 small's tied LM head over 1,024 tokens: 1,024 x 768 -> 50,257 in fp16, and its data
    // gradient, 50,257 -> 768. No split over tiles alone keeps either's operands and partials
    // within a tile's 638,976 bytes.
    ConvProblem head;
    head.positions = 1024;
    head.reduction = 768;
    head.outChans = 50257;
    head.input = head.partials = head.output = Precision::FP16;
    ConvProblem back = head;
    back.reduction = 50257;
    back.outChans = 768;
    for (const ConvProblem& problem : {head, back}) {
        INFO(problem.reduction << " -> " << problem.outChans);
        const ConvPlan plan = planConv(hw, problem);
        REQUIRE(plan.serialSplits > 1);
        CHECK(plan.withinBudget);
        CHECK(double(plan.tempBytesPerTile()) <= hw.availableMemoryProportion * double(hw.tileMemoryBytes));
        // One step is the problem with its share of the dimension split, planned as any other.
        const ConvProblem step = serialStep(problem, plan);
        const uint64_t s = plan.serialSplits;
        if (plan.serialOverReduction)
            CHECK((step.reduction == (problem.reduction + s - 1) / s && step.outChans == problem.outChans));
        else
            CHECK((step.outChans == (problem.outChans + s - 1) / s && step.reduction == problem.reduction));
        const ConvPlan one = planConv(hw, step);
        CHECK(one.serialSplits == 1);
        CHECK(plan.describe() == one.describe() + fmt::format(", {} serial steps over the {}", s,
                                                              plan.serialOverReduction ? "reduction" : "output channels"));
        // The steps run in turn; split over the reduction, each adds its n partials a tile into
        // the running sum (BinaryOp1D ADD fp16: 11 + 6 x (26 + 3 per 4 of a worker's elements)),
        // which stays beside one step's temporaries.
        const uint64_t n = one.partialBytesPerTile / 2, m = (n + 5) / 6;
        CHECK(plan.estimateCycles == s * (one.estimateCycles + (plan.serialOverReduction ? 11 + 6 * (26 + 3 * ((m + 3) / 4)) : 0)));
        CHECK(plan.tempBytesPerTile() ==
              plan.inputBytesPerTile + plan.weightBytesPerTile + (plan.serialOverReduction ? 3 : 2) * plan.partialBytesPerTile);
        // Half as many steps fit the budget neither way.
        for (bool overReduction : {false, true}) {
            ConvPlan fewer;
            fewer.serialSplits = plan.serialSplits / 2;
            fewer.serialOverReduction = overReduction;
            if (fewer.serialSplits > 1)
                CHECK_FALSE(planConv(hw, serialStep(problem, fewer)).withinBudget);
        }
    }
    // A problem that fits a tile keeps one step (BERT-Large's feed-forward matmul).
    ConvProblem ffn = head;
    ffn.positions = 128;
    ffn.reduction = 1024;
    ffn.outChans = 4096;
    CHECK(planConv(hw, ffn).serialSplits == 1);
}
