// SPDX-License-Identifier: MIT
// The fast engine against the per-cycle reference engine: every phase's start and end cycle,
// on shipped configs shrunk to small chips and on random schedules generated from seeds.
// Replay one seed with IPUSIM_SEED=<seed> (the failing seed is printed).
#include "models/reference/ReferenceEngine.hpp"
#include "sim/engine/Simulation.hpp"
#include "sim/run/Run.hpp"
#include "workloads/lowering/ProgramBuilder.hpp"
#include "workloads/strategies/Pipeline.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <functional>
#include <random>

using namespace ipusim;

namespace {

const std::string kRoot = IPUSIM_SOURCE_DIR;

/** Runs `e` as `ipusim run --engine reference` does: "" when the fast engine saw exactly the
 *  reference engine's phases, else what differed. */
std::string compareEngines(const Experiment& e)
{
    RunOptions options;
    options.engine = EngineKind::Reference;
    options.inferencePhase = false; // the shrunk settings apply to the training phase only
    try {
        const RunOutcome r = run(e, options);
        if (r.summary.at("total_cycles").get<uint64_t>() == 0)
            return "no phases";
    } catch (const std::exception& ex) {
        return ex.what();
    }
    return "";
}

/** A random schedule: segments of local steps on every IPU, separated by external syncs, some
 *  wrapped in loops or called as fragments, optionally a pipeline. */
Experiment randomSchedule(uint64_t seed)
{
    std::mt19937_64 rng(seed);
    auto pick = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); };
    const uint32_t ipus = uint32_t(pick(1, 4));
    const uint32_t tiles = uint32_t(pick(4, 64));
    Experiment e = buildExperiment(kRoot + "/configs/schedules/two_ipu_copy.json",
                                   {"/system/num_ipus=" + std::to_string(std::max(ipus, 2u)), "/system/ipu/tiles=" + std::to_string(tiles),
                                    "/system/ipu/columns=" + std::to_string(pick(1, 16))});
    e.system.numIpus = std::max(ipus, 2u);
    e.run.hostCalls = pick(1, 2);
    std::vector<std::unique_ptr<ProgramBuilder>> b;
    for (uint32_t i = 0; i < ipus; ++i)
        b.push_back(std::make_unique<ProgramBuilder>(e.system.ipu));

    auto tileValues = [&](uint64_t max) {
        TileVector v(tiles, 0);
        uint32_t t = 0;
        while (t < tiles) { // runs of equal tiles, some idle
            const uint32_t n = uint32_t(pick(1, tiles - t));
            const uint64_t value = pick(0, 3) == 0 ? 0 : pick(1, max);
            for (uint32_t j = 0; j < n; ++j)
                v[t + j] = value;
            t += n;
        }
        return v;
    };
    auto localStep = [&](ProgramBuilder& pb) {
        switch (pick(0, 6)) {
        case 0:
        case 1:
        case 2: pb.compute("compute", tileValues(400), {Vertex::Copy}); break;
        case 3: {
            std::vector<ExchangeBytes> x(tiles);
            const TileVector s = tileValues(300), r = tileValues(300), sh = tileValues(100);
            for (uint32_t t = 0; t < tiles; ++t)
                x[t] = {s[t], r[t], sh[t]};
            pb.exchange("exchange", x);
            break;
        }
        case 4: pb.sync(); break;
        case 5: pb.host("host", pick(0, 1) ? Direction::ToIpu : Direction::FromIpu, pick(0, 40000), pick(0, 1) == 0); break;
        case 6: pb.streamingMemory("streaming", Direction::ToIpu, pick(0, 40000)); break;
        }
    };
    // Up to `most` local steps on every IPU, with IPU copies between pairs of IPUs among them:
    // a copy is listed on both its IPUs, and every IPU lists its copies in one order, so each
    // send meets its receive.
    auto steps = [&](uint64_t most) {
        std::vector<std::vector<std::function<void()>>> todo(ipus);
        for (uint32_t i = 0; i < ipus; ++i)
            for (uint64_t s = 0, n = pick(1, most); s < n; ++s)
                todo[i].push_back([&, i] { localStep(*b[i]); });
        std::vector<std::size_t> next(ipus, 0);
        for (uint64_t c = 0, copies = ipus > 1 ? pick(0, 3) : 0; c < copies; ++c) {
            const uint32_t x = uint32_t(pick(0, ipus - 1)), y = uint32_t((x + pick(1, ipus - 1)) % ipus);
            const uint64_t ways = pick(0, 2); // both ways, x to y, y to x
            const uint64_t xy = ways == 2 ? 0 : pick(0, 100000), yx = ways == 1 ? 0 : pick(0, 100000);
            auto list = [&](uint32_t self, uint32_t peer, bool out, bool in, uint64_t sent, uint64_t got) {
                std::vector<IpuTransfer> send, recv;
                if (out)
                    send.push_back({peer, sent});
                if (in)
                    recv.push_back({peer, got});
                next[self] = std::size_t(pick(next[self], todo[self].size()));
                todo[self].insert(todo[self].begin() + std::ptrdiff_t(next[self]++),
                                  [&, self, send, recv] { b[self]->ipuCopy("copy", send, recv); });
            };
            list(x, y, ways != 2, ways != 1, xy, yx);
            list(y, x, ways != 1, ways != 2, yx, xy);
        }
        for (auto& ipuSteps : todo)
            for (auto& step : ipuSteps)
                step();
    };
    auto segment = [&](bool withCollective) {
        steps(6);
        if (withCollective && ipus > 1) {
            std::vector<uint32_t> ring;
            for (uint32_t i = 0; i < ipus; ++i)
                ring.push_back(i);
            const auto kind = CollectiveKind(pick(0, 2));
            const uint64_t bytes = pick(0, 200000);
            for (auto& pb : b)
                pb->collective("ring", kind, bytes, ring);
        }
        for (auto& pb : b)
            pb->externalSync();
    };

    // A fragment per IPU, called from loops below.
    std::vector<uint32_t> frag;
    for (uint32_t i = 0; i < ipus; ++i)
        frag.push_back(b[i]->beginFragment("fragment"));
    steps(4);
    for (auto& pb : b)
        pb->endFragment();
    const bool pipeline = ipus > 1 && pick(0, 2) == 0;
    std::vector<StageFragments> stages(ipus);
    if (pipeline)
        for (uint32_t i = 0; i < ipus; ++i) {
            stages[i].ipu = stages[i].builder = i;
            stages[i].fwd = int(b[i]->beginFragment("forward"));
            b[i]->compute("forward", tileValues(500), {Vertex::Copy});
            b[i]->endFragment();
            stages[i].bwd = int(b[i]->beginFragment("backward"));
            b[i]->compute("backward", tileValues(900), {Vertex::Copy});
            b[i]->endFragment();
            stages[i].update = int(b[i]->beginFragment("update"));
            b[i]->compute("update", tileValues(200), {Vertex::Copy});
            b[i]->endFragment();
            stages[i].fwdBytesToNext = pick(0, 100000);
            stages[i].bwdBytesToPrevious = pick(0, 100000);
        }

    for (uint64_t s = 0, segments = pick(1, 5); s < segments; ++s) {
        switch (pick(0, 2)) {
        case 0: segment(pick(0, 1) == 0); break;
        case 1: { // a loop on every IPU around calls and a segment
            const uint64_t count = pick(1, 4);
            for (auto& pb : b)
                pb->beginRepeat("loop", count);
            for (uint32_t i = 0; i < ipus; ++i)
                b[i]->call(frag[i], 0, true);
            segment(false);
            for (auto& pb : b)
                pb->endRepeat();
            break;
        }
        default:
            for (uint32_t i = 0; i < ipus; ++i)
                b[i]->call(frag[i]);
            segment(pick(0, 1) == 0);
            break;
        }
    }
    if (pipeline) {
        std::vector<ProgramBuilder*> raw;
        for (auto& pb : b)
            raw.push_back(pb.get());
        const auto kind = pick(0, 1) ? StrategyKind::Pipelined : StrategyKind::Sharded;
        const auto schedule = PipelineSchedule(pick(0, 2));
        composePipeline(raw, stages, pipelineActivity(kind, schedule, ipus, pick(2 * ipus - 1, 2 * ipus + 3), true), true, pick(1, 2));
    }
    e.schedule.programs.clear();
    e.schedule.strategy.reset();
    for (uint32_t i = 0; i < ipus; ++i)
        e.schedule.programs.push_back(b[i]->finish(i));
    e.programsReplaced();
    if (pick(0, 2) == 0) // a host that takes its time before each call (picked last: earlier seeds keep their schedules)
        e.system.host.callOverheadSeconds = double(pick(1, 5000)) / e.system.ipu.clockHz;
    if (pick(0, 2) == 0) { // a data loader that takes its time, over more calls (picked last, as above)
        e.run.hostCalls = pick(1, 5);
        e.schedule.samplesPerHostCall = pick(1, 8);
        e.run.dataLoader = {uint32_t(pick(0, 3)), pick(0, 1) == 1, uint32_t(pick(1, 3)), double(pick(1, 3000)) / e.system.ipu.clockHz};
        e.system.host.cores = uint32_t(pick(1, 4));
    }
    if (pick(0, 2) == 0) // a host that takes its time to answer each host exchange (picked last, as above)
        e.system.host.syncLatencySeconds = double(pick(1, 3000)) / e.system.ipu.clockHz;
    if (pick(0, 1) == 0) { // prefetches fetched further ahead (picked last, as above)
        const uint32_t depth = uint32_t(pick(2, 4));
        for (Program& p : e.schedule.programs)
            forEachProgramStep(p, [&](Step& s) {
                if (auto* h = std::get_if<HostTransferStep>(&s.op); h && h->prefetch)
                    h->prefetchDepth = depth;
            });
    }
    return e;
}

} // namespace

