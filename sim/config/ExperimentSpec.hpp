// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/RunSpec.hpp"
#include "workloads/nets/WorkloadSpec.hpp"

#include <set>
#include <string>

namespace ipusim {

/** A config decoded once into typed specs: nothing above sim/config reads its JSON again. */
struct ExperimentSpec
{
    std::string name;
    SystemParams system;
    RunSpec run;
    WorkloadSpec workload;
};

/** Decodes a loaded (validated, defaulted) config; bad values the schema cannot express
 *  (cross-field rules) throw ConfigError naming the file and JSON pointer. */
ExperimentSpec decodeExperiment(const config::LoadedConfig& cfg);

/** `/system`: the machine, with its custom topology checked (links name IPUs of the system,
 *  every IPU reachable). `pointersRead`, when given, collects every parameter read (tests). */
SystemParams decodeSystem(const config::LoadedConfig& cfg, std::set<std::string>* pointersRead = nullptr);
/** `/run`, with the trace window checked against the system. */
RunSpec decodeRun(const config::LoadedConfig& cfg, const SystemParams& system);
/** `/workload`, by its kind (the table of workload kinds). */
WorkloadSpec decodeWorkload(const config::LoadedConfig& cfg, const SystemParams& system, const RunSpec& run);

} // namespace ipusim
