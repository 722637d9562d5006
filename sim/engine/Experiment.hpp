// SPDX-License-Identifier: MIT
#pragma once
#include "models/system/SystemParams.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/trace/ChromeTrace.hpp"
#include "workloads/schedule/Schedule.hpp"

#include <optional>

namespace ipusim {

struct RunParams
{
    uint64_t gradientAccumulation = 1;
    uint64_t deviceIterations = 1;
    uint64_t hostCalls = 1;
    uint64_t epochs = 1;
    uint64_t hostCallsPerEpoch = 0; // 0: epochs are not tracked
    TraceWindow trace;
};

/** Everything one simulation needs: the validated config, the machine, the run options and
 *  the compiled Schedule. */
struct Experiment
{
    config::LoadedConfig config;
    SystemParams system;
    RunParams run;
    Schedule schedule;
};

/** Loads, validates and compiles an experiment; throws config::ConfigError on bad input and
 *  OutOfMemory (workloads/lowering) when the planner cannot fit an op. */
Experiment buildExperiment(const std::string& path, const std::vector<std::string>& sets = {});
Experiment buildExperiment(config::LoadedConfig cfg);

/** The config of the inference phase that follows training (`"inference"`), or nothing. */
std::optional<config::LoadedConfig> inferencePhase(const config::LoadedConfig& training);

} // namespace ipusim
