// SPDX-License-Identifier: MIT
// The bad-input catalogue: every value that once crashed the simulator, wrapped, hung or gave a
// result with exit 0 now ends in one exact error naming the file, the pointer and the range.
#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/sweep/Sweep.hpp"
#include "sim/sweep/Validate.hpp"
#include "Simulate.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace ipusim;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = IPUSIM_SOURCE_DIR;

/** A scratch folder for files a case needs, removed afterwards. */
struct Scratch
{
    fs::path path = fs::temp_directory_path() / ("ipusim_bad_input_" + std::to_string(::getpid()));
    Scratch() { fs::create_directories(path); }
    ~Scratch() { fs::remove_all(path); }
    std::string write(const std::string& name, const std::string& text) const
    {
        std::ofstream(path / name) << text;
        return (path / name).string();
    }
};

/** The error loading, compiling and simulating `file` with `sets` ends in, or "no error". */
std::string failureOf(const std::string& file, const std::vector<std::string>& sets = {}, EngineKind engine = EngineKind::Fast)
{
    try {
        RunRequest request{config::loadConfig(file, sets), {}};
        request.options.engine = engine;
        const RunOutcome r = run(std::move(request));
        return r.status == RunOutcome::Status::Ok ? "no error" : "out of memory";
    } catch (const config::ConfigError& e) {
        return e.what();
    }
}

std::string failureOfDoc(const json& doc, const std::vector<std::string>& sets = {})
{
    try {
        run(RunRequest{config::loadConfig(doc, kRoot + "/configs/case.json", sets), {}});
        return "no error";
    } catch (const config::ConfigError& e) {
        return e.what();
    }
}

const std::string kMnist = kRoot + "/configs/mnist/train.json";
const std::string kMlp = kRoot + "/configs/graph/mlp.json";

/** A schedule of one loop of `count` iterations: compute `cycles` on tile 0, then a sync. */
json loop(uint64_t count, uint64_t cycles, bool sync = true)
{
    json body = json::array({{{"op", "compute"}, {"name", "work"}, {"tiles", json::array({{{"tiles", {0, 0}}, {"cycles", cycles}}})}}});
    if (sync)
        body.push_back({{"op", "sync"}});
    return {{"system", {{"base", kRoot + "/configs/hardware/mk2.json"}}},
            {"workload", {{"kind", "schedule"}, {"steps", json::array({{{"op", "repeat"}, {"name", "loop"}, {"count", count}, {"body", body}}})}}}};
}

json vertexStep(const json& params)
{
    json d = loop(1, 1);
    d["workload"]["steps"] = json::array(
        {{{"op", "compute"}, {"name", "v"}, {"tiles", json::array({{{"tiles", {0, 0}}, {"vertices", json::array({{{"vertex", "MaxPooling"}, {"params", params}}})}}})}}});
    return d;
}

} // namespace

TEST_CASE("Bad input: integers beyond the simulator's 32-bit fields are rejected, not wrapped", "[bad-input]")
{
    CHECK(failureOf(kMnist, {"/system/ipu/columns=4294967296"}) ==
          "--set: /system/ipu/columns: expected integer, >= 1, <= 4294967295, found integer 4294967296");
    CHECK(failureOf(kMnist, {"/system/ipu/exchange/latency_base_cycles=4294967296"}) ==
          "--set: /system/ipu/exchange/latency_base_cycles: expected integer, >= 0, <= 4294967295, found integer 4294967296");
    CHECK(failureOf(kMnist, {"/run/gradient_accumulation=9223372036854775808"}) ==
          "--set: /run/gradient_accumulation: expected integer, >= 1, <= 4294967295, found integer 9223372036854775808");
    CHECK(failureOf(kMnist, {"/system/ipu/tiles=18446744073709551616"}) ==
          "--set: /system/ipu/tiles: expected integer, >= 1, <= 1048576, found number 1.8446744073709552e+19");
    CHECK(failureOf(kMnist, {"/system/ipu/tiles=-1"}) == "--set: /system/ipu/tiles: expected integer, >= 1, <= 1048576, found integer -1");
    CHECK(failureOf(kMnist, {"/system/ipu/tile_memory_bytes=4294967296"}) ==
          "--set: /system/ipu/tile_memory_bytes: expected integer, >= 1, <= 4294967295, found integer 4294967296");
    CHECK(failureOf(kMnist, {"/system/streaming_memory/bytes_per_ipu=1099511627777"}) ==
          "--set: /system/streaming_memory/bytes_per_ipu: expected integer, >= 0, <= 1099511627776, found integer 1099511627777");
    CHECK(failureOf(kRoot + "/configs/mnist/pipelined.json", {"/workload/strategy/stages/1/ipu=4294967297"}) ==
          "--set: /workload/strategy/stages/1/ipu: expected integer, >= 0, <= 4294967295, found integer 4294967297");
    // (2^62 + 4,096: the schema compares as doubles, whose step is 1,024 there.)
    CHECK(failureOfDoc(loop(4611686018427392000ull, 1)) ==
          kRoot + "/configs/case.json: /workload/steps/0/count: expected integer, >= 0, <= 4611686018427387904, found integer 4611686018427392000");
    // Fields read as 64 bits (a compiled schedule's cycles and samples, a trace window) take up to 2^62.
    CHECK(failureOfDoc(loop(1, 4611686018427392000ull)) ==
          kRoot + "/configs/case.json: /workload/steps/0/body/0/tiles/0/cycles: expected integer, >= 0, <= 4611686018427387904, found integer "
                  "4611686018427392000");
    CHECK(failureOf(kMnist, {"/run/trace/cycles=[5000000000,6000000000]"}) == "no error");
}

