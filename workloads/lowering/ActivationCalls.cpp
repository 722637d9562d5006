// SPDX-License-Identifier: MIT
#include "workloads/lowering/ActivationCalls.hpp"

#include "workloads/lowering/Codelets.hpp"

#include <stdexcept>
#include <string>

namespace ipusim {

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
    // PopART's Erf is UnaryOp<ERF>; its gradient, dy 2 / sqrt(pi) exp(-x^2), five passes: x
    // squared, negated and exponentiated in place, times the constant (a scalar broadcast in
    // place), times dy.
    case OpKind::Erf: return {unary(UnaryOpKind::Erf, type, e)};
    case OpKind::ErfGrad:
        return {unary(UnaryOpKind::Square, type, e), unaryInPlace(UnaryOpKind::Neg, type, e), unaryInPlace(UnaryOpKind::Exp, type, e),
                byScalar(BinaryOpKind::Mul, type, e), binary(BinaryOpKind::Mul, type, e)};
    default: throw std::logic_error("no activation recipe for op kind " + std::to_string(int(kind)));
    }
}

} // namespace ipusim
