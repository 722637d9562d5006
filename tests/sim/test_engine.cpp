// SPDX-License-Identifier: MIT
// Whole simulations through the SystemC model. ctest runs each case in its own process; a
// case that simulates twice relies on Simulation installing a fresh kernel context.
#include "Simulate.hpp"
#include "models/reference/ReferenceEngine.hpp"
#include "models/timing/LinkTiming.hpp"
#include "sim/engine/FitSearch.hpp"
#include "sim/engine/Simulation.hpp"
#include "sim/report/Summary.hpp"
#include "sim/trace/ChromeTrace.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

using namespace ipusim;
using json = nlohmann::json;

namespace {

using test::kRoot;
using test::simulate;
using test::simulateFile;

json simulateSteps(const json& steps)
{
    return test::simulateDoc({{"system", {{"base", "hardware/mk2.json"}}}, {"workload", {{"kind", "schedule"}, {"steps", steps}}}});
}

} // namespace

TEST_CASE("10,000 supersteps: compute, sync, exchange, by hand", "[sim]")
{
    json s = simulateFile("configs/schedules/superstep_loop.json");
    // per superstep: busiest tile 1,000 + sync 126 + exchange ceil(256/4) = 64 + latency 234
    CHECK(s["total_cycles"] == 10000ull * (1000 + 126 + 64 + 234));
    CHECK(s["breakdown"]["compute"] == 10000ull * 1000);
    CHECK(s["breakdown"]["sync"] == 10000ull * 126);
    CHECK(s["breakdown"]["exchange"] == 10000ull * (64 + 234));
    CHECK(s["ipus"][0]["exchange_bytes"] == 10000ull * 256 * 1472);
    CHECK(s["simulator"]["tile_supersteps"] == 10000ull * 1472);
    const json& b = s["tile_balance"][0];
    CHECK(b["busiest_tile_cycles"] == 1000);
    CHECK(b["mean_tile_cycles"].get<double>() == Approx((1468.0 * 1000 + 4 * 800) / 1472));
    // The program tree: one loop of 10,000 iterations holding the three steps, which took the
    // whole run (its iterations are skipped as identical, and still counted).
    const json& tree = s["program_tree"][0];
    CHECK(tree["main"]["steps"].empty());
    const json& loop = tree["main"]["loops"][0];
    CHECK(loop["loop"] == "loop");
    CHECK(loop["runs"] == 1);
    CHECK(loop["iterations"] == 10000);
    CHECK(loop["cycles"] == s["total_cycles"]);
    CHECK(loop["body"]["steps"] == json{{"compute", 1}, {"sync", 1}, {"exchange", 1}});
    CHECK(s["simulator"]["loop_iterations_skipped"].get<uint64_t>() > 9000);
}

TEST_CASE("Tiles run consecutive compute sets from their own ready time until a sync", "[sim]")
{
    json steps = json::array({
        {{"op", "compute"}, {"name", "a"}, {"tiles", json::array({{{"tiles", {0, 0}}, {"cycles", 100}}, {{"tiles", {1, 1}}, {"cycles", 10}}})}},
        {{"op", "compute"}, {"name", "b"}, {"tiles", json::array({{{"tiles", {0, 0}}, {"cycles", 10}}, {{"tiles", {1, 1}}, {"cycles", 200}}})}},
        {{"op", "sync"}},
    });
    json s = simulateSteps(steps);
    // tile 0 is done at 110, tile 1 at 210; the barrier releases 126 cycles after the last
    CHECK(s["total_cycles"] == 210 + 126);
    CHECK(s["breakdown"]["compute"] == 210);
}

TEST_CASE("Host call overhead: every IPU waits for the host before each host call, by hand", "[sim][host]")
{
    // The tutorial's first epoch on an ideal host: 15 host calls of 4,000 images on 4 IPUs. 1 ms
    // of host time a call is 1,330,000 cycles at 1.33 GHz, on each IPU, before each call.
    const std::vector<std::string> epoch{"/run/epochs=1", "/system/host=ideal"};
    json ideal = simulateFile("configs/mnist/pipelined.json", epoch);
    std::vector<std::string> slow(epoch);
    slow.push_back("/system/host/call_overhead_seconds=0.001");
    json s = simulateFile("configs/mnist/pipelined.json", slow);
    CHECK(ideal["breakdown"]["host_wait"] == 0);
    CHECK(s["total_cycles"] == ideal["total_cycles"].get<uint64_t>() + 15 * 1330000ull);
    CHECK(s["breakdown"]["host_wait"] == 4 * 15 * 1330000ull);
    CHECK(s["epochs"][0]["cycles"] == s["total_cycles"]);
    for (const char* k : {"compute", "sync", "exchange", "host", "ipu_copy"}) // the calls themselves are unchanged
        CHECK(s["breakdown"][k] == ideal["breakdown"][k]);
    CHECK(s["samples_per_second"].get<double>() < ideal["samples_per_second"].get<double>());
    CHECK(test::configErrorOf({{"base", "mnist/pipelined.json"}, {"system", {{"host", {{"call_overhead_seconds", -1}}}}}},
                              kRoot + "/configs/bad.json")
              .find("/system/host/call_overhead_seconds") != std::string::npos);
}

TEST_CASE("Host model: every summary names the one its values are, and --set /system/host=NAME sets them", "[sim][host]")
{
    const json ideal = simulateFile("configs/default.json");
    CHECK(ideal["host_model"] == json{{"name", "ideal"}, {"call_overhead_seconds", 0.0}, {"sync_latency_seconds", 0.0}});
    const std::vector<std::string> calibrated{"/system/host/cores=8", "/system/host=poptorch_calibrated"};
    const json c = simulateFile("configs/default.json", calibrated);
    CHECK(c["host_model"] == json{{"name", "poptorch_calibrated"}, {"call_overhead_seconds", 0.00626}, {"sync_latency_seconds", 0.000222}});
    std::ostringstream text;
    report::printSummary(text, c);
    CHECK_THAT(text.str(), Catch::Contains("\n  host model   poptorch_calibrated: 6.26 ms a host call, 222 us a host exchange\n"));
    // A host model sets its values and leaves the host's other keys as they were.
    CHECK(config::loadConfig(kRoot + "/configs/default.json", calibrated).doc["system"]["host"]["cores"] == 8);
    // Values of no model are named for what they are.
    CHECK(simulateFile("configs/default.json", {"/system/host=poptorch_calibrated", "/system/host/call_overhead_seconds=0.001"})
              ["host_model"]["name"] == "custom");
    CHECK_THROWS_WITH(config::loadConfig(kRoot + "/configs/default.json", {"/system/host=fast"}),
                      "--set: /system/host: unknown host model \"fast\" (host models: ideal, poptorch_calibrated; or give an object)");
}

