// SPDX-License-Identifier: MIT
#pragma once
#include "sim/config/ConfigLoader.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ipusim::config {

/** A workload's "file" naming a model the build exports, such as "bundled:resnet50.onnx": the
 *  shipped configs name their models so, not by a path into one build folder. */
bool isBundledModel(const std::string& file);

/** Where bundled models are looked for, in order: $IPUSIM_MODELS_DIR; models/ beside the running
 *  program (a build folder, whatever its name); share/ipusim/models of the prefix the program
 *  is installed under; the models folder of the build this library came from (the tests, the
 *  Python module). */
std::vector<std::string> bundledModelFolders();

/** The model file the workload at /workload/file names: a bundled model the first folder of
 *  bundledModelFolders() holds, else the path relative to the config file that set it; nothing
 *  for a bundled model that is nowhere, or whose name is a path. */
std::optional<std::string> findWorkloadModel(const LoadedConfig& cfg);

/** findWorkloadModel's file; fails at /workload/file, naming where it looked, when there is none. */
std::string workloadModelFile(const LoadedConfig& cfg);

} // namespace ipusim::config
