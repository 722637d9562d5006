// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include <onnx/onnx_pb.h>

// Computations on known values as torch writes them: shapes (x.size(), expand(n, -1, -1),
// arange, F.pad's reordered pads), and constants built in the graph (Swin's shifted-window
// attention mask: ConstantOfShape, ScatterND, Equal, Where; an attention scale as
// Pow(head size, -0.5)). ONNX shape inference's data propagation computes some shapes (Shape,
// Gather, Concat, ...); the rest are computed here, as PopART's constant folding would before
// lowering, so that none stands in the way of an import.
namespace ipusim::config {

/** Whether an ONNX element type (TensorProto's data_type) is floating point. */
bool realElementType(int64_t onnxType);

/** A known tensor: its shape, its values in row-major order and its ONNX element type.
 *  Integers and booleans (as 0 and 1) are held exactly as whole doubles (to 2^53, far past any
 *  shape). */
struct ConstantTensor {
    std::vector<int64_t> shape;
    std::vector<double> values;
    int32_t type = 1; // onnx::TensorProto_DataType_FLOAT

    bool real() const { return realElementType(type); }

    /** The values as integers (saturated to int64's range, as slice bounds use its extremes). */
    std::vector<int64_t> integers() const;
};

/** The largest tensor computed: Swin-B's mask at 224 is 64 x 49 x 49 = 153,664 values. A larger
 *  computation is left to stand in the way rather than take the importer's memory. */
inline constexpr int64_t kMaxFoldedValues = int64_t(1) << 21;

/** A constant's values (float, double, integer or boolean types); nothing for another type. */
std::optional<ConstantTensor> constantTensor(const onnx::TensorProto& t);

/** A tensor as an ONNX constant's value; nothing for an element type it cannot hold here
 *  (16-bit floating point). */
std::optional<onnx::TensorProto> tensorProtoOf(const ConstantTensor& t);

/** An integer or boolean constant's values (as 0 and 1); nothing for another type. */
std::optional<std::vector<int64_t>> integerValues(const onnx::TensorProto& t);

/** A node's output over known operands (an omitted optional operand is nothing), as ONNX (opset
 *  13 to 17) defines the op, broadcasting as numpy: Add, Sub, Mul, Div, Mod, Pow, Min, Max,
 *  Equal, Less, LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not, Abs, Neg, Sqrt,
 *  Reciprocal, Floor, Ceil, Where, Cast, Identity, Reshape, Flatten, Squeeze, Unsqueeze,
 *  Transpose, Concat, Slice, Gather, ScatterND, Expand, ConstantOfShape, Range. Nothing for
 *  another op, an unknown operand, operands the op does not accept, or a result of more than
 *  kMaxFoldedValues values. */
std::optional<ConstantTensor> foldConstant(const onnx::NodeProto& node, const std::vector<std::optional<ConstantTensor>>& operands);

} // namespace ipusim::config