TEST_CASE("Host calls: each starts when every IPU has ended the last one, by hand", "[sim][host]")
{
    // Two IPUs with no sync between them: IPU 0 computes 100 cycles a call, IPU 1 300. The host
    // runs the engine once a call, so IPU 0 waits 200 cycles before calls 2 and 3.
    auto program = [](int ipu, int cycles) {
        return json{{"ipu", ipu}, {"steps", {{{"op", "compute"}, {"name", "work"}, {"tiles", {{{"tiles", "all"}, {"cycles", cycles}}}}}}}};
    };
    json s = test::simulateDoc({{"system", {{"base", "hardware/m2000.json"}}},
                                {"workload", {{"kind", "schedule"}, {"programs", {program(0, 100), program(1, 300)}}}},
                                {"run", {{"host_calls", 3}}}});
    CHECK(s["total_cycles"] == 900);
    CHECK(s["ipus"][0]["cycles"] == 2 * 300 + 100);
    CHECK(s["ipus"][0]["breakdown"]["sync"] == 2 * 200);
    CHECK(s["ipus"][1]["breakdown"]["sync"] == 0);
    CHECK(s["host"]["calls"] == 3);
    CHECK(s["host"]["wait_cycles"] == 0);
    CHECK(s["host"]["waiting_for"] == "nothing");
}

TEST_CASE("Host data loader: a loader slower than the IPUs sets the pace, by hand", "[sim][host]")
{
    // The tutorial's first epoch: 15 calls of 4,000 images, 83,870,250 cycles on an ideal host
    // (5,591,350 a call, each alike).
    const std::vector<std::string> epoch{"/run/epochs=1", "/system/host=ideal"};
    const json ideal = simulateFile("configs/mnist/pipelined.json", epoch);
    REQUIRE(ideal["total_cycles"] == 83870250);
    CHECK(ideal["host"]["data_loader"]["batch_cycles"] == 0);
    auto with = [&](std::vector<std::string> sets) {
        sets.insert(sets.end(), epoch.begin(), epoch.end());
        return simulateFile("configs/mnist/pipelined.json", sets);
    };
    // Sync, no workers: the main process builds each batch (4,000 x 1 us = 5,320,000 cycles)
    // after the last call returns, in series with the IPUs.
    json s = with({"/run/data_loader/sample_seconds=1e-6"});
    CHECK(s["total_cycles"] == 83870250 + 15 * 5320000ull);
    CHECK(s["host"]["loader_wait_cycles"] == 15 * 5320000ull);
    CHECK(s["breakdown"]["host_wait"] == 4 * 15 * 5320000ull);
    CHECK(s["host"]["waiting_for"] == "data loader");
    for (const char* k : {"compute", "sync", "exchange", "host", "ipu_copy"}) // the calls themselves are unchanged
        CHECK(s["breakdown"][k] == ideal["breakdown"][k]);
    // Async, 16 workers, 0.1 us a sample: a batch takes 532,000 cycles, faster than a call, so
    // only the first call waits.
    s = with({"/run/data_loader/sample_seconds=1e-7", "/run/data_loader/workers=16", "/run/data_loader/mode=async"});
    CHECK(s["total_cycles"] == 83870250 + 532000);
    // Async, 2 workers, 5 us a sample: 26,600,000 cycles a batch, two at once. Batch 14, the
    // last, is worker 0's eighth: the last call starts at 8 x 26,600,000.
    s = with({"/run/data_loader/sample_seconds=5e-6", "/run/data_loader/workers=2", "/run/data_loader/mode=async"});
    CHECK(s["total_cycles"] == 8 * 26600000ull + 5591350);
    CHECK(s["host"]["data_loader"]["builders"] == 2);
    // Twice the workers on a host of 2 cores time-share them: 53,200,000 cycles a batch, four at
    // once. Batches 12 to 14 come together at 4 x 53,200,000, so the last call starts two calls
    // later: no faster than two workers, burstier.
    CHECK(with({"/run/data_loader/sample_seconds=5e-6", "/run/data_loader/workers=4", "/run/data_loader/mode=async",
                "/system/host/cores=2"})["total_cycles"] == 4 * 53200000ull + 3 * 5591350);
    CHECK(test::configErrorOf({{"base", "mnist/pipelined.json"}, {"run", {{"data_loader", {{"mode", "eager"}}}}}},
                              kRoot + "/configs/bad.json")
              .find("/run/data_loader/mode") != std::string::npos);
}

TEST_CASE("PopRun instances must share the replicas and the servers evenly", "[sim][host][bad-input]")
{
    const json pod16 = {{"base", "graph/mlp.json"},
                        {"system", {{"base", "hardware/pod16.json"}}},
                        {"workload", {{"strategy", {{"kind", "single"}, {"replicas", 16}}}}}};
    json three = pod16;
    three["run"]["instances"] = 3;
    CHECK(test::configErrorOf(three, kRoot + "/configs/bad.json").find("/run/instances: expected a divisor of the 16 replicas") !=
          std::string::npos);
    json uneven = pod16;
    uneven["run"]["instances"] = 2;
    uneven["system"]["host"]["servers"] = 4;
    CHECK(test::configErrorOf(uneven, kRoot + "/configs/bad.json").find("/run/instances: expected a multiple of the 4 host servers") !=
          std::string::npos);
}

TEST_CASE("Host data loader: more workers (up to the cores), more cores and cheaper samples never cost cycles", "[sim][host][metamorphic]")
{
    auto total = [](std::vector<std::string> sets) {
        sets.push_back("/run/epochs=1");
        return simulateFile("configs/mnist/pipelined.json", sets)["total_cycles"].get<uint64_t>();
    };
    uint64_t last = UINT64_MAX;
    // (More workers than cores time-share them and finish their batches together, later.)
    for (const char* workers : {"0", "1", "2", "4"}) {
        const uint64_t t = total({"/run/data_loader/sample_seconds=4e-6", std::string("/run/data_loader/workers=") + workers,
                                  "/system/host/cores=4"});
        CHECK(t <= last);
        last = t;
    }
    const std::vector<std::string> base{"/run/data_loader/sample_seconds=4e-6", "/run/data_loader/workers=3"};
    auto plus = [&](const std::string& set) {
        auto sets = base;
        sets.push_back(set);
        return total(sets);
    };
    CHECK(plus("/run/data_loader/mode=async") <= total(base));
    CHECK(plus("/system/host/cores=2") >= total(base));
    CHECK(plus("/run/data_loader/sample_seconds=1e-6") <= total(base));
}

TEST_CASE("Input dtype: images cross the host link in the loader's type and are cast on the IPU, by hand", "[sim][host]")
{
    // The tutorial's first epoch: 1,500 micro-batches of 40 images of 784 pixels stream into
    // IPU 0, each taking 2,000 cycles + bytes / (15.75 GB/s x 0.85 / 1.33 GHz) on the host link
    // (the gateway's link to the host made ideal here, so that it neither slows the images nor
    // makes them share it with IPU 3's labels).
    auto run = [](const char* dtype) {
        return simulateFile("configs/mnist/pipelined.json",
                            {"/run/epochs=1", std::string("/workload/input_dtype=") + dtype,
                             "/system/gateway_host_link/bandwidth_bytes_per_second=1e15", "/system/gateway_host_link/latency_cycles=0"});
    };
    auto castSet = [](const json& s) {
        for (const auto& cs : s["tile_balance"])
            if (cs["compute_set"] == "images.cast")
                return cs;
        return json();
    };
    const json fp32 = run("model"), fp16 = run("fp16"), u8 = run("uint8");
    CHECK(run("fp32")["total_cycles"] == fp32["total_cycles"]); // the model is fp32: "fp32" is "model"
    CHECK(fp32["ipus"][0]["host_bytes_to_ipu"] == 1500 * 40 * 784 * 4);
    CHECK(fp16["ipus"][0]["host_bytes_to_ipu"] == 1500 * 40 * 784 * 2);
    CHECK(u8["ipus"][0]["host_bytes_to_ipu"] == 1500 * 40 * 784);
    CHECK(fp32["ipus"][0]["breakdown"]["host"] == 1500 * (2000 + 12463)); // ceil(125,440 / 10.0658) = ceil(12,462.01)
    CHECK(fp16["ipus"][0]["breakdown"]["host"] == 1500 * (2000 + 6232));
    CHECK(u8["ipus"][0]["breakdown"]["host"] == 1500 * (2000 + 3116));
    CHECK(castSet(fp32).is_null());
    CHECK(castSet(fp16)["executions"] == 1500);
    CHECK(castSet(u8)["executions"] == 1500);
    // Host-bound on the transfer here, so the guide's advice holds: narrower inputs are faster.
    CHECK(u8["total_cycles"] < fp16["total_cycles"]);
    CHECK(fp16["total_cycles"] < fp32["total_cycles"]);
    CHECK(test::configErrorOf({{"base", "mnist/pipelined.json"}, {"workload", {{"input_dtype", "int4"}}}}, kRoot + "/configs/bad.json")
              .find("/workload/input_dtype") != std::string::npos);
}

