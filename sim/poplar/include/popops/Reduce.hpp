// SPDX-License-Identifier: MIT
#pragma once
// ipusim's PopLibs API: reductions over some dimensions of a tensor.
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <vector>

namespace popops {

enum class Operation { ADD, MUL, MIN, MAX, SQUARE_ADD };

struct ReduceParams
{
    ReduceParams() = default;
    ReduceParams(Operation op, bool update = false) : op(op), update(update) {}
    Operation op = Operation::ADD;
    bool update = false; // add the result to the output's value instead of replacing it
};

/** The reduction of `in` over `dims`: a new tensor of the remaining dimensions, mapped linearly. */
poplar::Tensor reduce(poplar::Graph& graph, const poplar::Tensor& in, poplar::ArrayRef<std::size_t> dims, ReduceParams params,
                      poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});
poplar::Tensor reduce(poplar::Graph& graph, const poplar::Tensor& in, const poplar::Type& outType, poplar::ArrayRef<std::size_t> dims,
                      ReduceParams params, poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {});
/** The same into `out` (its shape that of the result). */
void reduceWithOutput(poplar::Graph& graph, const poplar::Tensor& in, const poplar::Tensor& out, poplar::ArrayRef<std::size_t> dims,
                      ReduceParams params, poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},
                      const poplar::OptionFlags& options = {});

} // namespace popops