TEST_CASE("Bad input: float parameters outside their physical range", "[bad-input]")
{
    CHECK(failureOf(kMnist, {"/system/ipu/clock_hz=1e-300"}) ==
          "--set: /system/ipu/clock_hz: expected number, >= 1e6, <= 1e10, found number 1e-300");
    CHECK(failureOf(kMnist, {"/system/ipu/clock_hz=1e308"}) ==
          "--set: /system/ipu/clock_hz: expected number, >= 1e6, <= 1e10, found number 1e+308");
    CHECK(failureOf(kMnist, {"/system/host_link/bandwidth_bytes_per_second=1e-300"}) ==
          "--set: /system/host_link/bandwidth_bytes_per_second: expected number, >= 1e6, <= 1e15, found number 1e-300");
    CHECK(failureOf(kMnist, {"/system/ipu_link/bandwidth_bytes_per_second=1e20"}) ==
          "--set: /system/ipu_link/bandwidth_bytes_per_second: expected number, >= 1e6, <= 1e15, found number 1e+20");
    CHECK(failureOf(kMnist, {"/system/streaming_memory/bandwidth_bytes_per_second=0"}) ==
          "--set: /system/streaming_memory/bandwidth_bytes_per_second: expected number, >= 1e6, <= 1e15, found integer 0");
    CHECK(failureOf(kMnist, {"/system/external_sync/hop_seconds=1e300"}) ==
          "--set: /system/external_sync/hop_seconds: expected number, >= 1e-12, <= 0.001, found number 1e+300");
    CHECK(failureOf(kMnist, {"/system/host_link/efficiency=0.001"}) ==
          "--set: /system/host_link/efficiency: expected number, >= 0.01, <= 1, found number 0.001");
    CHECK(failureOf(kRoot + "/configs/resnet/resnet50_sgd_pod16.json", {"/workload/momentum=1"}) ==
          "--set: /workload/momentum: expected number, >= 0, < 1, found integer 1");
    // A key of two types (a number or a list per IPU) once made the message itself fail.
    CHECK(failureOf(kRoot + "/configs/bert/base_phase1_pod16.json", {"/workload/available_memory_proportion=\"x\""}) ==
          "--set: /workload/available_memory_proportion: expected number or array, > 0, <= 1, found string \"x\"");
}