TEST_CASE("Host transfers and repeats", "[sim]")
{
    json steps = json::array({
        {{"op", "repeat"}, {"count", 3}, {"body", json::array({
            {{"op", "host_transfer"}, {"name", "in"}, {"direction", "to_ipu"}, {"bytes", 1000000}},
            {{"op", "repeat"}, {"count", 0}, {"body", json::array({{{"op", "sync"}}})}},
        })}},
    });
    // Each 1 MB crosses the IPU's PCIe link (10.066 B/cycle) and its gateway's RoCE link to the
    // host (12.5 GB/s x 0.9 / 1.33 GHz = 8.4586 B/cycle, the narrower): ceil(118,222.2) cycles,
    // then both hops' latency, 2,000 + 2,660.
    json s = simulateSteps(steps);
    CHECK(s["total_cycles"] == 3 * (118223 + 4660));
    CHECK(s["breakdown"]["host"] == 3 * (118223 + 4660));
    CHECK(s["ipus"][0]["host_bytes_to_ipu"] == 3000000);
    CHECK(s["ipus"][0]["syncs"] == 0);
}

TEST_CASE("MNIST training: samples per host call and a full breakdown", "[sim][mnist]")
{
    json s = simulateFile("configs/mnist/train.json");
    CHECK(s["samples"] == 40 * 10 * 10);
    const json& b = s["breakdown"];
    CHECK(s["total_cycles"] == b["compute"].get<uint64_t>() + b["sync"].get<uint64_t>() + b["exchange"].get<uint64_t>() +
                                   b["host"].get<uint64_t>());
    for (const char* k : {"compute", "sync", "exchange", "host"})
        CHECK(b[k].get<uint64_t>() > 0);
    CHECK(s["memory"][0]["fits"] == true);
    // One weight update per device iteration: the AdamW sets run 10 times, the forward 100 times.
    for (const auto& cs : s["tile_balance"]) {
        const std::string name = cs["compute_set"];
        if (name == "layer3.weight.adamw")
            CHECK(cs["executions"] == 10);
        if (name == "layer1.conv")
            CHECK(cs["executions"] == 100);
    }
}

TEST_CASE("MNIST: more exchange bandwidth never costs cycles", "[sim][mnist][metamorphic]")
{
    json slow = simulateFile("configs/default.json");
    json fast = simulateFile("configs/default.json",
                             {"/system/ipu/exchange/send_bytes_per_cycle=8", "/system/ipu/exchange/recv_bytes_per_cycle=8"});
    CHECK(fast["breakdown"]["exchange"].get<uint64_t>() < slow["breakdown"]["exchange"].get<uint64_t>());
    CHECK(fast["total_cycles"].get<uint64_t>() <= slow["total_cycles"].get<uint64_t>());
}

TEST_CASE("MNIST: more tiles never raise the busiest tile's compute", "[sim][mnist][metamorphic]")
{
    uint64_t last = UINT64_MAX;
    for (int tiles : {184, 368, 736, 1472}) {
        json s = simulateFile("configs/default.json", {"/system/ipu/tiles=" + std::to_string(tiles)});
        const uint64_t compute = s["breakdown"]["compute"];
        INFO("tiles " << tiles << ": compute " << compute);
        CHECK(compute <= last);
        last = compute;
    }
}

TEST_CASE("An out-of-memory model stops compiling at the first IPU that does not fit", "[sim][bert]")
{
    // 32 BERT-Large layers a stage: IPU 0 (embeddings and heads) fits, IPU 1 does not.
    const std::string path = kRoot + "/configs/bert/large_phase1_pod16.json";
    const std::vector<std::string> sets = {R"(/workload/model={"layers":96})", "/workload/strategy/layers_per_ipu=[0,32,32,32]"};
    const Experiment e = buildExperiment(path, sets);
    REQUIRE(e.schedule.programs.size() == 2); // IPUs 2 and 3 were never compiled
    CHECK(e.memory.size() == 2);
    CHECK(e.ipusNotCompiled == std::vector<uint32_t>{2, 3});
    const MemoryAccount account = accountMemory(e);
    REQUIRE(account.firstOver == std::optional<std::size_t>(1));
    CHECK(account.memory[0]->fits());
    const json r = report::oomReport(e, account);
    REQUIRE(r["ipus"].size() == 1);
    CHECK(r["ipus"][0]["ipu"] == e.schedule.programs[1].ipu);
    CHECK(r["ipus"][0]["fits"] == false);
    CHECK(r["ipus_not_accounted"] == json({2, 3}));
    // Compiled whole (as `ipusim compile` writes it), every IPU is accounted: the report names
    // each that does not fit, IPU 1 with the very same figures.
    const Experiment whole = buildExperiment(config::loadConfig(path, sets), nullptr, false);
    REQUIRE(whole.schedule.programs.size() == 4);
    CHECK(whole.memory.size() == 4);
    CHECK(whole.ipusNotCompiled.empty());
    const json all = report::oomReport(whole, accountMemory(whole));
    REQUIRE(all["ipus"].size() == 3); // IPUs 1-3 each hold 32 layers
    CHECK(all["ipus"][0] == r["ipus"][0]);
    CHECK(all["ipus_not_accounted"].empty());
}

TEST_CASE("MNIST: a huge micro-batch does not fit", "[sim][mnist]")
{
    Experiment e = buildExperiment(kRoot + "/configs/mnist/oom.json");
    const MemoryAccount account = accountMemory(e);
    REQUIRE(account.firstOver == std::optional<std::size_t>(0));
    json r = report::oomReport(e, account);
    REQUIRE(r["ipus"].size() == 1);
    const json& worst = r["ipus"][0]["worst_tiles"][0];
    CHECK(worst["peak"].get<uint64_t>() > 638976);
    CHECK(worst["free"].get<int64_t>() < 0);
    CHECK_FALSE(worst["live"].empty());
    // Where it runs out first, and where the tiles over capacity peak: every one of them.
    const json& over = r["ipus"][0]["over_capacity"];
    CHECK(over["first"]["step"] == "layer1.conv");
    CHECK(over["first"]["over"].get<uint64_t>() == over["first"]["bytes"].get<uint64_t>() - 638976);
    uint32_t tiles = 0;
    for (const auto& p : over["peak_steps"])
        tiles += p["tiles"].get<uint32_t>();
    CHECK(tiles == r["ipus"][0]["tiles_over"].get<uint32_t>());
    CHECK(over["peak_steps"][0]["step"] == worst["peak_at"]);
}

