// SPDX-License-Identifier: MIT
#pragma once
// ipusim's PopLibs API: matrix products. A product is planned by ipusim's convolution planner
// (the plan a model's matmul gets) and run on the plan's tiles.
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

#include <vector>

namespace poplin {

class PlanningCache;

/** A x B of A [m, k] and B [k, n] (or batches [g, m, k] x [g, k, n]): a new tensor [m, n], mapped over
 *  the plan's tiles. */
poplar::Tensor matMul(poplar::Graph& graph, const poplar::Tensor& A, const poplar::Tensor& B, poplar::program::Sequence& prog,
                      const poplar::Type& outputType, const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {}, PlanningCache* cache = nullptr);
poplar::Tensor matMul(poplar::Graph& graph, const poplar::Tensor& A, const poplar::Tensor& B, poplar::program::Sequence& prog,
                      const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {},
                      PlanningCache* cache = nullptr);
/** Operands laid out for a product of shapes aShape x bShape: mapped linearly. */
poplar::Tensor createMatMulInputLHS(poplar::Graph& graph, const poplar::Type& type, const std::vector<std::size_t>& aShape,
                                    const std::vector<std::size_t>& bShape, const poplar::DebugContext& debugContext = {},
                                    const poplar::OptionFlags& options = {}, PlanningCache* cache = nullptr);
poplar::Tensor createMatMulInputRHS(poplar::Graph& graph, const poplar::Type& type, const std::vector<std::size_t>& aShape,
                                    const std::vector<std::size_t>& bShape, const poplar::DebugContext& debugContext = {},
                                    const poplar::OptionFlags& options = {}, PlanningCache* cache = nullptr);

} // namespace poplin
