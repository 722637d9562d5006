// SPDX-License-Identifier: MIT
#pragma once
#include "sim/engine/Experiment.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>

namespace ipusim {

/** Whether a variant of an experiment fits: compiled and its memory accounted, not run. */
using FitsCheck = std::function<bool(const config::LoadedConfig&)>;

/** The check the search uses: compiles the variant and accounts each IPU's memory. */
bool compilesToFit(const config::LoadedConfig& variant);

/** What an experiment that does not fit could change to fit, found by checking variants of its
 *  config: the largest smaller micro-batch that fits; when none does, in training, the largest
 *  micro-batch up to its own that fits with the optimizer state sharded over the replicas, then
 *  also offloaded to Streaming Memory (where the config does neither). The answer, for the
 *  out-of-memory report: {"found": true, "micro_batch": 8, "sets": ["/workload/micro_batch=8",
 *  ...], "checked": [{"micro_batch": 8, "fits": true, ...}, ...]} or {"found": false, "checked":
 *  [...], "next": what is left to try}. Memory is taken to grow with the micro-batch, so each
 *  setting is bisected: about log2(micro-batch) checks. */
nlohmann::json searchFit(const Experiment& e, const FitsCheck& fits = compilesToFit);

} // namespace ipusim