TEST_CASE("Out of memory: the search names the largest micro-batch that fits, compiled and accounted", "[sim][mnist]")
{
    const Experiment e = buildExperiment(kRoot + "/configs/mnist/oom.json");
    const json fit = searchFit(e);
    REQUIRE(fit["found"] == true);
    const uint64_t k = fit["micro_batch"];
    CHECK(fit["sets"] == json({"/workload/micro_batch=" + std::to_string(k)}));
    auto fitsAt = [](uint64_t microBatch) {
        const std::vector<std::string> sets = {"/workload/micro_batch=" + std::to_string(microBatch)};
        return !firstProgramOver(config::loadConfig(kRoot + "/configs/mnist/oom.json", sets));
    };
    CHECK(fitsAt(k));
    CHECK_FALSE(fitsAt(k + 1)); // the largest: one more does not fit
    // Bisected: micro-batch 1, then about log2(20,000) more.
    CHECK(fit["checked"][0] == json({{"micro_batch", 1}, {"fits", true}}));
    CHECK(fit["checked"].size() <= 16);
}

TEST_CASE("Out of memory: the search tries sharding, then offloading, the optimizer state, in that order", "[sim]")
{
    // Replicated training of the tutorial's CNN at micro-batch 16, where (by the check given)
    // nothing fits without both, and then only up to micro-batch 6.
    const Experiment e = buildExperiment(kRoot + "/configs/graph/mnist.json",
                                         {"/workload/micro_batch=16", "/workload/strategy={\"kind\":\"single\",\"replicas\":2}",
                                          "/system/num_ipus=2"});
    std::vector<std::string> seen;
    const FitsCheck check = [&](const config::LoadedConfig& v) {
        const json& w = v.doc.at("workload");
        const bool both = w.at("offload_optimizer").get<bool>() && w.at("strategy").at("replicated_tensor_sharding").get<bool>();
        seen.push_back(std::to_string(w.at("micro_batch").get<uint64_t>()) + (both ? "+" : ""));
        return both && w.at("micro_batch").get<uint64_t>() <= 6 ? std::nullopt : std::optional<std::size_t>(0);
    };
    const json fit = searchFit(e, check);
    // As it is: 1 does not fit. Sharded: 1 does not fit. Both: 1, then bisecting 1..16: 9, 5, 7, 6.
    CHECK(seen == std::vector<std::string>{"1", "1", "1+", "9+", "5+", "7+", "6+"});
    REQUIRE(fit["found"] == true);
    CHECK(fit["micro_batch"] == 6);
    CHECK(fit["sets"] == json({"/workload/micro_batch=6", "/workload/strategy/replicated_tensor_sharding=true",
                               "/workload/offload_optimizer=true"}));
    const json none = searchFit(e, [](const config::LoadedConfig&) { return std::optional<std::size_t>(0); });
    CHECK(none["found"] == false);
    CHECK_THAT(none["next"].get<std::string>(), Catch::Contains("split the model over more IPUs"));
}

TEST_CASE("MNIST inference is forward only and returns every prediction", "[sim][mnist]")
{
    json s = simulateFile("configs/mnist/infer.json");
    CHECK(s["samples"] == 800);
    CHECK(s["ipus"][0]["host_bytes_from_ipu"] == 100 * 8 * 10 * 4);
    for (const auto& cs : s["tile_balance"])
        CHECK(cs["compute_set"].get<std::string>().find("grad") == std::string::npos);
}

TEST_CASE("Trace: IPU phase track plus tile tracks inside the requested window", "[sim][trace]")
{
    auto cfg = config::loadConfig(kRoot + "/configs/default.json", {"/run/trace/tiles=[2,5]", "/run/trace/cycles=[0,40000]"});
    Experiment e = buildExperiment(cfg);
    const std::string path = (std::filesystem::temp_directory_path() / ("ipusim_trace_" + std::to_string(::getpid()) + ".json")).string();
    {
        ChromeTrace trace(path, e.run.trace, e.system.ipu.clockHz, 1);
        Simulation sim(e, &trace);
        SimResult r = sim.run();
        trace.commit();
        CHECK(r.totalCycles > 40000);
    }
    std::ifstream in(path);
    const json t = json::parse(in);
    std::filesystem::remove(path);
    std::set<uint64_t> tiles;
    std::set<std::string> phases;
    uint64_t lastPhaseEnd = 0;
    for (const auto& ev : t.at("traceEvents")) {
        if (ev.at("ph") != "X")
            continue;
        if (ev.at("cat") == "pipeline")
            continue;
        if (ev.at("tid") == 0) {
            phases.insert(ev.at("cat").get<std::string>());
            const uint64_t start = ev.at("args").at("start_cycle");
            CHECK(start >= lastPhaseEnd); // phases on one track never overlap
            lastPhaseEnd = start + ev.at("args").at("cycles").get<uint64_t>();
        } else {
            const uint64_t tile = ev.at("tid").get<uint64_t>() - 16;
            tiles.insert(tile);
            CHECK(ev.at("ts").get<double>() <= 40.0); // started within cycles [0, 40000] (1 cycle = 1 ns)
        }
    }
    CHECK(phases == std::set<std::string>{"compute", "sync", "exchange", "host"});
    CHECK(tiles == std::set<uint64_t>{2, 3, 4, 5});
}

TEST_CASE("Two IPUs: copy over IPU-Links then an external sync, by hand", "[sim][multi]")
{
    json s = simulateFile("configs/schedules/two_ipu_copy.json");
    // IPU 0: 1,000 compute + (400 + 24,449) copy = 25,849; IPU 1: 500 + 24,849 = 25,349.
    // The barrier releases 40 cycles (2 IPUs) after the last arrival.
    CHECK(s["total_cycles"] == 25849 + 40);
    CHECK(s["ipus"][0]["breakdown"]["sync"] == 40);
    CHECK(s["ipus"][1]["breakdown"]["sync"] == 25889 - 25349);
    CHECK(s["ipus"][1]["cycles"] == 25889);
    CHECK(s["links"][0]["bytes"] == 1000000);
    CHECK(s["links"][0]["links"] == 4);
    CHECK(s["external_syncs"] == 1);
}

namespace {
/** Records phases and IPU-Link spans. */
struct CopyRecorder : PhaseRecorder
{
    void linkSpan(const std::string& lane, const std::string&, uint64_t start, uint64_t end, uint64_t) override
    {
        links.push_back({lane, start, end});
    }
    struct Span
    {
        std::string lane;
        uint64_t start, end;
        bool operator==(const Span& o) const { return lane == o.lane && start == o.start && end == o.end; }
    };
    std::vector<Span> links;
};
} // namespace

