// SPDX-License-Identifier: MIT
#pragma once
// Test helpers: experiments run through the same run path as `ipusim run`.
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/Experiment.hpp"
#include "sim/run/Run.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace ipusim::test {

/** The source tree: configs are named relative to it. */
inline const std::string kRoot = IPUSIM_SOURCE_DIR;

/** The summary of `e` run without files or inference phase; the test fails when it does not
 *  fit in memory. */
nlohmann::json simulate(const Experiment& e, const RunOptions& options = {});
nlohmann::json simulate(const config::LoadedConfig& cfg, const RunOptions& options = {});
/** A config file of the tree (relative path) with overrides. */
nlohmann::json simulateFile(const std::string& file, const std::vector<std::string>& sets = {});
/** An inline config document; its bases resolve from configs/. */
nlohmann::json simulateDoc(const nlohmann::json& doc);

} // namespace ipusim::test
