// SPDX-License-Identifier: MIT
#pragma once
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/CompileCache.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ipusim {

/** Runs one config (and its inference phase) in the calling process: {"status": "ok",
 *  "summary": {...}}, or {"status": "invalid" | "out_of_memory" | "failed", "error": message}.
 *  Schedules `compiled` holds are taken from it. Never throws. */
nlohmann::json simulatePoint(config::LoadedConfig cfg, CompileCache* compiled = nullptr);
/** Loads `config` with `sets` (errors in them name `setsOrigin`, the file that gave them) and
 *  simulates it; a config error becomes an "invalid" result. */
nlohmann::json simulatePoint(const std::string& config, const std::vector<std::string>& sets, const std::string& setsOrigin);

/** One point as a long-lived worker (WorkerPool) runs it: the config is loaded and its
 *  schedules compiled in the worker, unless `compiled` holds them from an earlier point; the
 *  simulation runs in a child process of its own (SystemC elaborates once per process; a
 *  crash stays in the child). The result, as JSON text, is simulatePoint's with "compiled":
 *  the schedules this point compiled; {"status": "interrupted"} if the child was stopped from
 *  outside. */
std::string simulatePointInWorker(const std::string& config, const std::vector<std::string>& sets, const std::string& setsOrigin,
                                     CompileCache& compiled);

/** Which points share compiled schedules: the config and the overrides of values the
 *  compiler reads (a WorkerPool group). */
std::string compileGroup(const std::string& config, const std::vector<std::string>& sets);

} // namespace ipusim