TEST_CASE("Bad input: numbers a double cannot hold, nesting, and bases that are not objects or not files", "[bad-input]")
{
    Scratch dir;
    CHECK(failureOf(kMnist, {"/system/ipu/clock_hz=1e400"}) ==
          "--set: /system/ipu/clock_hz: the number 1e400 is out of range (a double holds magnitudes up to 1.8e308)");
    const std::string big = dir.write("big.json", R"({"workload": {"kind": "mnist"}, "run": {"gradient_accumulation": 1e400}})");
    CHECK(failureOf(big) == big + ": the number 1e400 is out of range (a double holds magnitudes up to 1.8e308)");
    std::string deep;
    for (int i = 0; i < 20000; ++i)
        deep += "{\"a\":";
    deep += "1" + std::string(20000, '}');
    const std::string deepFile = dir.write("deep.json", deep);
    std::string pointer;
    for (int i = 0; i < 128; ++i)
        pointer += "/a";
    CHECK(failureOf(deepFile) == deepFile + ": " + pointer + ": nested deeper than 128 levels of objects and arrays");
    const std::string deepList = std::string(130, '[') + "1" + std::string(130, ']');
    std::string listPointer = "/workload/x";
    for (int i = 0; i < 128; ++i)
        listPointer += "/0";
    CHECK(failureOf(kMnist, {"/workload/x=" + deepList}) == "--set: " + listPointer + ": nested deeper than 128 levels of objects and arrays");
    const std::string array = dir.write("array.json", "[1, 2]");
    const std::string includer = dir.write("includer.json", R"({"base": "array.json"})");
    CHECK(failureOf(includer) == array + ": expected a JSON object (a base is merged into the object that names it), found array");
    // A device never ends (reading /dev/zero used to run until memory ran out); a folder is not JSON.
    const std::string device = dir.write("device.json", R"({"base": "/dev/zero"})");
    CHECK(failureOf(device) == device + ": /base: /dev/zero: expected a JSON file, found a device or socket");
    const std::string folder = dir.write("folder.json", R"({"base": "."})");
    CHECK(failureOf(folder) == folder + ": /base: " + dir.path.string() + "/: expected a JSON file, found a directory");
}

TEST_CASE("Bad input: schedules whose time passes the simulator's clock fail before or while simulating", "[bad-input]")
{
    json nested = loop(4294967295, 1000, false);
    nested["workload"]["steps"][0]["body"] = json::array({loop(4294967295, 1000, false)["workload"]["steps"][0]});
    nested["workload"]["steps"][0]["name"] = "outer";
    CHECK(failureOfDoc(nested) == kRoot + "/configs/case.json: IPU 0 runs at least 2^62 = 4611686018427387904 cycles (\"outer\" in each of 1 host "
                                          "calls), past cycle 24534159804369, where SystemC's 64-bit femtosecond clock ends at 1.33 GHz: simulate "
                                          "fewer iterations, samples or steps");
    CHECK(failureOfDoc(loop(4294967295, 6000)) ==
          kRoot + "/configs/case.json: IPU 0 runs at least 25769803770000 cycles (\"loop\" in each of 1 host calls), past cycle 24534159804369, "
                  "where SystemC's 64-bit femtosecond clock ends at 1.33 GHz: simulate fewer iterations, samples or steps");
    // The lower bound (5,700 a step) passes; the sync after each step takes the run past the clock.
    CHECK(failureOfDoc(loop(4294967295, 5700)) ==
          kRoot + "/configs/case.json: IPU 0 would reach cycle 25022479454844 skipping a loop's iterations, past cycle 24534159804369, "
                  "where SystemC's 64-bit femtosecond clock ends at 1.33 GHz: simulate fewer iterations, samples or steps");
    // A data loader of 10 s a sample on an ideal host: the first call waits 4,000 x 10 s =
    // 53,200,000,000,000 cycles for its batch; every IPU reaches the clock's end as that call starts.
    CHECK(failureOfDoc({{"base", "mnist/pipelined.json"}, {"run", {{"data_loader", {{"sample_seconds", 10}}}}}}, {"/system/host=ideal"}) ==
          kRoot + "/configs/case.json: IPU 0 would reach cycle 53200000000000 at its next step, past cycle 24534159804369, "
                  "where SystemC's 64-bit femtosecond clock ends at 1.33 GHz: simulate fewer iterations, samples or steps");
    Scratch dir;
    const std::string longLoop = dir.write("long.json", loop(4294967295, 1).dump());
    CHECK(failureOf(longLoop, {}, EngineKind::Reference) ==
          longLoop + ": IPU 0 runs 8589934591 program steps; the reference engine records each one and takes runs of at most 2^24 = "
                     "16777216: use the fast engine");
    const std::string tooLong = dir.write("too_long.json", loop(4294967295, 2).dump());
    CHECK(failureOf(tooLong, {}, EngineKind::Reference) ==
          tooLong + ": IPU 0 runs at least 8589934590 cycles (\"loop\"); the reference engine ticks every cycle and takes runs of at most "
                    "2^32 = 4294967296: use the fast engine");
}

