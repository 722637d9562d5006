// SPDX-License-Identifier: MIT
#pragma once
#include "sim/engine/Experiment.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace ipusim {

/** A config that runs `experiment`'s compiled Schedule as it is: its system and run sections
 *  as loaded (bases resolved, defaults filled in) and the Schedule as a "schedule" workload.
 *  Simulating it gives the experiment's summary, but for the config file and workload kind it
 *  names. The inference phase, a second compilation, is left out. */
nlohmann::json compiledConfig(const Experiment& experiment);

/** `config` as text to keep and diff: sections and programs key by key, then one line per
 *  step, tensor and fragment header, so a compiled BERT stays tens of megabytes, not hundreds. */
std::string compiledConfigText(const nlohmann::json& config);

} // namespace ipusim
