// SPDX-License-Identifier: MIT
// Configuration: composition, overrides, defaults and every kind of bad input.
#include "models/hw/ParamFields.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/Schema.hpp"
#include "sim/config/ExperimentSpec.hpp"
#include "sim/engine/Experiment.hpp"
#include "sim/sweep/Sweep.hpp"
#include "Simulate.hpp"

#include <catch2/catch.hpp>

#include <set>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <unistd.h>

using namespace ipusim;
using config::ConfigError;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = IPUSIM_SOURCE_DIR;

json minimal()
{
    return json::parse(R"({"system": {"base": "hardware/mk2.json"},
                           "workload": {"kind": "mnist"}})");
}

std::string errorOf(const json& doc, const std::vector<std::string>& sets = {})
{
    try {
        config::loadConfig(doc, kRoot + "/configs/test.json", sets);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

struct TempDir
{
    fs::path path;
    TempDir()
    {
        path = fs::temp_directory_path() / ("ipusim_test_" + std::to_string(::getpid()));
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
    std::string write(const std::string& name, const std::string& text) const
    {
        std::ofstream(path / name) << text;
        return (path / name).string();
    }
};

/** The value of every scalar parameter field of `s`, by its pointer in a config. */
std::map<std::string, json> fieldsOf(const SystemParams& s)
{
    std::map<std::string, json> out;
    forEachParam(s, "/system", [&](const std::string& pointer, const char*, const auto& field) { out[pointer] = field; });
    return out;
}

/** The schema's declaration of the config key at `pointer`. */
const json& schemaAt(const std::string& pointer)
{
    const json* node = &config::Schema::instance().root();
    std::istringstream keys(pointer.substr(1));
    for (std::string key; std::getline(keys, key, '/');)
        node = &node->at("properties").at(key);
    return *node;
}

/** The C++ field the schema names ("x-cpp-field") of each scalar key below `node`, by pointer. */
void cppFieldsOf(const json& node, const std::string& pointer, std::map<std::string, std::string>& out)
{
    if (node.contains("properties"))
        for (const auto& [key, sub] : node.at("properties").items())
            cppFieldsOf(sub, pointer + "/" + key, out);
    else if (node.contains("x-cpp-field"))
        out[pointer] = node.at("x-cpp-field").get<std::string>();
}

/** A value the key `node` declares accepts, other than its default. */
json otherThanDefault(const json& node)
{
    const json& d = node.at("default");
    if (d.is_boolean())
        return !d.get<bool>();
    if (node.at("type") == "integer") {
        const uint64_t above = d.get<uint64_t>() + 1;
        return node.contains("maximum") && above > node.at("maximum").get<uint64_t>() ? d.get<uint64_t>() - 1 : above;
    }
    const double v = d.get<double>();
    return v == 0 ? node.value("maximum", 1.0) / 2 : v * 0.75; // every minimum is far below 0.75 x its default
}

} // namespace

TEST_CASE("Config: base composition, defaults and overrides", "[config]")
{
    auto cfg = config::loadConfig(minimal(), kRoot + "/configs/test.json", {"/system/ipu/tiles=736", "/workload/mode=infer"});
    CHECK(cfg.doc["system"]["ipu"]["tiles"] == 736);
    CHECK(cfg.doc["system"]["ipu"]["tile_memory_bytes"] == 638976);  // from the base file
    CHECK(cfg.doc["workload"]["mode"] == "infer");                  // bare word read as a string
    CHECK(cfg.doc["workload"]["micro_batch"] == 40);                // schema default
    CHECK(cfg.doc["run"]["device_iterations"] == 1);
    CHECK(cfg.name == "test");
    CHECK(cfg.fileOf("/system/ipu/clock_hz") == kRoot + "/configs/hardware/mk2.json");
    CHECK(cfg.fileOf("/system/ipu/tiles") == "--set");
}

TEST_CASE("Config: a missing required key names it", "[config][errors]")
{
    json d = minimal();
    d.erase("workload");
    CHECK_THAT(errorOf(d), Catch::Contains("test.json: /workload: missing required key \"workload\""));
}

TEST_CASE("Config: a value of the wrong type names the pointer, the expectation and the value", "[config][errors]")
{
    json d = minimal();
    d["system"]["ipu"] = {{"tiles", "many"}};
    CHECK_THAT(errorOf(d), Catch::Contains("/system/ipu/tiles: expected integer") && Catch::Contains("found string \"many\""));
}

TEST_CASE("Config: unknown keys are rejected with the allowed ones", "[config][errors]")
{
    json d = minimal();
    d["system"]["ipu"] = {{"tilez", 4}};
    CHECK_THAT(errorOf(d), Catch::Contains("/system/ipu/tilez: unknown key \"tilez\"") && Catch::Contains("tiles"));
    json w = minimal();
    w["workload"]["batch"] = 4;
    CHECK_THAT(errorOf(w), Catch::Contains("/workload/batch: unknown key \"batch\""));
}

TEST_CASE("Config: a negative tile count", "[config][errors]")
{
    CHECK_THAT(errorOf(minimal(), {"/system/ipu/tiles=-4"}),
               Catch::Contains("--set: /system/ipu/tiles: expected integer, >= 1") && Catch::Contains("found integer -4"));
}

TEST_CASE("Config: bad pointers in --set", "[config][errors]")
{
    CHECK_THAT(errorOf(minimal(), {"system/ipu/tiles=5"}), Catch::Contains("not a JSON pointer"));
    CHECK_THAT(errorOf(minimal(), {"/system/nope/tiles=5"}), Catch::Contains("/system/nope: unknown key \"nope\""));
    CHECK_THAT(errorOf(minimal(), {"/system/ipu/tiles"}), Catch::Contains("expected /json/pointer=value"));
    CHECK_THAT(errorOf(minimal(), {"/system/ipu/tilez=5"}), Catch::Contains("unknown key \"tilez\""));
}

TEST_CASE("Config: unreadable files and broken JSON", "[config][errors]")
{
    CHECK_THROWS_WITH(config::loadConfig("/nonexistent/x.json"), Catch::Contains("/nonexistent/x.json: cannot read file"));
    TempDir dir;
    std::string f = dir.write("broken.json", "{\n  \"system\": {\n    \"ipu\": ,\n}");
    CHECK_THROWS_WITH(config::loadConfig(f), Catch::Contains("broken.json: invalid JSON at line 3"));
    std::string g = dir.write("nobase.json", R"({"system": {"base": "missing.json"}, "workload": {"kind": "mnist"}})");
    CHECK_THROWS_WITH(config::loadConfig(g), Catch::Contains("nobase.json: /system/base:") && Catch::Contains("cannot read file"));
}

TEST_CASE("Config: an error in a base file names that file", "[config][errors]")
{
    TempDir dir;
    dir.write("hw.json", R"({"ipu": {"tiles": 0}})");
    std::string top = dir.write("top.json", R"({"system": {"base": "hw.json"}, "workload": {"kind": "mnist"}})");
    CHECK_THROWS_WITH(config::loadConfig(top), Catch::Contains("hw.json: /system/ipu/tiles: expected integer, >= 1"));
    std::string loop = dir.write("loop.json", R"({"base": "loop.json"})");
    CHECK_THROWS_WITH(config::loadConfig(loop), Catch::Contains("includes itself"));
}

TEST_CASE("Config: the workload kind selects its own schema", "[config][errors]")
{
    json d = minimal();
    d["workload"] = {{"kind", "resnet"}};
    CHECK_THAT(errorOf(d), Catch::Contains("/workload/kind: expected one of [\"schedule\",\"mnist\",\"bert\",\"graph\",\"onnx\"]"));
    json s = minimal();
    s["workload"] = {{"kind", "schedule"}};
    CHECK_THROWS_WITH(buildExperiment(config::loadConfig(s, kRoot + "/configs/test.json")),
                      Catch::Contains("/workload: expected exactly one of \"steps\" (one IPU) or \"programs\""));
    CHECK_THAT(errorOf(minimal(), {"/workload/precision=fp8"}), Catch::Contains("/workload/precision: expected one of"));
}

TEST_CASE("Config: every shipped config and sweep naming no bundled model loads and compiles", "[config]")
{
    const auto configs = test::shippedExperiments(test::Shipped::WithoutBundledModel);
    REQUIRE(configs.size() >= 28);
    for (const std::string& config : configs) {
        INFO(config);
        CHECK_NOTHROW(buildExperiment(config::loadConfig(kRoot + "/" + config)));
    }
    std::size_t sweeps = 0;
    for (const auto& entry : fs::directory_iterator(kRoot + "/configs/sweeps")) {
        INFO(entry.path());
        CHECK(Sweep::load(entry.path().string()).points.size() > 1);
        ++sweeps;
    }
    CHECK(sweeps >= 4);
}

TEST_CASE("Config: every shipped config on a bundled model loads and compiles", "[config][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    const auto configs = test::shippedExperiments(test::Shipped::OnBundledModel);
    REQUIRE(configs.size() >= 5);
    for (const std::string& config : configs) {
        INFO(config);
        CHECK_NOTHROW(buildExperiment(config::loadConfig(kRoot + "/" + config)));
    }
}

TEST_CASE("Params: every key of every shipped config is listed, and the keys a user asks for", "[config]")
{
    std::set<std::string> listed;
    for (const auto& p : config::Schema::instance().params())
        listed.insert(p.pointer);
    for (const char* key : {"/run/trace/cycles", "/run/trace/tiles", "/inference/micro_batch", "/inference/device_iterations",
                            "/inference/dataset_samples", "/system/topology/links", "/workload(bert)/available_memory_proportion",
                            "/workload(bert)/strategy/stages/*/blocks", "/workload(bert)/strategy/stages/*/ipu",
                            "/workload(bert)/strategy/block_ipus", "/workload(bert)/strategy/layers_per_ipu",
                            "/workload(bert)/strategy/heads_ipu", "/workload(schedule)/placement/stages/*/stash_depth",
                            "/workload(schedule)/steps/*(compute)/tiles/*/cycles", "/workload(graph)/graph/ops/*(conv2d)/kernel_size"}) {
        INFO(key);
        CHECK(listed.count(key) == 1);
    }
    // Every value a shipped config holds, as params names it: list elements as "*", schedule
    // steps and graph ops by kind ("*(compute)"), the workload's keys under its kind, a list of
    // numbers or a free-form object (a vertex's params) as itself. A schedule's steps are listed
    // once: an IPU's own steps, fragments' and repeat bodies' take the workload's.
    auto keyOf = [](std::string key) {
        for (const std::string from : {"/programs/*/steps", "/fragments/*/steps", "/programs/*/fragments", "/programs/*/tensors"})
            for (auto at = key.find(from); at != std::string::npos; at = key.find(from))
                key.replace(at, from.size(), from.substr(from.rfind('/')));
        for (auto at = key.find("(repeat)/body/*("); at != std::string::npos; at = key.find("(repeat)/body/*("))
            key.erase(at, std::string("(repeat)/body/*").size());
        return key;
    };
    std::function<void(const json&, const std::string&, const std::string&)> leaves = [&](const json& v, const std::string& ptr,
                                                                                          const std::string& file) {
        if (v.is_object() && v.empty())
            return;
        if (v.is_object() && !listed.count(keyOf(ptr))) {
            for (const auto& [k, sub] : v.items())
                leaves(sub, ptr + "/" + (ptr.size() > 11 && ptr.compare(ptr.size() - 11, 11, "/block_ipus") == 0 ? "<name>" : k), file);
            return;
        }
        if (v.is_array() && !v.empty() && (v.front().is_object())) {
            for (const auto& sub : v)
                leaves(sub, ptr + "/*" + (sub.contains("op") && sub.at("op").is_string() ? "(" + sub.at("op").get<std::string>() + ")" : ""), file);
            return;
        }
        INFO(file << ": " << ptr << " as " << keyOf(ptr));
        CHECK(listed.count(keyOf(ptr)) == 1);
    };
    for (const auto& entry : fs::recursive_directory_iterator(kRoot + "/configs")) {
        const std::string path = entry.path().string();
        if (entry.path().extension() != ".json" || path.find("/schema/") != std::string::npos || path.find("/sweeps/") != std::string::npos ||
            path.find("/validation/") != std::string::npos || path.find("/hardware/") != std::string::npos)
            continue;
        json doc = config::loadConfig(path).doc;
        json workload = doc.at("workload");
        doc.erase("workload");
        leaves(doc, "", path);
        leaves(workload, "/workload(" + workload.at("kind").get<std::string>() + ")", path);
    }
}

TEST_CASE("Params: every key has a description, and parameters a unit", "[config]")
{
    auto params = config::Schema::instance().params();
    CHECK(params.size() > 30);
    bool sawTiles = false, sawPacking = false;
    for (const auto& p : params) {
        INFO(p.pointer);
        CHECK_FALSE(p.description.empty());
        CHECK_FALSE(p.unit.empty());
        // Optional parameters without a default are listed too.
        if (p.pointer == "/workload(bert)/packing/max_sequences_per_row") {
            sawPacking = true;
            CHECK(p.defaultValue == "-");
        }
        if (p.pointer == "/system/ipu/tiles") {
            sawTiles = true;
            CHECK(p.defaultValue == "1472");
            CHECK(p.unit == "tiles");
        }
    }
    CHECK(sawTiles);
    CHECK(sawPacking);
}

TEST_CASE("mk2.json holds values only: each at the schema's default, whose unit and source the schema gives",
          "[config]")
{
    const json hw = config::readJsonFile(kRoot + "/configs/hardware/mk2.json");
    const json& schema = config::Schema::instance().root().at("properties").at("system");
    std::set<std::string> listed;
    std::function<void(const json&, const json&, const std::string&)> walk = [&](const json& v, const json& s, const std::string& ptr) {
        if (v.is_object()) {
            for (const auto& [k, x] : v.items())
                if (k != "description")
                    walk(x, s.at("properties").at(k), ptr + "/" + k);
            return;
        }
        INFO(ptr);
        listed.insert("/system" + ptr);
        CHECK(v == s.at("default")); // mk2.json is the default machine
        CHECK_FALSE(s.value("x-unit", std::string()).empty());
        CHECK_FALSE(s.value("x-source", std::string()).empty());
    };
    walk(hw, schema, "");
    // The schema's defaults are the Mk2's: a parameter added later need not be listed here too
    // (its declaration is the schema's), but what is listed cannot drift from it.
    CHECK(listed.size() > 25);
}

TEST_CASE("Sweep axes: values, linear and log ranges, zipped lists, grid product", "[config][sweep]")
{
    const Sweep s = Sweep::load(kRoot + "/configs/sweeps/exchange_tiles.json");
    // 3 zipped exchange widths x 3 log-spaced tile counts (368, 736, 1472)
    REQUIRE(s.points.size() == 9);
    CHECK(s.points[0][0].second == 2);
    CHECK(s.points[0][1].second == 2);
    CHECK(s.points[0][2].second == 368);
    CHECK(s.points[1][2].second == 736);
    CHECK(s.points[8][2].second == 1472);
    CHECK(s.points[8][0].second == 8);
    const Sweep p = Sweep::load(kRoot + "/configs/sweeps/pipeline_link_bandwidth.json");
    REQUIRE(p.points.size() == 5 * 4); // 5 log-spaced bandwidths x GA 8, 16, 24, 32
    CHECK(p.points[3][1].second == 32);
    CHECK(p.points[4][0].second.get<double>() == Approx(8e9)); // the 2nd of 5 log steps from 4 to 64 GB/s: 4e9 x 16^(1/4)
    CHECK(p.setsFor(0).front() == "/run/dataset_samples=0");
}

TEST_CASE("Hardware parameters: declared once in the schema, every one decoded, C++ defaults generated from it", "[config]")
{
    const config::LoadedConfig cfg = config::loadConfig(json{{"system", json::object()}, {"workload", {{"kind", "mnist"}}}}, kRoot + "/configs/inline.json");
    std::set<std::string> read;
    const SystemParams decoded = decodeSystem(cfg, &read);
    std::size_t declared = 0;
    for (const auto& p : config::Schema::instance().params()) {
        if (p.pointer.rfind("/system/", 0) != 0 || p.pointer == "/system/description" || p.pointer == "/system/host/description")
            continue; // (what people read: the hardware's and the host model's descriptions)
        ++declared;
        INFO(p.pointer << " is declared in the schema but never decoded");
        CHECK(read.count(p.pointer) == 1);
    }
    CHECK(declared == read.size());
    CHECK(declared > 40);
    // The defaults of the parameter structs are the schema's: a config of defaults decodes to
    // them, field by field, and each is the default the schema declares at its pointer.
    const std::map<std::string, json> defaults = fieldsOf(SystemParams{});
    CHECK(fieldsOf(decoded) == defaults);
    for (const auto& [pointer, value] : defaults) {
        INFO(pointer);
        CHECK(value == schemaAt(pointer).at("default"));
    }
    CHECK(defaults.size() > 40);
}

TEST_CASE("Hardware parameters: the C++ fields are the schema's x-cpp-field list, and a config's value reaches each", "[config]")
{
    // Each parameter the schema gives a C++ field is that field, by name, at its pointer
    // (the generated list has neither a field too many nor one too few).
    std::map<std::string, std::string> named;
    const SystemParams defaultSystem;
    forEachParam(defaultSystem, "/system", [&](const std::string& pointer, const char* name, const auto&) { named[pointer] = name; });
    std::map<std::string, std::string> declared;
    cppFieldsOf(config::Schema::instance().root().at("properties").at("system"), "/system", declared);
    CHECK(named == declared);
    CHECK(named.at("/system/ipu/worker_contexts") == "workers");
    // Every one set to a value other than its default in one config reaches its field.
    json doc{{"system", json::object()}, {"workload", {{"kind", "mnist"}}}};
    std::map<std::string, json> set;
    for (const auto& [pointer, name] : declared) {
        set[pointer] = otherThanDefault(schemaAt(pointer));
        doc[json::json_pointer(pointer)] = set[pointer];
    }
    const SystemParams decoded = decodeSystem(config::loadConfig(doc, kRoot + "/configs/inline.json"));
    const std::map<std::string, json> defaults = fieldsOf(SystemParams{});
    for (const auto& [pointer, value] : fieldsOf(decoded)) {
        INFO(pointer << " = " << set.at(pointer).dump());
        CHECK(value == set.at(pointer));
        CHECK(value != defaults.at(pointer));
    }
    CHECK(decoded.ipu.ampHalfFloat.macsPerCycle == set.at("/system/ipu/amp/fp16_fp32/macs_per_cycle"));
    CHECK(decoded.ipu.tileMemoryBytes == set.at("/system/ipu/tile_memory_bytes"));
}
