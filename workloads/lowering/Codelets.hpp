// SPDX-License-Identifier: MIT
#pragma once
#include "models/timing/VertexTable.hpp"

// Short names for the codelets and vertex calls the lowering names most, so an op's recipe
// reads like the vertices it runs.
namespace ipusim::codelet {

inline Codelet unary(costs::UnaryOpKind op) { return {Vertex::UnaryOp1D, op}; }
inline Codelet unaryInPlace(costs::UnaryOpKind op) { return {Vertex::UnaryOp1DInPlace, op}; }
inline Codelet binary(costs::BinaryOpKind op) { return {Vertex::BinaryOp1D, op}; }
inline Codelet binaryInPlace(costs::BinaryOpKind op) { return {Vertex::BinaryOp1DInPlace, op}; }
/** A tensor op= a scalar, in place (a constant factor, the optimizers' scalars). */
inline Codelet byScalar(costs::BinaryOpKind op) { return {Vertex::BroadcastScalar1DInPlace, op}; }
/** A row reduction (softmax, LayerNorm, losses): ALL_REGIONS_CONTINUOUS. */
inline Codelet rowReduce(ReduceOp op = ReduceOp::Add) { return {Vertex::ReduceContinuous, op}; }
/** Partials combined across tiles: the general reduce. */
inline Codelet partialsReduce(ReduceOp op = ReduceOp::Add) { return {Vertex::ReducePartials, op}; }

} // namespace ipusim::codelet

namespace ipusim::calls {

inline VertexCall unary(costs::UnaryOpKind op, Precision type, uint64_t n) { return {codelet::unary(op), ElementArgs{type, n}}; }
inline VertexCall unaryInPlace(costs::UnaryOpKind op, Precision type, uint64_t n)
{
    return {codelet::unaryInPlace(op), ElementArgs{type, n}};
}
inline VertexCall binary(costs::BinaryOpKind op, Precision type, uint64_t n) { return {codelet::binary(op), ElementArgs{type, n}}; }
inline VertexCall byScalar(costs::BinaryOpKind op, Precision type, uint64_t n) { return {codelet::byScalar(op), ElementArgs{type, n}}; }
/** popnn's GELU forward, in place. */
inline VertexCall gelu(Precision type, uint64_t n) { return {{Vertex::NonLinearity1DInPlace, costs::NonLinearity::Gelu}, ElementArgs{type, n}}; }
inline VertexCall nonLinearityGrad(costs::NonLinearity f, Precision type, uint64_t n)
{
    return {{Vertex::NonLinearityGrad1D, f}, ElementArgs{type, n}};
}
/** `rows` rows of `length` reduced along the row, in `type`. */
inline VertexCall rowReduce(Precision type, uint64_t rows, uint64_t length, ReduceOp op = ReduceOp::Add)
{
    return {codelet::rowReduce(op), ReduceArgs{type, type, rows, length}};
}
/** `outputs` results of `partials` partials each, across tiles. */
inline VertexCall partialsReduce(Precision type, uint64_t outputs, uint64_t partials, ReduceOp op = ReduceOp::Add)
{
    return {codelet::partialsReduce(op), ReduceArgs{type, type, outputs, partials}};
}
/** An AMP convolution (or matmul) vertex: 1x1 kernels take ConvPartial1x1Out, others ConvPartialnx1. */
inline VertexCall conv(const costs::ConvShape& s)
{
    return {s.kernelHeight * s.kernelWidth == 1 ? Vertex::ConvPartial1x1Out : Vertex::ConvPartialnx1, s};
}
inline VertexCall scaledAdd(Precision type, uint64_t n) { return {Vertex::ScaledAddSupervisor, ElementArgs{type, n}}; }
inline VertexCall cast(Precision from, Precision to, uint64_t n) { return {Vertex::Cast1D, CastArgs{from, to, n}}; }
inline VertexCall fill(Precision type, uint64_t n) { return {Vertex::Fill, ElementArgs{type, n}}; }
inline VertexCall copy(uint64_t bytes, unsigned elementBytes) { return {Vertex::Copy, CopyArgs{bytes, elementBytes}}; }

} // namespace ipusim::calls