TEST_CASE("Bad input: vertex sizes past 32 bits or past what a tile holds", "[bad-input]")
{
    const std::string at = kRoot + "/configs/case.json: /workload/steps/0/tiles/0/vertices/0/params";
    CHECK(failureOfDoc(vertexStep({{"positions", uint64_t(1) << 62}})) ==
          at + "/positions: expected integer from 1 to 4294967295, found 4611686018427387904");
    CHECK(failureOfDoc(vertexStep({{"positions", 4294967295u}, {"channel_vectors", 4294967295u}})) ==
          at + ": the vertex's sizes (positions 4294967295 x channel_vectors 4294967295) multiply to 1.84e+19, above 2^40 = 1099511627776: a vertex "
               "works on what one tile holds");
    CHECK(failureOfDoc(vertexStep({{"positions", 144}, {"row_width", 12}, {"stride", 0}})) ==
          at + "/stride: expected integer from 1 to 4294967295, found 0");
    // Within the bound, a pooling vertex over 2^30 positions in rows of one is priced at once.
    json ok = vertexStep({{"positions", 1073741824}, {"row_width", 1}});
    CHECK(failureOfDoc(ok) == "no error");
}

TEST_CASE("Bad input: tensors past 2^40 elements", "[bad-input]")
{
    CHECK(failureOf(kMlp, {"/workload/graph/inputs/0/shape=[4294967295,4294967295,4294967295]"}) ==
          "--set: /workload/graph/inputs/0/shape: a micro-batch of 64 samples of shape [4294967295, 4294967295, 4294967295] has more "
          "than 2^40 elements");
    CHECK(failureOf(kMlp, {"/workload/graph/ops/0/out_features=4294967295"}) ==
          kMlp + ": /workload/graph/ops/0: tensor \"fc1.weight\" of shape [4294967295, 784] has more than 2^40 elements");
}

TEST_CASE("Bad input: --set into values that are not objects, past a list's end, and unknown presets", "[bad-input]")
{
    CHECK(failureOf(kMnist, {"/system/ipu/tiles/3=1"}) == "--set: /system/ipu/tiles/3: \"/system/ipu/tiles\" holds number 1472, not an object or a list");
    CHECK(failureOf(kMlp, {"/workload/graph/ops/9/name=x"}) ==
          "--set: /workload/graph/ops/9/name: \"/workload/graph/ops\" is a list of 5: expected an index below 5, or 5 or \"-\" to append, found \"9\"");
    CHECK(failureOf(kMnist, {"/system=pod17"}) == "--set: /system: unknown hardware preset \"pod17\" (presets: m2000, mk2, pod128, pod16, pod256, pod64; or give an object)");
    CHECK(failureOf(kMnist, {"/system/nope/tiles=5"}).find("--set: /system/nope: unknown key \"nope\"") == 0);
    CHECK(failureOf(kMnist, {"=5"}) == "--set: =5: expected /json/pointer=value");
    CHECK(failureOf(kMlp, {"/workload/graph/ops/-={\"name\": \"extra\", \"op\": \"relu\", \"inputs\": [\"fc3\"], \"ipu\": -1}"}) ==
          "--set: /workload/graph/ops/5/ipu: expected integer, >= 0, <= 4294967295, found integer -1"); // "-" appended as index 5
    CHECK(failureOf(kMnist, {"/workload/strategy/replicas=4"}) ==
          "--set: /workload/strategy/replicas: 4 replicas of 1 IPUs need 4 IPUs and must divide the system's 1");
}

TEST_CASE("Bad input: names that would leave out/ and errors that name the user's pointer", "[bad-input]")
{
    CHECK(failureOf(kMnist, {"/name=\"../x\""}) ==
          "--set: /name: expected string, matching ^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$, found string \"../x\"");
    CHECK(failureOf(kMnist, {"/name=42"}) == "--set: /name: expected string, matching ^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$, found integer 42");
    CHECK(config::safeName("../a b") == "x.._a_b");
    // The inference phase's /run/dataset_samples is the user's /inference/dataset_samples.
    CHECK(failureOf(kRoot + "/configs/mnist/pipelined.json", {"/inference/dataset_samples=1"}) ==
          "--set: /inference/dataset_samples: expected at least one host call's 800 samples, found 1");
}

