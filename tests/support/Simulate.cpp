// SPDX-License-Identifier: MIT
#include "Simulate.hpp"

#include "models/reference/ReferenceEngine.hpp"
#include "sim/config/BundledModels.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/engine/Simulation.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <iterator>

namespace ipusim::test {

nlohmann::json simulate(const Experiment& e, const RunOptions& options)
{
    RunOptions o = options;
    o.inferencePhase = false;
    const RunOutcome r = run(e, o);
    REQUIRE(r.status == RunOutcome::Status::Ok);
    return r.summary;
}

nlohmann::json simulate(const config::LoadedConfig& cfg, const RunOptions& options)
{
    return simulate(buildExperiment(cfg), options);
}

nlohmann::json simulateFile(const std::string& file, const std::vector<std::string>& sets)
{
    return simulate(config::loadConfig(kRoot + "/" + file, sets));
}

bool bundledModelsExported()
{
#ifdef IPUSIM_ONNX_DIR
    return true;
#else
    return false;
#endif
}

std::string bundledModel(const std::string& name)
{
#ifdef IPUSIM_ONNX_DIR
    return std::string(IPUSIM_ONNX_DIR) + "/" + name + ".onnx";
#else
    FAIL("this build exported no ONNX models: skip the test first (SKIP_WITHOUT_BUNDLED_MODELS)");
    return name;
#endif
}

bool namesBundledModel(const std::string& config)
{
    const nlohmann::json doc = config::readJsonFile(kRoot + "/" + config);
    return doc.contains("workload") && doc["workload"].contains("file") && doc["workload"]["file"].is_string() &&
           config::isBundledModel(doc["workload"]["file"].get<std::string>());
}

std::vector<std::string> shippedExperiments(Shipped which)
{
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    for (const auto& entry : fs::recursive_directory_iterator(kRoot + "/configs")) {
        const std::string rel = fs::relative(entry.path(), kRoot).generic_string();
        const bool notExperiment = rel.rfind("configs/hardware/", 0) == 0 || rel.rfind("configs/schema/", 0) == 0 ||
                                   rel.rfind("configs/sweeps/", 0) == 0 || rel.rfind("configs/validation/", 0) == 0;
        if (!entry.is_regular_file() || entry.path().extension() != ".json" || notExperiment)
            continue;
        if (which == Shipped::All || namesBundledModel(rel) == (which == Shipped::OnBundledModel))
            out.push_back(rel);
    }
    std::sort(out.begin(), out.end());
    return out;
}

void skipTest(const std::string& reason)
{
    std::cout << "ipusim-test-skipped: " << reason << std::endl;
}

std::string configErrorOf(const nlohmann::json& doc, const std::string& file)
{
    try {
        buildExperiment(config::loadConfig(doc, file));
    } catch (const config::ConfigError& e) {
        return e.what();
    }
    return "no error";
}

std::map<std::string, uint64_t> busiestStepCycles(const Schedule& schedule)
{
    std::map<std::string, uint64_t> cycles;
    forEachProgramStep(schedule.programs.at(0), [&](const Step& step) {
        if (const auto* c = std::get_if<ComputeStep>(&step.op))
            for (const auto& r : c->cycles.runs())
                cycles[c->name] = std::max<uint64_t>(cycles[c->name], r.value);
    });
    return cycles;
}

nlohmann::json simulateDoc(const nlohmann::json& doc)
{
    return simulate(config::loadConfig(doc, kRoot + "/configs/inline.json"));
}

std::string engineDisagreement(const nlohmann::json& doc)
{
    const Experiment e = buildExperiment(config::loadConfig(doc, kRoot + "/configs/inline.json"));
    PhaseRecorder fast;
    {
        Simulation sim(e, &fast);
        sim.run();
    }
    return ipusim::firstDifference(fast.byIpu(), runReference(e.schedule, e.system, e.run.hostCalls).phases);
}

std::string firstDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& at)
{
    if (a == b)
        return "";
    if (a.type() == b.type() && (a.is_object() || a.is_array()) && a.size() == b.size())
        for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
            const std::string key = a.is_object() ? i.key() : std::to_string(std::distance(a.begin(), i));
            if (a.is_object() && i.key() != j.key())
                return at + "/" + key + ": a key against \"" + j.key() + "\"";
            if (*i != *j)
                return firstDifference(*i, *j, at + "/" + key);
        }
    return at + ": " + a.dump().substr(0, 300) + " against " + b.dump().substr(0, 300);
}

} // namespace ipusim::test
