// SPDX-License-Identifier: MIT
// Compiling once: the compile key holds what the compiler reads, a cache hands a compiled
// schedule on, and sweep workers are long-lived, crash-isolated and give the rows a run gives.
#include "Simulate.hpp"

#include "models/json/ScheduleJson.hpp"
#include "sim/engine/CompileCache.hpp"
#include "sim/report/Summary.hpp"
#include "sim/run/ChildProcess.hpp"
#include "sim/sweep/SimulatePoint.hpp"
#include "sim/sweep/Sweep.hpp"
#include "sim/sweep/WorkerPool.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

using namespace ipusim;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

using test::kRoot;

config::LoadedConfig load(const std::string& file, const std::vector<std::string>& sets = {})
{
    return config::loadConfig(kRoot + "/" + file, sets);
}

/** Every number the compile key leaves out changed: integers by one (not zeros, which may mean
 *  "off", nor the epochs of a run that tracks none, nor PopRun's instances and host servers,
 *  which must divide the replicas and each other), other numbers to three quarters. The
 *  inference phase's own values are its compile's: left as they are unless `inferenceToo`. */
void perturb(json& value, const std::string& pointer, bool epochsTracked)
{
    if (value.is_structured()) {
        for (auto& [key, child] : value.items())
            perturb(child, pointer + "/" + key, epochsTracked);
    } else if (value.is_number_unsigned() || value.is_number_integer()) {
        const bool divides = pointer == "/run/instances" || pointer == "/system/host/servers";
        if (value.get<int64_t>() != 0 && (pointer != "/run/epochs" || epochsTracked) && !divides)
            value = value.get<int64_t>() + 1;
    } else if (value.is_number_float()) {
        value = value.get<double>() * 0.75;
    }
}

json perturbIgnored(json doc, bool inferenceToo)
{
    const bool epochsTracked = doc.at("run").at("dataset_samples").get<uint64_t>() > 0;
    for (const std::string_view p : compilerIgnoredPointers()) {
        const json::json_pointer pointer{std::string(p)};
        if (doc.contains(pointer) && (inferenceToo || p != "/inference"))
            perturb(doc.at(pointer), std::string(p), epochsTracked);
    }
    return doc;
}

/** Where two compiled schedules first differ ("" if nowhere). */
std::string firstDifference(const Schedule& a, const Schedule& b) { return test::firstDifference(scheduleToJson(a), scheduleToJson(b)); }

/** The sweep's rows, by point. */
std::map<std::size_t, json> rowsOf(const fs::path& jsonl)
{
    std::map<std::size_t, json> rows;
    std::ifstream in(jsonl);
    for (std::string line; std::getline(in, line);) {
        json row = json::parse(line);
        rows[row.at("point").get<std::size_t>()] = row;
    }
    return rows;
}

} // namespace

TEST_CASE("Compile keys: values the compiler ignores leave the key as it is, values it reads change it", "[sim][compile-cache]")
{
    const std::string config = "configs/mnist/pipelined.json";
    const std::string key = compileKey(load(config));
    for (const char* ignored : {"/system/ipu/clock_hz=1.0e9", "/system/ipu_link/bandwidth_bytes_per_second=1.0e9",
                                "/system/ipu_link/latency_cycles=1", "/system/host_link/efficiency=0.5",
                                "/system/external_sync/hop_seconds=1.0e-7", "/system/streaming_memory/latency_cycles=9",
                                "/system/ipu/sync/internal_cycles=7", "/run/host_calls=3", "/name=\"other\""}) {
        INFO(ignored);
        CHECK(compileKey(load(config, {ignored})) == key);
    }
    for (const char* read : {"/run/gradient_accumulation=20", "/run/device_iterations=2", "/workload/micro_batch=8",
                             "/system/ipu/exchange/send_bytes_per_cycle=8", "/system/ipu/tiles=736"}) {
        INFO(read);
        CHECK(compileKey(load(config, {read})) != key);
    }
    CHECK(compilerIgnores("/system/ipu_link/latency_cycles"));
    CHECK(compilerIgnores("/system/ipu/clock_hz"));
    CHECK_FALSE(compilerIgnores("/system/ipu/clock_hzz"));
    CHECK_FALSE(compilerIgnores("/system/ipu"));
    CHECK_FALSE(compilerIgnores("/system/ipu/tiles"));
}

