// SPDX-License-Identifier: MIT
// The plan cache remembers planConv's answer per problem, and only per problem.
#include "workloads/lowering/ConvPlanner.hpp"

#include <catch2/catch.hpp>

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
