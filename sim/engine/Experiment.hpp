// SPDX-License-Identifier: MIT
#pragma once
#include "models/system/SystemParams.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/trace/ChromeTrace.hpp"
#include "workloads/schedule/Schedule.hpp"

namespace ipusim {

struct RunParams
{
    uint64_t gradientAccumulation = 1;
    uint64_t deviceIterations = 1;
    uint64_t hostCalls = 1;
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

} // namespace ipusim
