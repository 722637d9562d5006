// SPDX-License-Identifier: MIT
#pragma once
// ipusim's PopLibs API: filling a tensor with zeros (or a value), as a compute set in `prog`.
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

namespace popops {

void zero(poplar::Graph& graph, const poplar::Tensor& t, poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {});
void fill(poplar::Graph& graph, const poplar::Tensor& t, poplar::program::Sequence& prog, float value,
          const poplar::DebugContext& debugContext = {});

} // namespace popops
