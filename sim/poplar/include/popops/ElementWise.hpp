// SPDX-License-Identifier: MIT
#pragma once
// ipusim's PopLibs API: element-wise operations, each adding its compute set to `prog`. Operands
// have one shape, or one of them a single element (broadcast). A result is a new tensor mapped as
// the first operand; the in-place forms write the first operand.
#include <popops/ExprOp.hpp>

#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>
#include <poplar/Tensor.hpp>

namespace popops {

poplar::Tensor map(poplar::Graph& graph, expr::BinaryOpType op, const poplar::Tensor& a, const poplar::Tensor& b,
                   poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});
poplar::Tensor map(poplar::Graph& graph, expr::UnaryOpType op, const poplar::Tensor& a, poplar::program::Sequence& prog,
                   const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});
void mapInPlace(poplar::Graph& graph, expr::BinaryOpType op, const poplar::Tensor& a, const poplar::Tensor& b,
                poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});
void mapInPlace(poplar::Graph& graph, expr::UnaryOpType op, const poplar::Tensor& a, poplar::program::Sequence& prog,
                const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});

#define IPUSIM_POPOPS_BINARY(NAME, OP)                                                                                   \
    inline poplar::Tensor NAME(poplar::Graph& graph, const poplar::Tensor& a, const poplar::Tensor& b,                  \
                               poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},          \
                               const poplar::OptionFlags& options = {})                                                  \
    {                                                                                                                    \
        return map(graph, expr::BinaryOpType::OP, a, b, prog, debugContext, options);                                    \
    }                                                                                                                    \
    inline void NAME##InPlace(poplar::Graph& graph, const poplar::Tensor& a, const poplar::Tensor& b,                   \
                              poplar::program::Sequence& prog, const poplar::DebugContext& debugContext = {},           \
                              const poplar::OptionFlags& options = {})                                                   \
    {                                                                                                                    \
        mapInPlace(graph, expr::BinaryOpType::OP, a, b, prog, debugContext, options);                                    \
    }
IPUSIM_POPOPS_BINARY(add, ADD)
IPUSIM_POPOPS_BINARY(sub, SUBTRACT)
IPUSIM_POPOPS_BINARY(mul, MULTIPLY)
IPUSIM_POPOPS_BINARY(div, DIVIDE)
IPUSIM_POPOPS_BINARY(max, MAXIMUM)
IPUSIM_POPOPS_BINARY(min, MINIMUM)
IPUSIM_POPOPS_BINARY(pow, POWER)
#undef IPUSIM_POPOPS_BINARY

#define IPUSIM_POPOPS_UNARY(NAME, OP)                                                                                    \
    inline poplar::Tensor NAME(poplar::Graph& graph, const poplar::Tensor& a, poplar::program::Sequence& prog,          \
                               const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {})   \
    {                                                                                                                    \
        return map(graph, expr::UnaryOpType::OP, a, prog, debugContext, options);                                        \
    }                                                                                                                    \
    inline void NAME##InPlace(poplar::Graph& graph, const poplar::Tensor& a, poplar::program::Sequence& prog,           \
                              const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {})    \
    {                                                                                                                    \
        mapInPlace(graph, expr::UnaryOpType::OP, a, prog, debugContext, options);                                        \
    }
IPUSIM_POPOPS_UNARY(abs, ABSOLUTE)
IPUSIM_POPOPS_UNARY(exp, EXPONENT)
IPUSIM_POPOPS_UNARY(log, LOGARITHM)
IPUSIM_POPOPS_UNARY(logicalNot, LOGICAL_NOT)
IPUSIM_POPOPS_UNARY(neg, NEGATE)
IPUSIM_POPOPS_UNARY(sqrt, SQRT)
IPUSIM_POPOPS_UNARY(square, SQUARE)
IPUSIM_POPOPS_UNARY(tanh, TANH)
IPUSIM_POPOPS_UNARY(sigmoid, SIGMOID)
IPUSIM_POPOPS_UNARY(relu, RELU)
#undef IPUSIM_POPOPS_UNARY

/** Whether every element of a bool tensor is true: a new bool tensor of one element. */
poplar::Tensor allTrue(poplar::Graph& graph, const poplar::Tensor& A, poplar::program::Sequence& prog,
                       const poplar::DebugContext& debugContext = {});

/** A += scale x B. */
void scaledAddTo(poplar::Graph& graph, const poplar::Tensor& A, const poplar::Tensor& B, float scale, poplar::program::Sequence& prog,
                 const poplar::DebugContext& debugContext = {}, const poplar::OptionFlags& options = {});

} // namespace popops
