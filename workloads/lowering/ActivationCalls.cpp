// SPDX-License-Identifier: MIT
#include "workloads/lowering/ActivationCalls.hpp"

#include "workloads/lowering/Codelets.hpp"

#include <stdexcept>
#include <string>

namespace ipusim {

namespace {

using costs::BinaryOpKind;
using costs::UnaryOpKind;

VertexCall scalarOut(BinaryOpKind op, Precision type, uint64_t e) { return {{Vertex::BroadcastScalar1D, op}, ElementArgs{type, e}}; }

/** PopART has no HardSwish: PopTorch writes hardswish as where(abs(x) > 3, max(x, 0), (x + 3) x / 6)
 *  (ActivationOps.cpp), seven ops with scalar constants, each its own compute set: max(x, 0) on
 *  a copy of x, abs, the comparison (bool out), x + 3, times x in place, / 6, and the select in
 *  place on the max. */
std::vector<VertexCall> hardSwish(Precision type, uint64_t e)
{
    using namespace calls;
    return {copy(e * bytesOf(type), bytesOf(type)), scalarOut(BinaryOpKind::Max, type, e), unary(UnaryOpKind::Abs, type, e),
            scalarOut(BinaryOpKind::Greater, type, e), scalarOut(BinaryOpKind::Add, type, e),
            {codelet::binaryInPlace(BinaryOpKind::Mul), ElementArgs{type, e}}, scalarOut(BinaryOpKind::Div, type, e),
            {Vertex::SelectInPlace, CountArgs{e}}};
}

/** Its gradient, PopART's autodiff of those ops (estimate: the patterns' rewrites are not
 *  traced): each select arm's condition cast and multiplied in (one arm's negated first), the
 *  division's and both multiplication's gradients, the max's generated codelet, and the three
 *  contributions to dx summed. Only the input is kept for it (the forward's intermediates are
 *  not counted as saved). */
std::vector<VertexCall> hardSwishGrad(Precision type, uint64_t e)
{
    using namespace calls;
    const VertexCall castCondition{Vertex::Cast1D, CastArgs{std::nullopt, type, e}};
    return {castCondition,
            binary(BinaryOpKind::Mul, type, e),
            unary(UnaryOpKind::LogicalNot, type, e),
            castCondition,
            binary(BinaryOpKind::Mul, type, e),
            scalarOut(BinaryOpKind::Div, type, e),
            binary(BinaryOpKind::Mul, type, e),
            binary(BinaryOpKind::Mul, type, e),
            {{Vertex::FusedMap, costs::MapExpr::MaxArgGrad}, ElementArgs{type, e}},
            binary(BinaryOpKind::Add, type, e),
            binary(BinaryOpKind::Add, type, e)};
}

} // namespace

std::vector<VertexCall> activationCalls(OpKind kind, Precision type, uint64_t e)
{
    using costs::BinaryOpKind;
    using costs::NonLinearity;
    using costs::UnaryOpKind;
    using namespace calls;
    switch (kind) {
    // PopART runs ReLU in place (ReluInplace): UnaryOp1DInPlace<RELU> (poplibs-costs §2); its
    // gradient and those of sigmoid, tanh and GELU are each one popnn NonLinearityGrad1D (§3.5).
    case OpKind::Relu: return {unaryInPlace(UnaryOpKind::Relu, type, e)};
    case OpKind::ReluGrad: return {nonLinearityGrad(NonLinearity::Relu, type, e)};
    // PopART's ClipInplace: popops ClampInPlace, its bounds broadcast tensors (so never fused).
    // Its gradient (ClipGradOpx), dy where the output is strictly inside the bounds, runs unfused:
    // per bound the output compared with it (a scalar broadcast, bool out), cast, times dy.
    case OpKind::Clip: return {{Vertex::ClampInPlace, ElementArgs{type, e}}};
    case OpKind::ClipGrad: {
        const std::vector<VertexCall> bound = {{{Vertex::BroadcastScalar1D, BinaryOpKind::NotEqual}, ElementArgs{type, e}},
                                               {Vertex::Cast1D, CastArgs{std::nullopt, type, e}}, binary(BinaryOpKind::Mul, type, e)};
        std::vector<VertexCall> both = bound;
        both.insert(both.end(), bound.begin(), bound.end());
        return both;
    }
    // PopTorch's gelu (exact or tanh) is popnn's GELU, the tanh approximation, in place (§2, §3.5).
    case OpKind::Gelu: return {gelu(type, e)};
    case OpKind::GeluGrad: return {nonLinearityGrad(NonLinearity::Gelu, type, e)};
    case OpKind::Tanh: return {unary(UnaryOpKind::Tanh, type, e)};
    case OpKind::TanhGrad: return {nonLinearityGrad(NonLinearity::Tanh, type, e)};
    case OpKind::Sigmoid: return {unaryInPlace(UnaryOpKind::Sigmoid, type, e)}; // SigmoidInplace
    case OpKind::SigmoidGrad: return {nonLinearityGrad(NonLinearity::Sigmoid, type, e)};
    case OpKind::Exp: return {unary(UnaryOpKind::Exp, type, e)};
    case OpKind::ExpGrad: return {binary(BinaryOpKind::Mul, type, e)}; // the incoming gradient times the output
    // PopART's Sqrt is UnaryOp<SQRT>, not in place; its gradient (the SqrtGradOp pattern) scales
    // the output by 2 (ScaleInplace: a scalar broadcast) and divides the incoming gradient by it.
    case OpKind::Sqrt: return {unary(UnaryOpKind::Sqrt, type, e)};
    case OpKind::SqrtGrad: return {byScalar(BinaryOpKind::Mul, type, e), binary(BinaryOpKind::Div, type, e)};
    // PopART's Reciprocal is popops::map(DIVIDE, 1, x): priced as BinaryOp1D<DIVIDE> over x, the
    // constant broadcast (estimate: the vertex popops picks for a scalar first operand of a
    // non-commutative op is not restated in poplibs-costs). Its gradient (ReciprocalGradOpPattern)
    // is four passes: x squared, 1 / that (DIVIDE again), negated in place, times dy.
    case OpKind::Reciprocal: return {binary(BinaryOpKind::Div, type, e)};
    case OpKind::ReciprocalGrad:
        return {unary(UnaryOpKind::Square, type, e), binary(BinaryOpKind::Div, type, e), unaryInPlace(UnaryOpKind::Neg, type, e),
                binary(BinaryOpKind::Mul, type, e)};
    // PopART's Pow by a constant exponent is popops::map(POWER, x, c): BroadcastScalar1D<POWER>
    // (popops has no power instruction: 325 cycles an fp16 element). Its gradient
    // (PowArg0GradOpPattern) is c x^(c - 1) dy: x to c - 1 (POWER again), times c (a scalar
    // broadcast), times dy, then a Where keeping it unless c is 0 (SelectInPlace's estimate).
    case OpKind::Pow: return {{{Vertex::BroadcastScalar1D, BinaryOpKind::Pow}, ElementArgs{type, e}}};
    case OpKind::PowGrad:
        return {{{Vertex::BroadcastScalar1D, BinaryOpKind::Pow}, ElementArgs{type, e}}, byScalar(BinaryOpKind::Mul, type, e),
                binary(BinaryOpKind::Mul, type, e), {Vertex::SelectInPlace, CountArgs{e}}};
    // PopART's Erf is UnaryOp<ERF>; its gradient, dy 2 / sqrt(pi) exp(-x^2), five passes: x
    // squared, negated and exponentiated in place, times the constant (a scalar broadcast in
    // place), times dy.
    case OpKind::Erf: return {unary(UnaryOpKind::Erf, type, e)};
    case OpKind::ErfGrad:
        return {unary(UnaryOpKind::Square, type, e), unaryInPlace(UnaryOpKind::Neg, type, e), unaryInPlace(UnaryOpKind::Exp, type, e),
                byScalar(BinaryOpKind::Mul, type, e), binary(BinaryOpKind::Mul, type, e)};
    // PopTorch's hardsigmoid is PopART's HardSigmoid: its gradient reads x, so not the in-place
    // variant but a copy of x and the in-place generated map codelet of its four operations on it;
    // the gradient one codelet of eleven over dy and x (hardsigmoidx.cpp).
    case OpKind::HardSigmoid:
        return {copy(e * bytesOf(type), bytesOf(type)), {{Vertex::FusedMap, costs::MapExpr::HardSigmoid}, ElementArgs{type, e}}};
    case OpKind::HardSigmoidGrad: return {{{Vertex::FusedMap, costs::MapExpr::HardSigmoidGrad}, ElementArgs{type, e}}};
    case OpKind::HardSwish: return hardSwish(type, e);
    case OpKind::HardSwishGrad: return hardSwishGrad(type, e);
    default: throw std::logic_error("no activation recipe for op kind " + std::to_string(int(kind)));
    }
}

} // namespace ipusim