TEST_CASE("An IPU copy moves once both ends are there: the receiver waits for its sender", "[sim][multi]")
{
    // IPU 1 reaches its receive at 500, IPU 0 its send at 1,000: IPU 1 waits (sync) until
    // 1,000, then both copy for 400 + 24,449 cycles; the barrier releases 40 cycles later.
    {
        const Experiment e = buildExperiment(kRoot + "/configs/schedules/two_ipu_copy.json");
        CopyRecorder rec;
        Simulation sim(e, &rec);
        sim.run();
        const std::vector<PhaseRecord> ipu1{{1, PhaseKind::Compute, "other work", 0, 500},
                                            {1, PhaseKind::Sync, "from_ipu0 wait", 500, 1000},
                                            {1, PhaseKind::IpuCopy, "from_ipu0", 1000, 25849},
                                            {1, PhaseKind::Sync, "external sync", 25849, 25889}};
        const auto phases = rec.byIpu();
        CHECK(std::vector<PhaseRecord>(phases.end() - 4, phases.end()) == ipu1);
        CHECK(phases.at(1) == PhaseRecord{0, PhaseKind::IpuCopy, "to_ipu1", 1000, 25849});
        CHECK(rec.links == std::vector<CopyRecorder::Span>{{"IPU 0 -> IPU 1", 1000, 25849}});
    }
    // The sender waits for a late receiver the same way.
    const Experiment late = buildExperiment(
        config::loadConfig(kRoot + "/configs/schedules/two_ipu_copy.json", {"/workload/programs/1/steps/0/tiles/0/cycles=3000"}));
    CopyRecorder rec2;
    Simulation sim2(late, &rec2);
    const SimResult r = sim2.run();
    CHECK(rec2.byIpu().at(1) == PhaseRecord{0, PhaseKind::Sync, "to_ipu1 wait", 1000, 3000});
    CHECK(rec2.links == std::vector<CopyRecorder::Span>{{"IPU 0 -> IPU 1", 3000, 27849}});
    CHECK(r.totalCycles == 27849 + 40);
}

TEST_CASE("An IPU copy whose partner never comes is reported, not hung", "[sim][multi][errors]")
{
    // Two sends from IPU 0 to IPU 1, one receive on IPU 1: the second send has no partner.
    json copy = {{"op", "ipu_copy"}, {"name", "c"}, {"send", {{{"ipu", 1}, {"bytes", 64}}}}};
    json d = {{"system", {{"base", "hardware/m2000.json"}}},
              {"workload",
               {{"kind", "schedule"},
                {"programs", {{{"ipu", 0}, {"steps", {copy, copy}}},
                              {{"ipu", 1}, {"steps", {{{"op", "ipu_copy"}, {"name", "r"}, {"recv", {{{"ipu", 0}, {"bytes", 64}}}}}}}}}}}}};
    Experiment e = buildExperiment(config::loadConfig(d, kRoot + "/configs/unpaired.json"));
    Simulation sim(e);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("unpaired.json: /workload: IPU 0 waits at IPU copy \"c\" for the receive of IPU 1 "
                                                 "that pairs with its send to IPU 1, and it never comes (this is send 2 of "
                                                 "the edge from IPU 0 to IPU 1; IPU 1 listed 1)"));
    // A send with no receive on its peer at all is caught when the schedule is read.
    d["workload"]["programs"][1]["steps"] = json::array();
    CHECK_THROWS_WITH(buildExperiment(config::loadConfig(d, kRoot + "/configs/unpaired.json")),
                      Catch::Contains("unpaired.json: /workload/programs/0/steps/0/send/0/ipu: expected IPU 1's program to receive "
                                      "from IPU 0 in an IPU copy (\"recv\")"));
    d["workload"]["programs"][0]["steps"] = json::array();
    d["workload"]["programs"][1]["steps"] = {{{"op", "ipu_copy"}, {"name", "r"}, {"recv", {{{"ipu", 0}, {"bytes", 64}}}}}};
    CHECK_THROWS_WITH(buildExperiment(config::loadConfig(d, kRoot + "/configs/unpaired.json")),
                      Catch::Contains("/workload/programs/1/steps/0/recv/0/ipu: expected IPU 0's program to send to IPU 1"));
}

TEST_CASE("Both listings of an IPU-copy transfer must give the same bytes", "[sim][multi][errors]")
{
    json d = {{"system", {{"base", "hardware/m2000.json"}}},
              {"workload",
               {{"kind", "schedule"},
                {"programs", {{{"ipu", 0}, {"steps", {{{"op", "ipu_copy"}, {"name", "c"}, {"send", {{{"ipu", 1}, {"bytes", 64}}}}}}}},
                              {{"ipu", 1}, {"steps", {{{"op", "ipu_copy"}, {"name", "r"}, {"recv", {{{"ipu", 0}, {"bytes", 96}}}}}}}}}}}}};
    Experiment e = buildExperiment(config::loadConfig(d, kRoot + "/configs/bytes.json"));
    Simulation sim(e);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("bytes.json: /workload: transfer 1 from IPU 0 to IPU 1 is 64 bytes as IPU 0 sends it "
                                                 "(IPU copy \"c\") but 96 bytes as IPU 1 receives it (\"r\")"));
}

TEST_CASE("A byte mismatch names the transfer that disagrees, wherever the receiver arrives first", "[sim][multi][errors]")
{
    // One copy step lists two transfers on the same edge on both IPUs; the receiver is there
    // first, so both pairs are made when the sender arrives. The second disagrees.
    json send = {{"op", "ipu_copy"}, {"name", "c"}, {"send", {{{"ipu", 1}, {"bytes", 64}}, {{"ipu", 1}, {"bytes", 64}}}}};
    json recv = {{"op", "ipu_copy"}, {"name", "r"}, {"recv", {{{"ipu", 0}, {"bytes", 64}}, {{"ipu", 0}, {"bytes", 32}}}}};
    json late = {{"op", "compute"}, {"name", "late"}, {"tiles", {{{"tiles", "all"}, {"cycles", 1000}}}}};
    json d = {{"system", {{"base", "hardware/m2000.json"}}},
              {"workload", {{"kind", "schedule"},
                            {"programs", {{{"ipu", 0}, {"steps", {late, send}}}, {{"ipu", 1}, {"steps", {recv}}}}}}}};
    Experiment e = buildExperiment(config::loadConfig(d, kRoot + "/configs/bytes.json"));
    Simulation sim(e);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("transfer 2 from IPU 0 to IPU 1 is 64 bytes as IPU 0 sends it (IPU copy \"c\") but "
                                                 "32 bytes as IPU 1 receives it (\"r\")"));
}

TEST_CASE("A run stuck at a copy and at a sync reports both", "[sim][multi][errors]")
{
    // IPU 0 sends twice and IPU 1 receives once, then waits at an external sync IPU 0 never reaches.
    json copy = {{"op", "ipu_copy"}, {"name", "c"}, {"send", {{{"ipu", 1}, {"bytes", 64}}}}};
    json recv = {{"op", "ipu_copy"}, {"name", "r"}, {"recv", {{{"ipu", 0}, {"bytes", 64}}}}};
    json d = {{"system", {{"base", "hardware/m2000.json"}}},
              {"workload", {{"kind", "schedule"},
                            {"programs", {{{"ipu", 0}, {"steps", {copy, copy}}},
                                          {{"ipu", 1}, {"steps", {recv, {{"op", "sync"}, {"kind", "external"}}}}}}}}}};
    Experiment e = buildExperiment(config::loadConfig(d, kRoot + "/configs/stuck.json"));
    Simulation sim(e);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("IPU 0 waits at IPU copy \"c\"") &&
                                     Catch::Contains("; IPU 1 waits at an external sync the other IPUs never reach"));
}

