// SPDX-License-Identifier: MIT
#include "sim/engine/Experiment.hpp"

#include "workloads/nets/Bert.hpp"
#include "workloads/nets/Mnist.hpp"
#include "workloads/schedule/ScheduleJson.hpp"

#include <fmt/format.h>

namespace ipusim {

Experiment buildExperiment(const std::string& path, const std::vector<std::string>& sets)
{
    return buildExperiment(config::loadConfig(path, sets));
}

Experiment buildExperiment(config::LoadedConfig cfg)
{
    Experiment e;
    const auto& doc = cfg.doc;
    e.system = SystemParams::fromJson(doc.at("system"));
    const auto& topo = doc.at("system").at("topology");
    if (topo.contains("links"))
        for (std::size_t i = 0; i < topo.at("links").size(); ++i)
            for (int k = 0; k < 2; ++k)
                if (topo.at("links")[i][k].get<uint32_t>() >= e.system.numIpus)
                    cfg.fail(fmt::format("/system/topology/links/{}/{}", i, k),
                             fmt::format("expected an IPU below num_ipus ({}), found {}", e.system.numIpus, topo.at("links")[i][k].get<uint32_t>()));
    if (auto lost = e.system.topology.unreachable(); !lost.empty())
        cfg.fail("/system/topology", fmt::format("IPUs {} have no IPU-Link route to IPU 0: every IPU must be connected", fmt::join(lost, ", ")));
    const auto& run = doc.at("run");
    e.run.gradientAccumulation = run.at("gradient_accumulation");
    e.run.deviceIterations = run.at("device_iterations");
    e.run.hostCalls = run.at("host_calls");
    if (run.contains("trace")) {
        const auto& t = run.at("trace");
        if (t.contains("tiles")) {
            e.run.trace.tiles = true;
            e.run.trace.firstTile = t.at("tiles").at(0);
            e.run.trace.lastTile = t.at("tiles").at(1);
            if (e.run.trace.firstTile > e.run.trace.lastTile || e.run.trace.lastTile >= e.system.ipu.tiles)
                cfg.fail("/run/trace/tiles", fmt::format("expected [first, last] with first <= last <= {}, found {}",
                                                         e.system.ipu.tiles - 1, t.at("tiles").dump()));
        }
        if (t.contains("cycles")) {
            e.run.trace.fromCycle = t.at("cycles").at(0);
            e.run.trace.toCycle = t.at("cycles").at(1);
            if (e.run.trace.fromCycle > e.run.trace.toCycle)
                cfg.fail("/run/trace/cycles", fmt::format("expected [first, last] with first <= last, found {}", t.at("cycles").dump()));
        }
    }
    const std::string kind = doc.at("workload").at("kind");
    if (kind == "schedule")
        e.schedule = scheduleFromJson(cfg, e.system);
    else if (kind == "bert")
        e.schedule = buildBertSchedule(cfg, e.system, e.run.gradientAccumulation, e.run.deviceIterations);
    else
        e.schedule = buildMnistSchedule(cfg, e.system, e.run.gradientAccumulation, e.run.deviceIterations);
    e.run.epochs = run.at("epochs");
    const uint64_t dataset = run.at("dataset_samples");
    if (dataset > 0) {
        if (e.schedule.samplesPerHostCall == 0 || dataset < e.schedule.samplesPerHostCall)
            cfg.fail("/run/dataset_samples", fmt::format("expected at least one host call's {} samples, found {}",
                                                          e.schedule.samplesPerHostCall, dataset));
        e.run.hostCallsPerEpoch = dataset / e.schedule.samplesPerHostCall;
        e.run.hostCalls = e.run.epochs * e.run.hostCallsPerEpoch;
    } else if (e.run.epochs > 1)
        cfg.fail("/run/epochs", "expected 1 unless /run/dataset_samples says how large an epoch is");
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
    return cfg;
}

} // namespace ipusim
