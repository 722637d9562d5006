// SPDX-License-Identifier: MIT
#include "Simulate.hpp"

#include <catch2/catch.hpp>

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

nlohmann::json simulateDoc(const nlohmann::json& doc)
{
    return simulate(config::loadConfig(doc, kRoot + "/configs/inline.json"));
}

} // namespace ipusim::test
