// SPDX-License-Identifier: MIT
#include "sim/config/ExperimentSpec.hpp"

#include <fmt/format.h>

namespace ipusim {

RunSpec decodeRun(const config::LoadedConfig& cfg, const SystemParams& system)
{
    const auto& run = cfg.doc.at("run");
    RunSpec r;
    r.gradientAccumulation = run.at("gradient_accumulation");
    r.deviceIterations = run.at("device_iterations");
    r.hostCalls = run.at("host_calls");
    r.epochs = run.at("epochs");
    r.datasetSamples = run.at("dataset_samples");
    if (r.datasetSamples == 0 && r.epochs > 1)
        cfg.fail("/run/epochs", "expected 1 unless /run/dataset_samples says how large an epoch is");
    const auto& loader = run.at("data_loader");
    r.dataLoader = {loader.at("workers"), loader.at("mode") == "async", loader.at("buffer"), loader.at("sample_seconds"), run.at("instances")};
    if (r.dataLoader.instances % system.host.servers != 0)
        cfg.fail("/run/instances", fmt::format("expected a multiple of the {} host servers (/system/host/servers): PopRun splits "
                                               "instances evenly over them, found {}", system.host.servers, r.dataLoader.instances));
    if (!run.contains("trace"))
        return r;
    const auto& t = run.at("trace");
    if (t.contains("tiles")) {
        r.trace.tiles = true;
        r.trace.firstTile = t.at("tiles").at(0);
        r.trace.lastTile = t.at("tiles").at(1);
        if (r.trace.firstTile > r.trace.lastTile || r.trace.lastTile >= system.ipu.tiles)
            cfg.fail("/run/trace/tiles", fmt::format("expected [first, last] with first <= last <= {}, found {}", system.ipu.tiles - 1,
                                                     t.at("tiles").dump()));
    }
    if (t.contains("cycles")) {
        r.trace.fromCycle = t.at("cycles").at(0);
        r.trace.toCycle = t.at("cycles").at(1);
        if (r.trace.fromCycle > r.trace.toCycle)
            cfg.fail("/run/trace/cycles", fmt::format("expected [first, last] with first <= last, found {}", t.at("cycles").dump()));
    }
    return r;
}

} // namespace ipusim
