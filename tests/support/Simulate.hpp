// SPDX-License-Identifier: MIT
#pragma once
// Test helpers: experiments run through the same run path as `ipusim run`.
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/Experiment.hpp"
#include "sim/run/Run.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim::test {

/** The source tree: configs are named relative to it. */
inline const std::string kRoot = IPUSIM_SOURCE_DIR;

/** Diagnostics that throw "pointer: message", for the layers below the config on their own. */
struct ThrowingDiagnostics : Diagnostics
{
protected:
    void raise(const std::string& pointer, const std::string& message) const override
    {
        throw std::runtime_error(pointer + ": " + message);
    }
};

/** The config error building `doc` (as if read from `file`) raises, or "no error". */
std::string configErrorOf(const nlohmann::json& doc, const std::string& file);

/** The busiest tile's cycles of each compute step of IPU 0's program, by step name. */
std::map<std::string, uint64_t> busiestStepCycles(const Schedule& schedule);

/** The summary of `e` run without files or inference phase; the test fails when it does not
 *  fit in memory. */
nlohmann::json simulate(const Experiment& e, const RunOptions& options = {});
nlohmann::json simulate(const config::LoadedConfig& cfg, const RunOptions& options = {});
/** Overrides that point a shipped ONNX config at the models this build exported (the configs
 *  name build/models, the README's build folder, which need not be this build's). Empty for
 *  other configs; nullopt when the build exported no models (no python3-torch). */
std::optional<std::vector<std::string>> bundledModelSets(const std::string& path);
/** Every shipped experiment config (each file under configs/ but the hardware descriptions,
 *  schemas, sweeps and validation suites), relative to the tree, in order. */
std::vector<std::string> shippedExperiments();
/** Where two documents first differ, as a JSON pointer with both values; "" when they are
 *  equal (json::diff of two whole BERT schedules that differ everywhere takes minutes). */
std::string firstDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& at = "");
/** A config file of the tree (relative path) with overrides. */
nlohmann::json simulateFile(const std::string& file, const std::vector<std::string>& sets = {});
/** An inline config document; its bases resolve from configs/. */
nlohmann::json simulateDoc(const nlohmann::json& doc);
/** Where the fast engine's phases of an inline config first differ from the per-cycle reference
 *  engine's ("" if nowhere). */
std::string engineDisagreement(const nlohmann::json& doc);

} // namespace ipusim::test
