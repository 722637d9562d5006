// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "sim/engine/CompileCache.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/RunSpec.hpp"

#include <optional>

namespace ipusim {

/** Everything one simulation needs: the validated config (for messages and the inference
 *  phase), the machine, the run options and the compiled Schedule. */
struct Experiment
{
    config::LoadedConfig config;
    SystemParams system;
    RunSpec run;
    Schedule schedule;
    /** Worked out from the schedule alone when it was compiled ahead (a sweep worker's cache):
     *  its invariants hold (checked then), and each program's tile memory. Empty: the run
     *  checks the schedule and elaboration accounts its memory. */
    std::vector<std::shared_ptr<const TileMemory>> memory;
};

/** Loads, validates, decodes and compiles an experiment; throws config::ConfigError on bad
 *  input and OutOfMemory (workloads/lowering) when the planner cannot fit an op. A schedule
 *  `compiled` holds for the config is taken from it instead of compiling. */
Experiment buildExperiment(const std::string& path, const std::vector<std::string>& sets = {});
Experiment buildExperiment(config::LoadedConfig cfg, CompileCache* compiled = nullptr);

/** The config of the inference phase that follows training (`"inference"`), or nothing. */
std::optional<config::LoadedConfig> inferencePhase(const config::LoadedConfig& training);

} // namespace ipusim