TEST_CASE("Reference engine: shipped schedules and a shrunk MNIST step agree phase by phase", "[reference][slow]")
{
    for (const auto& [file, sets] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"configs/schedules/two_ipu_copy.json", {}},
             {"configs/schedules/shared_link.json", {}},
             {"configs/schedules/all_to_all.json", {}},
             {"configs/schedules/amp_matmul.json", {}},
             {"configs/default.json", {"/system/ipu/tiles=64"}},
             {"configs/mnist/train.json", {"/system/ipu/tiles=96", "/workload/io_tiles=32", "/run/gradient_accumulation=3",
                                           "/run/device_iterations=2", "/workload/micro_batch=4"}},
             {"configs/mnist/pipelined.json", {"/system/ipu/tiles=32", "/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1",
                                               "/run/gradient_accumulation=7", "/run/device_iterations=1", "/workload/micro_batch=4"}},
             {"configs/mnist/pipelined.json", {"/system/ipu/tiles=32", "/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=2",
                                               "/run/gradient_accumulation=7", "/run/device_iterations=1", "/workload/micro_batch=4",
                                               "/system/host/call_overhead_seconds=2e-6"}},
             {"configs/mnist/pipelined.json", {"/system/ipu/tiles=32", "/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=4",
                                               "/run/gradient_accumulation=7", "/run/device_iterations=1", "/workload/micro_batch=4",
                                               "/run/data_loader/workers=2", "/run/data_loader/mode=async",
                                               "/run/data_loader/sample_seconds=1e-5", "/system/host/call_overhead_seconds=1e-6"}},
             {"configs/mnist/train.json", {"/system/ipu/tiles=96", "/workload/io_tiles=32", "/run/gradient_accumulation=3",
                                           "/run/device_iterations=2", "/workload/micro_batch=4", "/run/host_calls=2",
                                           "/system/host/sync_latency_seconds=3e-6"}},
             {"configs/mnist/pipelined.json", {"/system/ipu/tiles=32", "/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=2",
                                               "/run/gradient_accumulation=7", "/run/device_iterations=2", "/workload/micro_batch=4",
                                               "/workload/output_mode=all", "/system/host/sync_latency_seconds=2e-6"}},
             {"configs/mnist/sharded.json", {"/system/ipu/tiles=32", "/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1",
                                             "/run/gradient_accumulation=2", "/run/device_iterations=1", "/workload/micro_batch=4"}},
             {"configs/mnist/pipelined_pod16.json", {"/system/ipu/tiles=16", "/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1",
                                                     "/run/gradient_accumulation=7", "/run/device_iterations=1", "/workload/micro_batch=2"}},
             {"configs/mnist/phased_parallel.json", {"/system/ipu/tiles=32", "/run/dataset_samples=0", "/run/epochs=1",
                                                     "/run/host_calls=1", "/run/gradient_accumulation=2", "/run/device_iterations=1",
                                                     "/workload/micro_batch=4"}},
         }) {
        INFO(file);
        const Experiment e = buildExperiment(config::loadConfig(kRoot + "/" + file, sets));
        CHECK(compareEngines(e) == "");
    }
}