TEST_CASE("Compile keys: an ONNX model's file is read, so a rewritten file compiles again", "[sim][compile-cache]")
{
    const fs::path model = fs::temp_directory_path() / fmt::format("ipusim-key-{}.onnx", ::getpid());
    std::ofstream(model) << "first";
    const std::vector<std::string> sets{"/workload/file=" + json(model.string()).dump()};
    const std::string before = compileKey(load("configs/resnet/resnet50_pod16.json", sets));
    CHECK(compileKey(load("configs/resnet/resnet50_pod16.json", sets)) == before);
    std::ofstream(model) << "a longer second model";
    CHECK(compileKey(load("configs/resnet/resnet50_pod16.json", sets)) != before);
    fs::remove(model);
}

namespace {

/** A shipped config compiles to the same Schedule (and inference Schedule) with every value
 *  compilerIgnoredPointers() lists changed. */
void checkIgnoredValuesLeaveTheSchedule(const std::string& config)
{
    const config::LoadedConfig original = load(config);
    const config::LoadedConfig changed = config::loadConfig(perturbIgnored(original.doc, true), original.file);
    INFO(config << ": one of the values compilerIgnoredPointers() lists changed the Schedule");
    REQUIRE(compileKey(changed) == compileKey(original));
    CHECK(firstDifference(buildExperiment(original).schedule, buildExperiment(changed).schedule) == "");
    if (auto inference = inferencePhase(original)) {
        const auto inferenceChanged = inferencePhase(config::loadConfig(perturbIgnored(original.doc, false), original.file));
        REQUIRE(compileKey(*inferenceChanged) == compileKey(*inference));
        CHECK(firstDifference(buildExperiment(*inference).schedule, buildExperiment(*inferenceChanged).schedule) == "");
    }
}

} // namespace

TEST_CASE("Every shipped model compiles to the very same Schedule whatever the values its compile key leaves out", "[sim][compile-cache][slow]")
{
    for (const std::string& config : test::shippedExperiments(test::Shipped::WithoutBundledModel))
        checkIgnoredValuesLeaveTheSchedule(config);
}

TEST_CASE("Every shipped model on a bundled model compiles to the very same Schedule whatever the values its compile key leaves out",
          "[sim][compile-cache][resnet][slow]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    for (const std::string& config : test::shippedExperiments(test::Shipped::OnBundledModel))
        checkIgnoredValuesLeaveTheSchedule(config);
}

TEST_CASE("A compile cache compiles each key once and hands the schedule on to the run that takes it", "[sim][compile-cache]")
{
    const std::string config = "configs/mnist/pipelined_2stage.json";
    CompileCache cache(2);
    cache.prepare(load(config));
    cache.prepare(load(config, {"/system/ipu/clock_hz=1.0e9", "/name=\"faster\""}));
    CHECK(cache.compiled() == 1);
    cache.prepare(load(config, {"/run/gradient_accumulation=8"}));
    CHECK(cache.compiled() == 2);

    const config::LoadedConfig slower = load(config, {"/system/ipu_link/bandwidth_bytes_per_second=1.0e9", "/name=\"slower\""});
    std::optional<CompiledSchedule> taken = cache.take(slower);
    REQUIRE(taken);
    CHECK(taken->schedule.name == "slower");
    CHECK(firstDifference(taken->schedule, buildExperiment(slower).schedule) == "");
    // Its tile memory, worked out ahead, is what elaboration works out.
    REQUIRE(taken->memory.size() == taken->schedule.programs.size());
    const IpuParams hw = buildExperiment(slower).system.ipu;
    for (std::size_t i = 0; i < taken->memory.size(); ++i) {
        const TileMemory fresh(taken->schedule.programs[i], hw);
        REQUIRE(taken->memory[i]->tiles().size() == fresh.tiles().size());
        std::size_t differ = 0;
        for (uint32_t t = 0; t < fresh.tiles().size(); ++t)
            differ += taken->memory[i]->tiles()[t].peak() != fresh.tiles()[t].peak();
        CHECK(differ == 0);
    }
    CHECK_FALSE(cache.take(slower)); // taken: a forked point's copy of the cache gives it once
    // The run that takes it: the same experiment as one compiled from scratch.
    cache.prepare(slower);
    CHECK(cache.compiled() == 3);
    const Experiment e = buildExperiment(slower, &cache);
    CHECK(e.compiledAhead);
    CHECK_FALSE(cache.take(slower)); // the run took it: it did not compile its own
    CHECK(e.memory.size() == e.schedule.programs.size()); // the run neither checks nor accounts again
    CHECK_FALSE(buildExperiment(slower).compiledAhead);
    CHECK(firstDifference(e.schedule, buildExperiment(slower).schedule) == "");
    CHECK(e.run.hostCalls == buildExperiment(slower).run.hostCalls);

    // The most recently used two stay: x used again after y, z then evicts y (not x, as the
    // first in would), and y compiles again.
    CompileCache two(2);
    const auto x = load(config, {"/run/gradient_accumulation=8"}), y = load(config, {"/workload/micro_batch=8"}), z = load(config);
    for (const auto* c : {&x, &y, &x, &z, &x})
        two.prepare(*c);
    CHECK(two.compiled() == 3);
    two.prepare(y);
    CHECK(two.compiled() == 4);
}

