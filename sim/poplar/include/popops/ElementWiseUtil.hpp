// SPDX-License-Identifier: MIT
#pragma once
// ipusim's PopLibs API: the output an element-wise op would make for its inputs.
#include <poplar/Graph.hpp>

#include <vector>

namespace popops {

/** A new tensor of `outputType` in the shape of the inputs, mapped as the first of them. */
poplar::Tensor createOutputForElementWiseOp(poplar::Graph& graph, const std::vector<poplar::Tensor>& inputs, const poplar::Type& outputType,
                                            const poplar::DebugContext& debugContext = {});

} // namespace popops
