// SPDX-License-Identifier: MIT
// Pipelines of synthetic uniform stages through the SystemC model, against hand formulas.
#include "Simulate.hpp"
#include "models/timing/SyncTiming.hpp"
#include "workloads/strategies/Pipeline.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;

namespace {

constexpr uint64_t f = 1000, b = 2500, u = 300; // forward, backward, update cycles per stage

struct Run
{
    json summary;
    uint64_t latency;
};

Run simulatePipeline(StrategyKind kind, PipelineSchedule schedule, uint32_t K, uint64_t G, uint64_t D)
{
    Experiment e = buildExperiment(std::string(IPUSIM_SOURCE_DIR) + "/configs/schedules/two_ipu_copy.json",
                                   {"/system/num_ipus=" + std::to_string(std::max(K, 2u))});
    std::vector<std::unique_ptr<ProgramBuilder>> builders;
    std::vector<ProgramBuilder*> raw;
    std::vector<StageFragments> st(K);
    auto fragment = [&](ProgramBuilder& pb, const char* name, uint64_t cycles) {
        int id = int(pb.beginFragment(name));
        pb.compute(name, TileVector(e.system.ipu.tiles, cycles), {Vertex::Copy});
        pb.endFragment();
        return id;
    };
    for (uint32_t k = 0; k < K; ++k) {
        builders.push_back(std::make_unique<ProgramBuilder>(e.system.ipu));
        raw.push_back(builders.back().get());
        st[k].ipu = k;
        st[k].builder = k;
        st[k].fwd = fragment(*raw[k], "forward", f);
        st[k].bwd = fragment(*raw[k], "backward", b);
        st[k].update = fragment(*raw[k], "update", u);
    }
    auto activity = pipelineActivity(kind, schedule, K, G, true);
    composePipeline(raw, st, activity, true, D);
    e.schedule.programs.clear();
    StrategyInfo info;
    for (uint32_t k = 0; k < K; ++k) {
        e.schedule.programs.push_back(raw[k]->finish(k));
        info.stages.push_back({k, {"S" + std::to_string(k)}, 0, st[k].fwd, st[k].bwd});
    }
    info.pipelineCycles = activity.cycles() * activity.repeats;
    e.schedule.strategy = info;
    e.programsReplaced();
    return {test::simulate(e), externalSyncCycles(K, e.system.syncHopSeconds, e.system.ipu.clockHz)};
}

uint64_t fromActivity(const PipelineActivity& a, uint64_t L)
{
    uint64_t t = 0;
    for (std::size_t c = 0; c < a.cycles(); ++c) {
        uint64_t longest = 0;
        for (std::size_t k = 0; k < a.at(c).fwd.size(); ++k)
            longest = std::max(longest, f * a.at(c).fwd[k] + b * a.at(c).bwd[k]);
        t += longest + L;
    }
    return t * a.repeats;
}

} // namespace

TEST_CASE("Grouped pipeline of 4 uniform stages: (G + K - 1)(f + b) + (G + 2K - 2) syncs", "[sim][pipeline]")
{
    const uint32_t K = 4;
    const uint64_t G = 10, D = 3;
    Run r = simulatePipeline(StrategyKind::Pipelined, PipelineSchedule::Grouped, K, G, D);
    const uint64_t L = r.latency;
    CHECK(L == 80); // 4 IPUs
    // Ramp-up cycles do f, the G middle cycles f + b, ramp-down cycles b; then the update.
    // Every device iteration ends with the update and a sync; the host call with one more sync.
    const uint64_t perStep = (K - 1) * f + G * (f + b) + (K - 1) * b + (G + 2 * K - 2) * L + u + L;
    CHECK(r.summary["total_cycles"] == D * perStep + L);
    // Bubble: the share of IPU time outside the stages' work.
    const double busy = double(D * (G * (f + b) + u));
    CHECK(r.summary["pipeline"]["bubble_fraction"].get<double>() == Approx(1.0 - busy / double(D * perStep + L)));
    CHECK(r.summary["pipeline"]["stages"][0]["forward_cycles"].get<double>() == Approx(f));
    CHECK(r.summary["pipeline"]["stages"][3]["backward_cycles"].get<double>() == Approx(b));
}

TEST_CASE("Sharded: every stage in turn, the sum of the stages per micro-batch", "[sim][pipeline]")
{
    const uint32_t K = 4;
    const uint64_t G = 5, D = 2;
    Run r = simulatePipeline(StrategyKind::Sharded, PipelineSchedule::Grouped, K, G, D);
    const uint64_t L = r.latency;
    const uint64_t perMicroBatch = K * (f + b) + (2 * K - 1) * L;
    CHECK(r.summary["total_cycles"] == D * (G * perMicroBatch + u + L) + L);
}

TEST_CASE("Every schedule lasts as its activity says: each cycle as long as its longest stage", "[sim][pipeline]")
{
    const uint32_t K = 3;
    const uint64_t G = 6;
    for (auto [kind, schedule] : {std::pair{StrategyKind::Pipelined, PipelineSchedule::Grouped},
                                  std::pair{StrategyKind::Pipelined, PipelineSchedule::Interleaved},
                                  std::pair{StrategyKind::Pipelined, PipelineSchedule::Sequential},
                                  std::pair{StrategyKind::Sharded, PipelineSchedule::Grouped}}) {
        Run r = simulatePipeline(kind, schedule, K, G, 1);
        auto a = pipelineActivity(kind, schedule, K, G, true);
        INFO("schedule " << int(schedule) << " kind " << int(kind));
        CHECK(r.summary["total_cycles"] == fromActivity(a, r.latency) + u + 2 * r.latency);
    }
}

TEST_CASE("Inference latency: each micro-batch of the first host call, from its first fragment to its last", "[sim][latency]")
{
    // One IPU: a device iteration is one micro-batch, its forward then its output, back to
    // back, so every micro-batch takes a hundredth of the host call.
    json one = test::simulateFile("configs/mnist/infer.json", {"/run/host_calls=1"});
    const json& l = one.at("latency");
    CHECK(l.at("micro_batches") == 100);
    CHECK(l.at("min_cycles") == l.at("max_cycles"));
    CHECK(l.at("max_cycles").get<uint64_t>() * 100 == one.at("total_cycles").get<uint64_t>());
    // A pipeline: a micro-batch passes every stage's forward, one pipeline cycle after another,
    // so it takes at least their sum; the steady state makes most take the longest.
    json piped = test::simulateFile("configs/mnist/pipelined_infer.json");
    const json& p = piped.at("latency");
    double forwards = 0;
    for (const auto& st : piped.at("pipeline").at("stages"))
        forwards += st.at("forward_cycles").get<double>();
    CHECK(p.at("micro_batches") == piped.at("samples").get<uint64_t>() / 8);
    CHECK(p.at("min_cycles").get<double>() >= forwards);
    CHECK(p.at("max_cycles").get<uint64_t>() < piped.at("total_cycles").get<uint64_t>());
    CHECK(p.at("p50_cycles") == p.at("max_cycles"));
    // Measured the same when every loop iteration of the whole run is simulated.
    RunOptions every;
    every.everyIteration = true;
    CHECK(test::simulate(config::loadConfig(test::kRoot + "/configs/mnist/pipelined_infer.json"), every).at("latency") == p);
    // Training reports none.
    CHECK(test::simulateFile("configs/mnist/train.json").at("latency").is_null());
}