TEST_CASE("A compile cache holds a schedule that does not fit as compiled: up to the first IPU over", "[sim][compile-cache]")
{
    // 32 BERT-Large layers a stage: IPU 1 is the first over; IPUs 2 and 3 are never compiled.
    const config::LoadedConfig cfg = load("configs/bert/large_phase1_pod16.json",
                                          {R"(/workload/model={"layers":96})", "/workload/strategy/layers_per_ipu=[0,32,32,32]"});
    CompileCache cache;
    cache.prepare(cfg);
    const Experiment e = buildExperiment(cfg, &cache);
    REQUIRE(e.compiledAhead);
    CHECK(e.schedule.programs.size() == 2);
    CHECK(e.ipusNotCompiled == std::vector<uint32_t>{2, 3});
    const json r = report::oomReport(e, accountMemory(e));
    REQUIRE(r["ipus"].size() == 1);
    CHECK(r["ipus"][0]["ipu"] == 1);
    CHECK(r["ipus_not_accounted"] == json({2, 3}));
    // Compiled whole, it is not asked: it holds only schedules compiled to stop.
    cache.prepare(cfg);
    const Experiment whole = buildExperiment(cfg, &cache, false);
    CHECK_FALSE(whole.compiledAhead);
    CHECK(whole.schedule.programs.size() == 4);
}

TEST_CASE("Sweep workers live across points, run a group's points together, and a crash costs one point", "[sim][sweep]")
{
    // The job reports the worker it ran on; point 3 crashes its worker (as it would without
    // the test framework's handler).
    WorkerPool pool(1, [](std::size_t point) {
        if (point == 3) {
            std::signal(SIGABRT, SIG_DFL);
            std::abort();
        }
        return json{{"status", "ok"}, {"worker", ::getpid()}}.dump();
    });
    std::vector<std::size_t> order;
    std::map<std::size_t, json> results;
    pool.run({0, 1, 2, 3, 4, 5}, [](std::size_t p) { return p % 2 ? "odd" : "even"; }, [&](std::size_t p) { order.push_back(p); },
             [&](std::size_t p, json r) { results[p] = std::move(r); });
    CHECK_FALSE(pool.interrupted());
    CHECK(order == std::vector<std::size_t>{0, 2, 4, 1, 3, 5}); // one group, then the next
    REQUIRE(results.size() == 6);
    const json crashed = {{"status", "failed"}, {"error", fmt::format("the point's process died of signal {}", SIGABRT)}};
    CHECK(results.at(3) == crashed);
    // One worker ran every point before the crash, a new one every point after it.
    for (std::size_t p : {2, 4, 1})
        CHECK(results.at(p).at("worker") == results.at(0).at("worker"));
    CHECK(results.at(5).at("status") == "ok");
    CHECK(results.at(5).at("worker") != results.at(0).at("worker"));
    // The pool stays: a later run reuses the worker the last one left.
    pool.run({6}, [](std::size_t) { return "odd"; }, [](std::size_t) {}, [&](std::size_t p, json r) { results[p] = std::move(r); });
    CHECK(results.at(6).at("worker") == results.at(5).at("worker"));
    // A worker killed between points (the OOM killer, say) is replaced without costing a point.
    const pid_t killed = results.at(6).at("worker").get<pid_t>();
    ::kill(killed, SIGKILL);
    siginfo_t info = {};
    waitid(P_PID, id_t(killed), &info, WEXITED | WNOWAIT); // dead before the next point, not as it is handed one
    std::size_t calls = 0;
    pool.run({7}, [](std::size_t) { return "odd"; }, [](std::size_t) {}, [&](std::size_t p, json r) {
        ++calls;
        results[p] = std::move(r);
    });
    CHECK(calls == 1);
    CHECK(results.at(7).at("status") == "ok");
    CHECK(results.at(7).at("worker") != results.at(6).at("worker"));
}

