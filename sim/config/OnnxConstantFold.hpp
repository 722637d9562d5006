// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

namespace onnx {
class NodeProto;
class TensorProto;
} // namespace onnx

// Shape computations as torch writes them (x.size(), expand(n, -1, -1), arange, masks of
// indices) are integer arithmetic on known values. ONNX shape inference's data propagation
// computes some (Shape, Gather, Concat, ...); the rest are computed here, so that no shape
// computation stands in the way of an import.
namespace ipusim::config {

/** A node's output over integer (or boolean, as 0 and 1) operands known as flat values (a
 *  scalar is one value; broadcasting is numpy's over such 1-D values), as ONNX defines the op:
 *  Add, Sub, Mul, Div, Mod, Equal, Less, Greater, Not, And, Or, Where, Cast (to an integer or
 *  boolean type), Reshape, Squeeze, Unsqueeze, Identity, Concat (on axis 0), Expand,
 *  ConstantOfShape (of an integer value), Range, Abs, Neg. Nothing for another op, an unknown operand or values that do not
 *  broadcast. */
/** An integer or boolean tensor's values (as 0 and 1); nothing for another type. */
std::optional<std::vector<int64_t>> integerValues(const onnx::TensorProto& t);

std::optional<std::vector<int64_t>> foldIntegers(const onnx::NodeProto& node, const std::vector<std::optional<std::vector<int64_t>>>& operands);

} // namespace ipusim::config