namespace {
/** Seeds [first, last] (or only IPUSIM_SEED when set) against both engines. */
void differential(uint64_t first, uint64_t last)
{
    std::vector<uint64_t> seeds;
    if (const char* one = std::getenv("IPUSIM_SEED"))
        seeds.push_back(std::strtoull(one, nullptr, 10));
    else
        for (uint64_t s = first; s <= last; ++s)
            seeds.push_back(s);
    for (uint64_t seed : seeds) {
        INFO("seed " << seed << " (replay: IPUSIM_SEED=" << seed << " ipusim_sim_tests \"Reference engine: random*\")");
        CHECK(compareEngines(randomSchedule(seed)) == "");
    }
}
} // namespace

// Four cases so that ctest spreads the seeds over the cores.
TEST_CASE("Reference engine: random schedules agree phase by phase, seeds 1-50", "[reference][differential][slow]") { differential(1, 50); }
TEST_CASE("Reference engine: random schedules agree phase by phase, seeds 51-100", "[reference][differential][slow]") { differential(51, 100); }
TEST_CASE("Reference engine: random schedules agree phase by phase, seeds 101-150", "[reference][differential][slow]") { differential(101, 150); }
TEST_CASE("Reference engine: random schedules agree phase by phase, seeds 151-200", "[reference][differential][slow]") { differential(151, 200); }
