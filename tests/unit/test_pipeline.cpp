// SPDX-License-Identifier: MIT
// Pipeline schedules, stash depths and placement errors.
#include "sim/config/ConfigError.hpp"
#include "sim/engine/Experiment.hpp"
#include "workloads/strategies/Pipeline.hpp"

#include <catch2/catch.hpp>
#include <numeric>

using namespace ipusim;
using json = nlohmann::json;

TEST_CASE("Grouped pipeline: G + 2K - 2 cycles, stage k forwards micro-batch c - k", "[pipeline]")
{
    for (uint32_t K : {1u, 2u, 4u})
        for (uint64_t G : {7ull, 10ull, 32ull}) {
            auto a = pipelineActivity(StrategyKind::Pipelined, PipelineSchedule::Grouped, K, G, true);
            const uint64_t P = 2 * K - 1; // PopART: last forward and first backward fused
            CHECK(a.cycles() == G + P - 1);
            uint64_t fwd = 0, bwd = 0;
            for (std::size_t c = 0; c < a.cycles(); ++c)
                for (uint32_t k = 0; k < K; ++k) {
                    fwd += a.at(c).fwd[k];
                    bwd += a.at(c).bwd[k];
                }
            CHECK(fwd == G * K); // every micro-batch once through every stage
            CHECK(bwd == G * K);
        }
    // 4 IPUs: ramp-up is P - 1 = 6 cycles; stage k's first backward is in cycle 2K - 2 - k, so
    // cycle 6 (the 7th) is the first in which every IPU runs a forward and a backward.
    auto a = pipelineActivity(StrategyKind::Pipelined, PipelineSchedule::Grouped, 4, 10, true);
    for (uint32_t k = 0; k < 4; ++k) {
        std::size_t first = 0;
        while (!a.at(first).bwd[k])
            ++first;
        CHECK(first == 6 - k);
    }
    auto busyAll = [&](std::size_t c) {
        for (uint32_t k = 0; k < 4; ++k)
            if (!(a.at(c).fwd[k] && a.at(c).bwd[k]))
                return false;
        return true;
    };
    CHECK_FALSE(busyAll(5));
    CHECK(busyAll(6));
    CHECK(busyAll(9));   // steady state: G - P + 1 = 4 cycles, 6..9
    CHECK_FALSE(busyAll(10));
}

TEST_CASE("Interleaved pipeline: 2(G + K - 1) steps, one pass per stage per step", "[pipeline]")
{
    auto a = pipelineActivity(StrategyKind::Pipelined, PipelineSchedule::Interleaved, 4, 10, true);
    CHECK(a.cycles() == 2 * (10 + 4 - 1));
    for (std::size_t t = 0; t < a.cycles(); ++t)
        for (uint32_t k = 0; k < 4; ++k)
            CHECK_FALSE((a.at(t).fwd[k] && a.at(t).bwd[k]));
    // A micro-batch's backward on stage k follows its backward on stage k + 1 by one step.
    CHECK(a.at(7).bwd[0]);  // micro-batch 0 reaches stage 0's backward at 2K - 1
    CHECK(a.at(4).bwd[3]);  // and stage 3's one step after its forward at 3
    // Steps 2K - 1 = 7 to 2G - 1 = 19 keep every stage busy, alternating with a period of two:
    // a loop of G - K = 6 iterations over steps 7-18; step 19 runs after it.
    CHECK(a.loopRuns == 2);
    CHECK(a.loopIterations == 6);
    CHECK(a.runs.size() == 7 + 2 + (26 - 7 - 12));
    // Laid out with its loop, every step is what the 1F1B formula says it is.
    for (uint32_t K : {1u, 2u, 3u, 5u})
        for (uint64_t G : {1ull, 2ull, 9ull, 10ull, 33ull}) {
            auto b = pipelineActivity(StrategyKind::Pipelined, PipelineSchedule::Interleaved, K, G, true);
            REQUIRE(b.cycles() == 2 * (G + K - 1));
            for (uint64_t t = 0; t < b.cycles(); ++t)
                for (uint32_t k = 0; k < K; ++k) {
                    INFO("K " << K << " G " << G << " t " << t << " k " << k);
                    CHECK(b.at(t).fwd[k] == (t >= k && (t - k) % 2 == 0 && (t - k) / 2 < G));
                    const uint64_t back = 2 * K - 1 - k;
                    CHECK(b.at(t).bwd[k] == (t >= back && (t - back) % 2 == 0 && (t - back) / 2 < G));
                }
        }
    // Its size does not grow with the micro-batches.
    CHECK(pipelineActivity(StrategyKind::Pipelined, PipelineSchedule::Interleaved, 4, uint64_t(1) << 40, true).runs.size() == 7 + 2 + 7);
}