TEST_CASE("Programs may sit on any IPUs of the system, not only the first ones", "[sim][multi]")
{
    // IPUs 0 and 2 of an M2000 copy and meet at an external sync; IPUs 1 and 3 are idle.
    json d = config::readJsonFile(kRoot + "/configs/schedules/two_ipu_copy.json");
    d["system"]["base"] = "hardware/m2000.json";
    d["workload"]["programs"][1]["ipu"] = 2;
    d["workload"]["programs"][0]["steps"][1]["send"][0]["ipu"] = 2;
    d["workload"]["programs"][1]["steps"][1]["recv"][0]["ipu"] = 0;
    Experiment e = buildExperiment(config::loadConfig(d, kRoot + "/configs/gap.json"));
    Simulation sim(e);
    // As two_ipu_copy: IPU 2 waits for the send over [500, 1000), both end the copy together and
    // meet at the 40-cycle external sync; only the route's time is IPU 0 -> 2's.
    const SimResult r = sim.run();
    const uint64_t copy = ipuLinkTransferCycles(e.system.topology, e.system.ipuLink, e.system.ipu.clockHz, 0, 2, 1000000);
    CHECK(r.totalCycles == 1000 + copy + 40);
    REQUIRE(sim.ipus().size() == 2);
    CHECK(std::string(sim.ipus()[1]->name()) == "ipu2");
    CHECK(sim.ipus()[1]->breakdown()[PhaseKind::Sync] == 500 + 40);
}

TEST_CASE("An external sync one IPU never reaches is reported, not hung", "[sim][multi][errors]")
{
    json d = {{"system", {{"base", "hardware/m2000.json"}}},
              {"workload", {{"kind", "schedule"}, {"programs", {{{"ipu", 0}, {"steps", {{{"op", "sync"}, {"kind", "external"}}}}},
                                                                {{"ipu", 1}, {"steps", json::array()}}}}}}};
    auto cfg = config::loadConfig(d, kRoot + "/configs/deadlock.json");
    Experiment e = buildExperiment(cfg);
    Simulation sim(e);
    CHECK_THROWS_WITH(sim.run(), Catch::Contains("/workload: IPU 0 waits at an external sync the other IPUs never reach"));
}

TEST_CASE("Replication changes collectives and throughput, never a replica's compute", "[sim][replicas][metamorphic]")
{
    // Per host call: with more replicas an epoch needs fewer host calls.
    const std::vector<std::string> oneCall{"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1"};
    auto with = [&](std::vector<std::string> sets) {
        sets.insert(sets.end(), oneCall.begin(), oneCall.end());
        return simulateFile("configs/mnist/pipelined_pod16.json", sets);
    };
    json one = with({"/workload/strategy/replicas=1"});
    json four = with({});
    for (int ipu = 0; ipu < 4; ++ipu) {
        CHECK(four["ipus"][ipu]["breakdown"]["compute"] == one["ipus"][ipu]["breakdown"]["compute"]);
        CHECK(four["ipus"][ipu]["breakdown"]["exchange"] == one["ipus"][ipu]["breakdown"]["exchange"]);
    }
    CHECK(one["breakdown"]["collective"] == 0);
    CHECK(four["breakdown"]["collective"].get<uint64_t>() > 0);
    CHECK(four["samples"] == 4 * one["samples"].get<uint64_t>());
    CHECK(four["samples_per_second"].get<double>() > 3 * one["samples_per_second"].get<double>());
    json sharded = with({"/workload/strategy/replicated_tensor_sharding=true"});
    CHECK(sharded["memory"][0]["bytes_by_kind"]["optimizer state"].get<uint64_t>() <
          four["memory"][0]["bytes_by_kind"]["optimizer state"].get<uint64_t>());
}

TEST_CASE("Offloading the optimizer state trades tile memory for Streaming Memory time", "[sim][offload]")
{
    const std::vector<std::string> oneCall{"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1"};
    json onChip = simulateFile("configs/mnist/pipelined.json", oneCall);
    json offload = simulateFile("configs/mnist/offload_optimiser.json", oneCall);
    CHECK(onChip["breakdown"]["streaming_memory"] == 0);
    CHECK(offload["breakdown"]["streaming_memory"].get<uint64_t>() > 0);
    CHECK(offload["total_cycles"].get<uint64_t>() > onChip["total_cycles"].get<uint64_t>());
    for (int ipu = 0; ipu < 4; ++ipu) {
        CHECK(offload["memory"][ipu]["always_live"]["total"].get<uint64_t>() < onChip["memory"][ipu]["always_live"]["total"].get<uint64_t>());
        // AdamW keeps two fp32 moments per weight: loaded and stored once per weight update.
        CHECK(offload["ipus"][ipu]["streaming_memory_bytes_loaded"] == offload["ipus"][ipu]["streaming_memory_bytes_stored"]);
    }
    // Layer 3's weights (320 x 256 + 256) sit on IPU 2: two fp32 moments, 10 updates.
    CHECK(offload["ipus"][2]["streaming_memory_bytes_loaded"] == 10ull * 2 * 4 * (320 * 256 + 256));
}

TEST_CASE("Epochs: host calls per epoch from the dataset, identical epochs", "[sim][epochs]")
{
    json s = simulateFile("configs/mnist/pipelined.json", {"/run/epochs=2"});
    // 60,000 images / (40 x 10 x 10) = 15 host calls per epoch
    REQUIRE(s["epochs"].size() == 2);
    CHECK(s["run"]["host_calls"] == 30);
    CHECK(s["epochs"][0]["samples"] == 60000);
    CHECK(s["epochs"][0]["cycles"] == s["epochs"][1]["cycles"]);
    REQUIRE(s["epochs"][0]["ipu_compute_share"].size() == 4);
    CHECK(s["epochs"][0]["ipu_compute_share"] == s["epochs"][1]["ipu_compute_share"]);
    // The first stage (B1, the first convolution and its gradients) computes more than the last.
    CHECK(s["epochs"][0]["ipu_compute_share"][0].get<double>() > s["epochs"][0]["ipu_compute_share"][3].get<double>());
    CHECK(s["total_cycles"] == 2 * s["epochs"][0]["cycles"].get<uint64_t>());
    const std::string root = IPUSIM_SOURCE_DIR;
    CHECK_THROWS_WITH(buildExperiment(root + "/configs/mnist/pipelined.json", {"/run/dataset_samples=1000"}),
                      Catch::Contains("/run/dataset_samples: expected at least one host call's 4000 samples, found 1000"));
    CHECK_THROWS_WITH(buildExperiment(root + "/configs/default.json", {"/run/epochs=3"}),
                      Catch::Contains("/run/epochs: expected 1 unless /run/dataset_samples"));
}

namespace {

/** The Perfetto trace of a run of `e` on 4 IPUs, written to a temporary file and read back. */
json traceOf(const Experiment& e)
{
    const std::string path = (std::filesystem::temp_directory_path() / ("ipusim_trace_" + std::to_string(::getpid()) + ".json")).string();
    {
        ChromeTrace trace(path, e.run.trace, e.system.ipu.clockHz, 4);
        Simulation sim(e, &trace);
        sim.run();
        trace.commit();
    }
    std::ifstream in(path);
    const json t = json::parse(in);
    std::filesystem::remove(path);
    return t;
}

} // namespace

