// SPDX-License-Identifier: MIT
#pragma once
// ipusim's PopLibs API: poplin's codelets (see popops/codelets.hpp).
#include <poplar/Graph.hpp>

namespace poplin {
void addCodelets(poplar::Graph& graph);
} // namespace poplin
