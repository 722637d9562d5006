// SPDX-License-Identifier: MIT
#include "sim/engine/Experiment.hpp"

#include "sim/config/ExperimentSpec.hpp"

#include <fmt/format.h>

namespace ipusim {

Experiment buildExperiment(const std::string& path, const std::vector<std::string>& sets)
{
    return buildExperiment(config::loadConfig(path, sets));
}

namespace {

/** PopRun gives each instance an equal share of the replicas. */
void checkInstances(const config::LoadedConfig& cfg, uint32_t replicas, uint32_t instances)
{
    if (replicas % instances != 0)
        cfg.fail("/run/instances", fmt::format("expected a divisor of the {} replicas: PopRun gives each instance an equal share, "
                                               "found {}", replicas, instances));
}

} // namespace

Experiment buildExperiment(config::LoadedConfig cfg, CompileCache* compiled, bool stopAtFirstIpuOver)
{
    Experiment e;
    e.system = decodeSystem(cfg);
    e.run = decodeRun(cfg, e.system);
    // Before compiling where the config says (a model's strategy); after it, from the Schedule.
    if (const nlohmann::json::json_pointer at{"/workload/strategy/replicas"}; cfg.doc.contains(at) && cfg.doc.at(at).is_number_unsigned())
        checkInstances(cfg, cfg.doc.at(at).get<uint32_t>(), e.run.dataLoader.instances);
    std::optional<CompiledSchedule> held = compiled && stopAtFirstIpuOver ? compiled->take(cfg) : std::nullopt;
    e.compiledAhead = held.has_value();
    CompiledSchedule c = held ? std::move(*held) : compileSchedule(cfg, e.system, e.run, stopAtFirstIpuOver);
    e.schedule = std::move(c.schedule);
    e.memory = std::move(c.memory);
    e.ipusNotCompiled = std::move(c.ipusNotCompiled);
    checkInstances(cfg, e.schedule.strategy ? e.schedule.strategy->replicas : 1, e.run.dataLoader.instances);
    if (e.run.datasetSamples > 0) {
        // An epoch is as many whole host calls as the data set fills.
        const uint64_t perCall = e.schedule.samplesPerHostCall;
        if (perCall == 0 || e.run.datasetSamples < perCall)
            cfg.fail("/run/dataset_samples", fmt::format("expected at least one host call's {} samples, found {}", perCall,
                                                          e.run.datasetSamples));
        e.run.hostCallsPerEpoch = e.run.datasetSamples / perCall;
        e.run.hostCalls = e.run.epochs * e.run.hostCallsPerEpoch;
    }
    e.config = std::move(cfg);
    return e;
}

} // namespace ipusim

namespace ipusim {

std::optional<config::LoadedConfig> inferencePhase(const config::LoadedConfig& training)
{
    if (!training.doc.contains("inference"))
        return std::nullopt;
    nlohmann::json doc = training.doc;
    const nlohmann::json inf = doc.at("inference");
    doc.erase("inference");
    if (doc.at("workload").at("mode") != "train")
        training.fail("/inference", "expected a training workload to follow with inference");
    doc["name"] = training.name + "_inference";
    auto& w = doc.at("workload");
    w["mode"] = "infer";
    w["micro_batch"] = inf.at("micro_batch");
    w["offload_optimizer"] = false; // training-only options
    w["recompute"] = "none";
    auto& r = doc.at("run");
    r["gradient_accumulation"] = 1;
    r["device_iterations"] = inf.at("device_iterations");
    r["dataset_samples"] = inf.at("dataset_samples");
    r["epochs"] = 1;
    r.erase("host_calls");
    config::LoadedConfig cfg = config::loadConfig(doc, training.file);
    cfg.origins = training.origins; // errors still name the file the value came from
    cfg.renamed = {{"/workload/micro_batch", "/inference/micro_batch"},
                   {"/run/device_iterations", "/inference/device_iterations"},
                   {"/run/dataset_samples", "/inference/dataset_samples"}};
    return cfg;
}

} // namespace ipusim