TEST_CASE("Trace of a pipeline: stage slices with micro-batches, link transfers and rings", "[sim][trace][pipeline]")
{
    Experiment e = buildExperiment(kRoot + "/configs/mnist/pipelined_pod16.json",
                                   {"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1", "/run/device_iterations=1"});
    const json t = traceOf(e);
    std::vector<std::string> ipu0;
    std::set<std::string> links;
    for (const auto& ev : t.at("traceEvents")) {
        if (ev.at("ph") != "X")
            continue;
        if (ev.at("pid") == 0 && ev.at("tid") == 1)
            ipu0.push_back(ev.at("name"));
        if (ev.at("cat") == "link")
            links.insert(ev.at("name"));
    }
    // Grouped, 4 IPUs, 10 micro-batches: IPU 0 forwards 0..5 alone, then in cycle 6 forwards 6
    // and runs the backward of micro-batch 0.
    REQUIRE(ipu0.size() > 16);
    CHECK(ipu0[0] == "forward 0");
    CHECK(ipu0[10] == "forward 5");
    CHECK(ipu0[12] == "forward 6");
    CHECK(ipu0[14] == "restore 0");
    CHECK(ipu0[15] == "backward 0");
    CHECK(ipu0.back() == "update");
    CHECK(links == std::set<std::string>{"pipeline copy", "gradients all-reduce"});
}

TEST_CASE("Trace of the host: each loader worker's batches and each call's dispatch on tracks of their own", "[sim][trace][host]")
{
    // 2 async workers at 1 ms a sample on 4,000-sample calls: 4 s a batch, worker k mod 2 builds
    // batch k; then 1 ms of dispatch before each of the 3 calls.
    Experiment e = buildExperiment(kRoot + "/configs/mnist/pipelined.json",
                                   {"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=3", "/run/data_loader/workers=2",
                                    "/run/data_loader/mode=async", "/run/data_loader/sample_seconds=1e-3",
                                    "/system/host/call_overhead_seconds=1e-3"});
    const json t = traceOf(e);
    std::map<uint64_t, std::string> tracks; // tid -> name, in the host's process (after the IPUs and their links)
    std::vector<json> spans;
    for (const auto& ev : t.at("traceEvents")) {
        if (ev.at("pid") != 5)
            continue;
        if (ev.at("ph") == "M" && ev.at("name") == "thread_name")
            tracks[ev.at("tid")] = ev.at("args").at("name");
        if (ev.at("ph") == "X")
            spans.push_back(ev);
    }
    CHECK(tracks == std::map<uint64_t, std::string>{{0, "loader worker 0"}, {1, "dispatch"}, {2, "loader worker 1"}});
    const uint64_t batch = 4000ull * 1330000, dispatch = 1330000;
    REQUIRE(spans.size() == 6);
    CHECK((spans[0].at("name") == "batch 1" && spans[0].at("tid") == 0 && spans[0].at("args").at("start_cycle") == 0));
    CHECK(spans[0].at("args").at("cycles") == batch);
    CHECK((spans[1].at("name") == "host call 1" && spans[1].at("args").at("start_cycle") == batch));
    CHECK(spans[1].at("args").at("cycles") == dispatch);
    CHECK((spans[2].at("name") == "batch 2" && spans[2].at("tid") == 2 && spans[2].at("args").at("start_cycle") == 0));
    CHECK((spans[4].at("name") == "batch 3" && spans[4].at("tid") == 0 && spans[4].at("args").at("start_cycle") == batch));
}

TEST_CASE("Output modes decide what goes back to the host", "[sim][outputs]")
{
    // Training outputs: the loss (4 B) and the logits (40 x 10 x 4 B) of a micro-batch; a host
    // call runs 10 x 10 micro-batches.
    const uint64_t perStore = 4 + 40 * 10 * 4;
    auto fromIpu = [&](const std::string& config, const std::string& mode, int ipu, std::vector<std::string> extra = {}) {
        extra.push_back("/workload/output_mode=" + mode);
        extra.push_back("/run/dataset_samples=0");
        extra.push_back("/run/epochs=1");
        extra.push_back("/run/host_calls=1");
        return simulateFile(config, extra)["ipus"][ipu]["host_bytes_from_ipu"].get<uint64_t>();
    };
    for (auto [config, ipu] : {std::pair{std::string("configs/mnist/train.json"), 0}, std::pair{std::string("configs/mnist/pipelined.json"), 3}}) {
        INFO(config);
        CHECK(fromIpu(config, "all", ipu) == 100 * perStore);
        CHECK(fromIpu(config, "final", ipu) == perStore);
        CHECK(fromIpu(config, "default", ipu) == perStore);
        CHECK(fromIpu(config, "sum", ipu) == perStore);
        CHECK(fromIpu(config, "every_n", ipu, {"/workload/output_return_period=3"}) == 33 * perStore);
    }
    json sum = simulateFile("configs/mnist/train.json", {"/workload/output_mode=sum"});
    bool summed = false;
    for (const auto& cs : sum["tile_balance"])
        if (cs["compute_set"] == "output sum") {
            summed = true;
            CHECK(cs["executions"] == 100);
        }
    CHECK(summed);
}

TEST_CASE("IO tiles prefetch inputs while the other tiles compute", "[sim][io]")
{
    json plain = simulateFile("configs/mnist/train.json");
    json io = simulateFile("configs/mnist/train.json", {"/workload/io_tiles=64"});
    // Same data over the host link; only the first micro-batch's wait shows.
    CHECK(io["ipus"][0]["host_bytes_to_ipu"] == plain["ipus"][0]["host_bytes_to_ipu"]);
    CHECK(io["breakdown"]["host"].get<uint64_t>() * 20 < plain["breakdown"]["host"].get<uint64_t>());
    CHECK(io["total_cycles"].get<uint64_t>() < plain["total_cycles"].get<uint64_t>());
    CHECK(io["memory"][0]["bytes_by_kind"]["io tiles"].get<uint64_t>() == 2 * (40 * 784 * 4 + 40 * 4));
    CHECK_THROWS_WITH(buildExperiment(kRoot + "/configs/mnist/train.json", {"/workload/io_tiles=20"}),
                      Catch::Contains("/workload/io_tiles: expected 0 or an even number from 32 to 192"));
}

TEST_CASE("Recomputation trades stash memory for compute", "[sim][recompute]")
{
    const std::vector<std::string> oneCall{"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1"};
    auto run = [&](const char* mode) {
        std::vector<std::string> sets(oneCall);
        sets.push_back(std::string("/workload/recompute=") + mode);
        return simulateFile("configs/mnist/pipelined.json", sets);
    };
    json keep = run("none"), again = run("checkpoints");
    for (int ipu = 0; ipu < 3; ++ipu)
        CHECK(again["memory"][ipu]["bytes_by_kind"]["stash"].get<uint64_t>() < keep["memory"][ipu]["bytes_by_kind"]["stash"].get<uint64_t>());
    // Stage 0 keeps only its input: 7 micro-batches of 40 images (fp32) per tile-linear layout.
    CHECK(again["memory"][0]["bytes_by_kind"]["stash"] == 7ull * 40 * 784 * 4);
    CHECK(again["breakdown"]["compute"].get<uint64_t>() > keep["breakdown"]["compute"].get<uint64_t>());
    CHECK(again["ipus"][3]["breakdown"]["compute"] == keep["ipus"][3]["breakdown"]["compute"]); // the last stage keeps nothing
}

