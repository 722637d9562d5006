// SPDX-License-Identifier: MIT
#pragma once
#include "models/timing/VertexTable.hpp"

// Short names for the codelets the lowering names most, so a compute set's list reads like the
// vertices it prices.
namespace ipusim::codelet {

inline Codelet unary(costs::UnaryOpKind op) { return {Vertex::UnaryOp1D, op}; }
inline Codelet unaryInPlace(costs::UnaryOpKind op) { return {Vertex::UnaryOp1DInPlace, op}; }
inline Codelet binary(costs::BinaryOpKind op) { return {Vertex::BinaryOp1D, op}; }
/** A tensor op= a scalar, in place (a constant factor, the optimizers' scalars). */
inline Codelet byScalar(costs::BinaryOpKind op) { return {Vertex::BroadcastScalar1DInPlace, op}; }
/** A row reduction (softmax, LayerNorm, losses): ALL_REGIONS_CONTINUOUS. */
inline Codelet rowReduce(ReduceOp op = ReduceOp::Add) { return {Vertex::ReduceContinuous, op}; }
/** Partials combined across tiles: the general reduce. */
inline Codelet partialsReduce(ReduceOp op = ReduceOp::Add) { return {Vertex::ReducePartials, op}; }

} // namespace ipusim::codelet
