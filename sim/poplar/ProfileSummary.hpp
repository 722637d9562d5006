// SPDX-License-Identifier: MIT
#pragma once
// Engine::printProfileSummary: the target, the graph, memory, and the cycles of each program
// step of the last run, from simulating it with every loop iteration observed.
#include "sim/engine/Experiment.hpp"
#include "sim/poplar/CompiledGraph.hpp"

#include <nlohmann/json.hpp>

#include <iosfwd>

namespace poplar::detail {

void printProfile(std::ostream& out, const CompiledGraph& graph, const ipusim::Experiment& run, const nlohmann::json& summary);

} // namespace poplar::detail