TEST_CASE("Phased execution streams each phase's weights, parallel phases overlap the loads", "[sim][phased]")
{
    const std::vector<std::string> oneCall{"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1"};
    json serial = simulateFile("configs/mnist/phased_serial.json", oneCall);
    json parallel = simulateFile("configs/mnist/phased_parallel.json", oneCall);
    CHECK(serial["ipus"].size() == 1);
    CHECK(parallel["ipus"].size() == 2);
    // The same traffic to and from Streaming Memory, but the parallel run hides loads.
    uint64_t serialLoaded = serial["ipus"][0]["streaming_memory_bytes_loaded"];
    uint64_t parallelLoaded = parallel["ipus"][0]["streaming_memory_bytes_loaded"].get<uint64_t>() +
                              parallel["ipus"][1]["streaming_memory_bytes_loaded"].get<uint64_t>();
    CHECK(serialLoaded == parallelLoaded);
    CHECK(parallel["total_cycles"].get<uint64_t>() < serial["total_cycles"].get<uint64_t>());
    // Weights are loaded for every forward and backward turn of each of the 100 micro-batches,
    // and once more per weight update (10 updates).
    const uint64_t weights = 4ull * (10 * 25 + 10 + 20 * 10 * 25 + 20 + 320 * 256 + 256 + 256 * 10 + 10);
    CHECK(serialLoaded > weights * (2 * 100 + 10));
    // Weights are not resident: none are always live.
    for (const auto& t : serial["memory"][0]["worst_tiles"][0]["live"])
        if (t["kind"] == "weight")
            CHECK_FALSE(t["always_live"].get<bool>());
    CHECK_THROWS_WITH(buildExperiment(kRoot + "/configs/mnist/phased_parallel.json", {"/system/num_ipus=1"}),
                      Catch::Contains("/workload/strategy/phased: expected \"serial\": parallel phases need 2 IPUs"));
}

TEST_CASE("Skipping identical loop iterations changes no figure", "[sim][fast-forward]")
{
    // Every figure but the simulator's own must match simulating each iteration.
    auto run = [](const std::string& file, const std::vector<std::string>& sets, bool everyIteration) {
        Experiment e = buildExperiment(config::loadConfig(kRoot + "/" + file, sets));
        Simulation sim(e);
        if (everyIteration)
            sim.simulateEveryIteration();
        json s = report::summary(e, sim, sim.run());
        const uint64_t skipped = s["simulator"]["loop_iterations_skipped"];
        s.erase("simulator");
        return std::make_pair(s, skipped);
    };
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
        {"configs/mnist/train.json", {}},
        {"configs/mnist/pipelined.json", {}},
        // Interleaved (1F1B): the steady state alternates two steps, a loop of both. One device
        // iteration, so that only the pipeline's own loops can skip (and the test fail without).
        {"configs/mnist/pipelined.json",
         {"/workload/strategy/schedule=\"interleaved\"", "/run/gradient_accumulation=24", "/run/device_iterations=1"}},
        {"configs/mnist/pipelined.json", {"/workload/strategy/schedule=\"sequential\"", "/run/device_iterations=1"}},
        {"configs/mnist/pipelined_pod16.json", {"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=2"}},
        {"configs/mnist/phased_parallel.json", {}},
        // (on an ideal host: a host exchange's latency makes each prefetch's wait differ)
        {"configs/mnist/offload_optimiser.json", {"/workload/io_tiles=64", "/system/host=ideal"}},
        {"configs/bert/base_phase1_pod16.json", {"/run/gradient_accumulation=40", "/run/device_iterations=3"}},
        {"configs/bert/large_squad_infer_m2000.json", {}},
    };
    for (const auto& [file, sets] : cases) {
        INFO(file);
        const auto fast = run(file, sets, false), slow = run(file, sets, true);
        CHECK(fast.second > 0);
        CHECK(slow.second == 0);
        CHECK(fast.first == slow.first);
    }
}

TEST_CASE("Statistics: registered once with name, unit and meaning, the summary reports each by its name", "[sim][stats]")
{
    const Experiment e = buildExperiment(kRoot + "/configs/mnist/train.json");
    Simulation sim(e);
    const SimResult r = sim.run();
    const json s = report::summary(e, sim, r);
    const Ipu& ipu = *sim.ipus().at(0);
    std::set<std::string> names;
    for (const StatGroup* group : ipu.statGroups())
        for (const Stat& stat : group->stats()) {
            INFO(stat.name);
            CHECK(names.insert(stat.name).second);
            CHECK_FALSE(stat.unit.empty());
            CHECK_FALSE(stat.description.empty());
            CHECK(s.at("ipus").at(0).at(stat.name) == stat.value());
        }
    // The per-IPU figures are the registered statistics plus the derived ones, nothing else.
    CHECK(s.at("ipus").at(0).size() == names.size() + 4); // ipu, cycles, breakdown, tile_utilisation
    for (const char* counted : {"compute_sets_run", "exchange_bytes", "exchange_phases", "syncs", "host_bytes_to_ipu"})
        CHECK(names.count(counted) == 1);
    CHECK(s.at("ipus").at(0).at("compute_sets_run").get<uint64_t>() > 0);
}

TEST_CASE("Op types: layers of one kind share a row, and their FLOPs add up to the model's", "[sim][op-types]")
{
    // MNIST without recomputation: every matmul and convolution runs once per sample and pass,
    // so the op types' FLOPs are the model FLOPs exactly.
    for (const char* config : {"configs/mnist/train.json", "configs/graph/mlp.json"}) {
        INFO(config);
        const json s = test::simulateFile(config);
        double flops = 0, share = 0;
        uint64_t cycles = 0;
        for (const auto& row : s.at("op_types")) {
            flops += row.at("flops").get<double>();
            share += row.at("share_of_compute").get<double>();
            cycles += row.at("phase_cycles").get<uint64_t>();
        }
        CHECK(flops == Approx(s.at("flops").at("model_flops").get<double>()).epsilon(1e-12));
        CHECK(share == Approx(1.0));
        uint64_t balanceCycles = 0; // the same compute sets, one row each
        for (const auto& row : s.at("tile_balance"))
            balanceCycles += row.at("phase_cycles").get<uint64_t>();
        CHECK(cycles == balanceCycles);
    }
    // BERT-Base (micro-batch 32, sequence 128, hidden 768, FFN 3,072): its 12 layers'
    // feed-forward matmuls are one row; checkpoint recomputation compiles each layer's forward
    // twice, so the row holds 2 x 12 compute sets, each execution 2 x 32 x 128 x 768 x 3,072 FLOPs.
    const json bert = test::simulateFile("configs/bert/base_phase1_pod16.json", {"/run/host_calls=1"});
    const auto& rows = bert.at("op_types");
    const auto ffn = std::find_if(rows.begin(), rows.end(), [](const json& r) { return r.at("op_type") == "layer*.ffn.intermediate"; });
    REQUIRE(ffn != rows.end());
    const uint64_t executions = ffn->at("executions");
    CHECK(ffn->at("compute_sets") == 24);
    CHECK(ffn->at("flops").get<double>() == Approx(double(executions) * 2 * 32 * 128 * 768 * 3072));
}
