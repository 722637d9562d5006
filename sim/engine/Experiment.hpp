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
    /** Worked out from the schedule alone as it was compiled: its invariants hold (checked
     *  then), and each program's tile memory, up to the first that does not fit (a pipeline
     *  compiles no IPU after it: ipusNotCompiled). Empty (a schedule built in code): the run
     *  checks the schedule and accounts its memory. */
    std::vector<std::shared_ptr<const TileMemory>> memory;
    std::vector<uint32_t> ipusNotCompiled;
    /** Taken from a sweep worker's cache: compiled before the point's process began. */
    bool compiledAhead = false;

    /** After code replaced the schedule's programs: drops what was worked out from the compiled
     *  ones, so that the run checks the new ones and accounts their memory. */
    void programsReplaced()
    {
        memory.clear();
        ipusNotCompiled.clear();
    }
};

/** Loads, validates, decodes and compiles an experiment; throws config::ConfigError on bad
 *  input and OutOfMemory (workloads/lowering) when the planner cannot fit an op. A schedule
 *  `compiled` holds for the config is taken from it instead of compiling. Compiling stops at
 *  the first IPU that does not fit unless `stopAtFirstIpuOver` is false (the Schedule whole,
 *  to write; a cache holds only schedules compiled to stop, so it is not asked then). */
Experiment buildExperiment(const std::string& path, const std::vector<std::string>& sets = {});
Experiment buildExperiment(config::LoadedConfig cfg, CompileCache* compiled = nullptr, bool stopAtFirstIpuOver = true);

/** The config of the inference phase that follows training (`"inference"`), or nothing. */
std::optional<config::LoadedConfig> inferencePhase(const config::LoadedConfig& training);

} // namespace ipusim
