// SPDX-License-Identifier: MIT
#include "sim/sweep/SimulatePoint.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/run/ChildProcess.hpp"
#include "sim/run/Run.hpp"

#include <fmt/format.h>

#include <csignal>
#include <optional>
#include <thread>

namespace ipusim {

namespace {

/** A run's result as a point's, and a failure as a result: never throws. */
template <class Run>
nlohmann::json pointResult(const Run& runPoint)
{
    try {
        const RunOutcome r = runPoint();
        if (r.status == RunOutcome::Status::OutOfMemory)
            return {{"status", "out_of_memory"},
                    {"error", (r.oomPhase.empty() ? "" : r.oomPhase + " phase: ") + oomSummaryLine(r.oomReport)}};
        return {{"status", "ok"}, {"summary", r.summary}};
    } catch (const config::ConfigError& e) {
        return {{"status", "invalid"}, {"error", e.what()}};
    } catch (const std::exception& e) {
        return {{"status", "failed"}, {"error", e.what()}};
    }
}

/** A point in the process forked for it. Its schedule, taken from the worker's cache, lies in
 *  pages this process shares with the worker: freeing it would write to each of them (a copy
 *  apiece) just before the process ends, so the run's experiment is left for the end to free
 *  (an inference phase's, smaller, is freed as a run frees it). "compiled_in_point": 1 when
 *  the point found no schedule prepared and compiled its own (the sweep counts it). */
nlohmann::json simulateForkedPoint(config::LoadedConfig cfg, CompileCache& compiled)
{
    bool prepared = false;
    nlohmann::json result = pointResult([&] {
        const auto* e = new Experiment(buildExperiment(std::move(cfg), &compiled));
        prepared = e->compiledAhead;
        return run(*e, RunOptions{}, &compiled);
    });
    if (!prepared && (result.at("status") == "ok" || result.at("status") == "out_of_memory"))
        result["compiled_in_point"] = 1;
    return result;
}

} // namespace

nlohmann::json simulatePoint(config::LoadedConfig cfg, CompileCache* compiled)
{
    return pointResult([&] { return run(RunRequest{std::move(cfg), {}, compiled}); });
}

nlohmann::json simulatePoint(const std::string& config, const std::vector<std::string>& sets, const std::string& setsOrigin)
{
    try {
        return simulatePoint(config::loadConfig(config, sets, setsOrigin));
    } catch (const config::ConfigError& e) {
        return {{"status", "invalid"}, {"error", e.what()}};
    }
}

std::string simulatePointInWorker(const std::string& config, const std::vector<std::string>& sets, const std::string& setsOrigin,
                                  CompileCache& compiled)
{
    std::optional<config::LoadedConfig> cfg;
    try {
        cfg = config::loadConfig(config, sets, setsOrigin);
    } catch (const config::ConfigError& e) {
        return nlohmann::json{{"status", "invalid"}, {"error", e.what()}}.dump();
    }
    const std::size_t before = compiled.compiled();
    // On a thread of its own, so the schedules come from another malloc arena than the point's
    // process allocates from: it then writes to fresh pages, not to (and so copying) pages it
    // shares with the worker.
    std::thread([&] {
        try {
            compiled.prepare(*cfg);
            if (const auto inference = inferencePhase(*cfg))
                compiled.prepare(*inference);
        } catch (const std::exception&) {
            // Not kept: the point's own process meets the error again and reports it as a run does.
        }
    }).join();
    ChildProcess child([&] { return simulateForkedPoint(std::move(*cfg), compiled); }, "the point's process");
    // Passed on as the child wrote it (a summary can be megabytes): parsing is the coordinator's.
    const std::string result = child.waitForText();
    const int signal = child.killedBy();
    if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP)
        return R"({"status":"interrupted"})";
    if (result.size() < 2 || result.front() != '{')
        return nlohmann::json{{"status", "failed"}, {"error", "the point's process wrote no result"}}.dump();
    return fmt::format(R"({{"compiled":{},{})", compiled.compiled() - before, result.substr(1));
}

std::string compileGroup(const std::string& config, const std::vector<std::string>& sets)
{
    // The inference phase's values are its own compile's, though the run's compile ignores them.
    std::string group = config;
    for (const std::string& set : sets)
        if (const std::string pointer = set.substr(0, set.find('=')); !compilerIgnores(pointer) || pointer.rfind("/inference", 0) == 0)
            group += "\n" + set;
    return group;
}

} // namespace ipusim
