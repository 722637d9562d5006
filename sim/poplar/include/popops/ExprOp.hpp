// SPDX-License-Identifier: MIT
#pragma once
// ipusim's PopLibs API: the element-wise operations popops::map takes.
namespace popops::expr {

enum class BinaryOpType { ADD, SUBTRACT, MULTIPLY, DIVIDE, MAXIMUM, MINIMUM, POWER };
enum class UnaryOpType { ABSOLUTE, EXPONENT, LOGARITHM, LOGICAL_NOT, NEGATE, SQRT, SQUARE, TANH, SIGMOID, RELU };

} // namespace popops::expr
