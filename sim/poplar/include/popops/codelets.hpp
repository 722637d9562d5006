// SPDX-License-Identifier: MIT
#pragma once
// ipusim's PopLibs API: popops' codelets. Its ops run on the host and are priced by ipusim's
// vertex table (PopLibs' own estimators); adding the codelets is what a program must do first.
#include <poplar/Graph.hpp>

namespace popops {
void addCodelets(poplar::Graph& graph);
} // namespace popops