namespace {

/** The micro-batch of every call of `fragment` in `steps`, loops unrolled (a per-iteration
 *  call adds its innermost loop's iteration, as the simulator does). */
void callsOf(const std::vector<Step>& steps, uint32_t fragment, uint64_t iteration, std::vector<int64_t>& out)
{
    for (const Step& s : steps)
        if (const auto* r = std::get_if<RepeatStep>(&s.op)) {
            for (uint64_t i = 0; i < r->count; ++i)
                callsOf(r->body, fragment, i, out);
        } else if (const auto* c = std::get_if<CallStep>(&s.op); c && c->fragment == fragment) {
            out.push_back(c->microBatch + (c->perIteration ? int64_t(iteration) : 0));
        }
}

} // namespace

TEST_CASE("Interleaved pipeline program: its loop numbers each stage's micro-batches in order", "[pipeline]")
{
    // Two stages on two IPUs, 9 micro-batches: steps 3 to 16 are a loop of 7 iterations.
    const uint32_t K = 2;
    const uint64_t G = 9;
    IpuParams hw;
    std::vector<std::unique_ptr<ProgramBuilder>> builders;
    std::vector<ProgramBuilder*> raw;
    std::vector<StageFragments> st(K);
    for (uint32_t k = 0; k < K; ++k) {
        builders.push_back(std::make_unique<ProgramBuilder>(hw));
        raw.push_back(builders.back().get());
        st[k].ipu = st[k].builder = k;
        for (int* id : {&st[k].fwd, &st[k].bwd}) {
            *id = int(raw[k]->beginFragment(id == &st[k].fwd ? "forward" : "backward"));
            raw[k]->compute("work", TileVector(hw.tiles, 10), {Vertex::Copy});
            raw[k]->endFragment();
        }
        st[k].fwdBytesToNext = st[k].bwdBytesToPrevious = 64;
    }
    const PipelineActivity a = pipelineActivity(StrategyKind::Pipelined, PipelineSchedule::Interleaved, K, G, true);
    REQUIRE(a.loopIterations == 7);
    composePipeline(raw, st, a, true, 1);
    std::vector<int64_t> order(G);
    std::iota(order.begin(), order.end(), 0);
    for (uint32_t k = 0; k < K; ++k) {
        const Program p = raw[k]->finish(k);
        for (int fragment : {st[k].fwd, st[k].bwd}) {
            std::vector<int64_t> seen;
            callsOf(p.steps, uint32_t(fragment), 0, seen);
            INFO("stage " << k << " fragment " << fragment);
            CHECK(seen == order);
        }
    }
}

TEST_CASE("Sharded and sequential: one stage at a time, 2K - 1 steps per micro-batch", "[pipeline]")
{
    for (auto kind : {StrategyKind::Sharded, StrategyKind::Pipelined}) {
        auto a = pipelineActivity(kind, kind == StrategyKind::Sharded ? PipelineSchedule::Grouped : PipelineSchedule::Sequential, 4, 10, true);
        CHECK(a.cycles() == 7);
        CHECK(a.repeats == 10);
        for (std::size_t t = 0; t < a.cycles(); ++t) {
            int active = 0;
            for (uint32_t k = 0; k < 4; ++k)
                active += a.at(t).fwd[k] || a.at(t).bwd[k];
            CHECK(active == 1);
        }
    }
}

TEST_CASE("Stash depths: 2(K-1-k)+1 grouped, K-k interleaved", "[pipeline]")
{
    std::vector<uint32_t> grouped, interleaved;
    for (uint32_t k = 0; k < 4; ++k) {
        grouped.push_back(stashDepth(StrategyKind::Pipelined, PipelineSchedule::Grouped, 4, k, true));
        interleaved.push_back(stashDepth(StrategyKind::Pipelined, PipelineSchedule::Interleaved, 4, k, true));
    }
    CHECK(grouped == std::vector<uint32_t>{7, 5, 3, 0});
    CHECK(interleaved == std::vector<uint32_t>{4, 3, 2, 1});
    CHECK(stashDepth(StrategyKind::Sharded, PipelineSchedule::Grouped, 4, 0, true) == 0);
    CHECK(stashDepth(StrategyKind::Pipelined, PipelineSchedule::Grouped, 4, 0, false) == 0);
}

namespace {
std::string errorOf(const std::vector<std::string>& sets, const std::string& file = "configs/mnist/pipelined.json")
{
    try {
        buildExperiment(std::string(IPUSIM_SOURCE_DIR) + "/" + file, sets);
    } catch (const config::ConfigError& e) {
        return e.what();
    }
    return "no error";
}
} // namespace