TEST_CASE("Bad input: sweeps too large, badly named or with a bad fixed value fail before running", "[bad-input][sweep]")
{
    Scratch dir;
    auto sweep = [&](const json& doc) {
        const std::string file = dir.write("s.json", doc.dump());
        try {
            Sweep::load(file);
        } catch (const config::ConfigError& e) {
            return std::string(e.what()).substr(file.size() + 2);
        }
        return std::string("no error");
    };
    const json base = {{"config", kMnist}, {"axes", json::array({{{"pointer", "/run/gradient_accumulation"}, {"values", {1, 2}}}})}};
    json named = base;
    named["name"] = 42;
    CHECK(sweep(named) == "/name: expected a name for the results folder (letters, digits, '.', '_' and '-', starting with a letter or digit, at "
                          "most 100), found 42");
    named["name"] = "../escape";
    CHECK(sweep(named).find("/name: expected a name for the results folder") == 0);
    json range = base;
    range["axes"][0] = {{"pointer", "/run/gradient_accumulation"}, {"range", {{"from", 1}, {"to", 1e12}, {"step", 1}}}};
    CHECK(sweep(range) == "/axes/0/range: the range has 1e+12 values; a sweep takes at most 1000000");
    json log = base;
    log["axes"][0] = {{"pointer", "/system/ipu/clock_hz"}, {"log", {{"from", 1e6}, {"to", 1e9}, {"points", 1e9}}}};
    CHECK(sweep(log) == "/axes/0/log/points: expected an integer from 2 to 1000000, found 1000000000");
    json grid = base;
    grid["axes"] = json::array();
    for (int i = 0; i < 3; ++i)
        grid["axes"].push_back({{"pointer", "/run/gradient_accumulation"}, {"range", {{"from", 1}, {"to", 1000}, {"step", 1}}}});
    CHECK(sweep(grid) == "/axes: the axes make more than 1000000 points");
    json fixed = base;
    fixed["set"] = {{"/system/ipu/tiles", 0}};
    CHECK(sweep(fixed) == "set: /system/ipu/tiles: expected integer, >= 1, <= 1048576, found integer 0"); // "<file> /set: ..."
}

TEST_CASE("Bad input: a validation case that cannot load is bad input, not a result outside tolerance", "[bad-input]")
{
    Scratch dir;
    std::ostringstream out;
    auto validation = [&](const json& cases) {
        const std::string file = dir.write("v.json", json{{"cases", cases}}.dump());
        try {
            runValidation(file, 1, out);
        } catch (const config::ConfigError& e) {
            return std::string(e.what()).substr(file.size() + 2);
        }
        return std::string("no error");
    };
    const json missing = {{"config", "nowhere.json"}, {"metric", "/total_cycles"}, {"expected", 1}};
    CHECK(validation(json::array({missing})) ==
          "/cases/0/config: " + (dir.path / "nowhere.json").string() + ": cannot read file (No such file or directory)");
    json named = missing;
    named["name"] = 7;
    CHECK(validation(json::array({named})) == "/cases/0/name: expected a string, found 7");
    json set = {{"config", kMnist}, {"metric", "/total_cycles"}, {"expected", 1}, {"set", {{"/system/ipu/tiles", 0}}}};
    CHECK(validation(json::array({set})) == "/cases/0/config: " + dir.path.string() +
                                                "/v.json /cases/0/set: /system/ipu/tiles: expected integer, >= 1, <= 1048576, found integer 0");
}

TEST_CASE("Bad input: a bundled model that is nowhere names the folders looked in, and IPUSIM_MODELS_DIR is looked in first",
          "[bad-input][onnx]")
{
    const Scratch scratch;
    const std::string config = kRoot + "/configs/resnet/resnet50_pod16.json";
    const std::string missing = failureOf(config, {"/workload/file=\"bundled:no_such_model.onnx\""});
    CHECK_THAT(missing, Catch::StartsWith("--set: /workload/file: the bundled model \"no_such_model.onnx\" is in none of "));
    CHECK_THAT(missing, Catch::Contains("IPUSIM_MODELS_DIR names another folder"));
    CHECK(failureOf(config, {"/workload/file=\"bundled:../resnet50.onnx\""}) ==
          "--set: /workload/file: expected \"bundled:\" and the name of a model the build exports (such as "
          "\"bundled:resnet50.onnx\"), found \"bundled:../resnet50.onnx\"");
    // A folder of the user's own is looked in first: its file, not a valid model, is read.
    scratch.write("resnet50.onnx", "not a model");
    setenv("IPUSIM_MODELS_DIR", scratch.path.c_str(), 1);
    const std::string fromUsersFolder = failureOf(config);
    unsetenv("IPUSIM_MODELS_DIR");
    CHECK_THAT(fromUsersFolder, Catch::Contains("is not an ONNX model") && Catch::Contains((scratch.path / "resnet50.onnx").string()));
}