TEST_CASE("A point stopped from outside has no result: the points in flight finish, no other starts", "[sim][sweep]")
{
    // Point 0 is stopped (SIGTERM to its worker) while point 1 runs on the other worker.
    WorkerPool pool(2, [](std::size_t point) {
        if (point == 0)
            ::kill(::getpid(), SIGTERM);
        usleep(300000);
        return json{{"status", "ok"}}.dump();
    });
    std::vector<std::size_t> started;
    std::map<std::size_t, json> results;
    auto done = [&](std::size_t p, json r) { results[p] = std::move(r); };
    pool.run({0, 1, 2, 3}, [](std::size_t p) { return std::to_string(p); }, [&](std::size_t p) { started.push_back(p); }, done);
    CHECK(pool.interrupted());
    CHECK(started == std::vector<std::size_t>{0, 1});
    REQUIRE(results.size() == 1);
    CHECK(results.at(1).at("status") == "ok");
    // The next run starts afresh (an MPI rank runs a point a run).
    pool.run({2}, [](std::size_t) { return ""; }, [](std::size_t) {}, done);
    CHECK_FALSE(pool.interrupted());
    CHECK(results.at(2).at("status") == "ok");
}

TEST_CASE("A sweep over timing values compiles once a worker and gives the rows of runs compiled from scratch", "[sim][sweep]")
{
    const fs::path dir = fs::temp_directory_path() / fmt::format("ipusim-sweep-cache-{}", ::getpid());
    fs::create_directories(dir);
    const fs::path file = dir / "timing.json";
    std::ofstream(file) << json{{"config", kRoot + "/configs/mnist/pipelined_2stage.json"},
                                {"axes", {{{"pointer", "/system/ipu/clock_hz"}, {"values", {1.0e9, 1.33e9}}},
                                          {{"pointer", "/system/ipu_link/bandwidth_bytes_per_second"}, {"values", {8.0e9, 32.0e9}}}}}};
    const Sweep sweep = Sweep::load(file.string());
    const SweepTally tally = runSweep(sweep, {(dir / "out").string(), 2, false});
    CHECK(tally.failed == 0);
    const std::size_t keys = inferencePhase(config::loadConfig(sweep.config)) ? 2 : 1; // training and inference
    CHECK(tally.compiled >= keys);
    CHECK(tally.compiled <= 2 * keys); // once a worker
    const auto rows = rowsOf(dir / "out" / "results.jsonl");
    REQUIRE(rows.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
        ChildProcess alone([&] { return simulatePoint(sweep.config, sweep.setsFor(i), sweep.file); });
        json expected = alone.wait();
        REQUIRE(expected.at("status") == "ok");
        json got = rows.at(i).at("summary");
        expected.at("summary").erase("simulator"); // wall times
        got.erase("simulator");
        INFO("point " << i);
        CHECK(got == expected.at("summary"));
    }
    // One worker, one schedule a compile key: a point that compiled again in its own process
    // (missing the worker's) would count too.
    const SweepTally one = runSweep(sweep, {(dir / "one").string(), 1, false});
    CHECK(one.failed == 0);
    CHECK(one.compiled == keys);
    fs::remove_all(dir);
}