TEST_CASE("Placement errors name the JSON path", "[pipeline][errors]")
{
    CHECK_THAT(errorOf({R"(/workload/strategy/stages/1/blocks=["B9"])"}),
               Catch::Contains("/workload/strategy/stages/1/blocks/0: unknown block \"B9\" (the model's blocks: B1, B2, B3, B4)"));
    CHECK_THAT(errorOf({"/workload/strategy/stages/3/ipu=4"}),
               Catch::Contains("/workload/strategy/stages/3/ipu: expected an IPU of the system (0 to 3), found 4"));
    CHECK_THAT(errorOf({"/run/gradient_accumulation=6"}),
               Catch::Contains("/run/gradient_accumulation: expected at least 7 (the pipeline's stages, 2 x 4 stages - 1), found 6"));
    CHECK_THAT(errorOf({"/run/device_iterations=3"}, "configs/mnist/pipelined_infer.json"),
               Catch::Contains("/run/device_iterations: expected at least 4"));
    CHECK_THAT(errorOf({R"(/workload/strategy/stages=[{"blocks":["B1","B2"],"ipu":0},{"blocks":["B3"],"ipu":1}])"}),
               Catch::Contains("block \"B4\" is in no stage"));
    CHECK_THAT(errorOf({R"(/workload/strategy/stages=[{"blocks":["B2"],"ipu":0},{"blocks":["B1","B3","B4"],"ipu":1}])"}),
               Catch::Contains("stages follow the model's order"));
    CHECK_THAT(errorOf({R"(/system/topology={"kind":"custom","links":[[0,1,4],[1,2,4],[1,3,4]]})"}),
               Catch::Contains("/workload/strategy/stages/3: IPU 3 has no IPU-Link to IPU 2 of the previous stage"));
    CHECK_THAT(errorOf({"/system/num_ipus=2"}), Catch::Contains("/workload/strategy/stages/2/ipu: expected an IPU of the system (0 to 1), found 2"));
    CHECK_THAT(errorOf({R"(/workload/strategy={"kind":"pipelined","block_ipus":{"B1":0,"B2":1,"B3":2}})"}),
               Catch::Contains("/workload/strategy/block_ipus: block \"B4\" has no IPU"));
    CHECK_THAT(errorOf({"/workload/strategy/layers_per_ipu=[1,1,1,1]"}),
               Catch::Contains("/workload/strategy/layers_per_ipu: expected only for BERT"));
}

TEST_CASE("Auto-staging from block IPUs merges consecutive blocks on one IPU", "[pipeline]")
{
    Experiment e = buildExperiment(std::string(IPUSIM_SOURCE_DIR) + "/configs/mnist/pipelined.json",
                                   {R"(/workload/strategy={"kind":"pipelined","block_ipus":{"B1":0,"B2":0,"B3":1,"B4":1}})"});
    REQUIRE(e.schedule.strategy);
    REQUIRE(e.schedule.strategy->stages.size() == 2);
    CHECK(e.schedule.strategy->stages[0].blocks == std::vector<std::string>{"B1", "B2"});
    CHECK(e.schedule.strategy->stages[1].ipu == 1);
    CHECK(e.schedule.programs.size() == 2);
}

TEST_CASE("An IPU may come back later in the pipeline: its stages share its program", "[pipeline]")
{
    Experiment e = buildExperiment(std::string(IPUSIM_SOURCE_DIR) + "/configs/mnist/pipelined.json",
                                   {R"(/workload/strategy/stages=[{"blocks":["B1"],"ipu":0},{"blocks":["B2"],"ipu":1},{"blocks":["B3","B4"],"ipu":0}])"});
    REQUIRE(e.schedule.strategy);
    const auto& st = e.schedule.strategy->stages;
    REQUIRE(st.size() == 3);
    CHECK(st[0].ipu == 0);
    CHECK(st[2].ipu == 0);
    // Three stages on two IPUs: 2 x 3 - 1 pipeline stages, stash depths by stage.
    CHECK(st[0].stashDepth == 5);
    CHECK(st[1].stashDepth == 3);
    CHECK(st[2].stashDepth == 0);
    CHECK(e.schedule.programs.size() == 2);
    // Both of IPU 0's stages have their own forward fragment in its one program.
    CHECK(st[0].forwardFragment != st[2].forwardFragment);
    CHECK(e.schedule.programs[0].fragmentNames.at(std::size_t(st[2].forwardFragment)) == "forward (stage 2)");
}
