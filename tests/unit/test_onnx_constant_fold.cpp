// SPDX-License-Identifier: MIT
// Shape computations the importer computes itself (sim/config/OnnxConstantFold): each op on
// values worked by hand, as torch writes expand(n, -1, -1) and arange.
#include "sim/config/OnnxConstantFold.hpp"

#include <catch2/catch.hpp>
#include <onnx/onnx_pb.h>

using namespace ipusim::config;
using V = std::vector<int64_t>;
using Operands = std::vector<std::optional<V>>;

namespace {

onnx::NodeProto nodeOf(const std::string& op)
{
    onnx::NodeProto n;
    n.set_op_type(op);
    n.add_output("y");
    return n;
}

} // namespace

TEST_CASE("ONNX constant folding: expand(n, -1, -1)'s shape computation", "[onnx][fold]")
{
    // torch writes the target [1, -1, -1] as Where(Equal(shape, -1), ConstantOfShape(1), shape).
    const V shape{2, -1, -1};
    const auto ones = foldIntegers(nodeOf("ConstantOfShape"), Operands{V{3}});
    REQUIRE(ones);
    CHECK(*ones == V{0, 0, 0}); // no value attribute: zeros
    onnx::NodeProto fill = nodeOf("ConstantOfShape");
    auto* a = fill.add_attribute();
    a->set_name("value");
    a->mutable_t()->set_data_type(onnx::TensorProto_DataType_INT64);
    a->mutable_t()->add_int64_data(1);
    CHECK(*foldIntegers(fill, Operands{V{3}}) == V{1, 1, 1});
    const auto minusOnes = foldIntegers(nodeOf("Mul"), Operands{V{1, 1, 1}, V{-1}});
    CHECK(*minusOnes == V{-1, -1, -1});
    const auto equal = foldIntegers(nodeOf("Equal"), Operands{shape, *minusOnes});
    CHECK(*equal == V{0, 1, 1});
    CHECK(*foldIntegers(nodeOf("Where"), Operands{*equal, V{1, 1, 1}, shape}) == V{2, 1, 1});
}

TEST_CASE("ONNX constant folding: arange, casts, masks and what is not folded", "[onnx][fold]")
{
    CHECK(*foldIntegers(nodeOf("Range"), Operands{V{0}, V{7}, V{3}}) == V{0, 3, 6});
    CHECK(*foldIntegers(nodeOf("Range"), Operands{V{5}, V{0}, V{-2}}) == V{5, 3, 1});
    CHECK(*foldIntegers(nodeOf("Mod"), Operands{V{-1, 5, 7}, V{3}}) == V{2, 2, 1}); // the divisor's sign, as numpy
    CHECK(*foldIntegers(nodeOf("Less"), Operands{V{1, 5}, V{3}}) == V{1, 0});
    CHECK(*foldIntegers(nodeOf("Not"), Operands{V{1, 0}}) == V{0, 1});
    CHECK(*foldIntegers(nodeOf("Expand"), Operands{V{4}, V{2, 3}}) == V{4, 4, 4, 4, 4, 4});
    CHECK(*foldIntegers(nodeOf("Reshape"), Operands{V{1, 2, 3, 4}, V{2, 2}}) == V{1, 2, 3, 4});
    CHECK(*foldIntegers(nodeOf("Concat"), Operands{V{2}, V{-1}, V{49, 3}}) == V{2, -1, 49, 3});
    onnx::NodeProto cast = nodeOf("Cast");
    auto* to = cast.add_attribute();
    to->set_name("to");
    to->set_i(onnx::TensorProto_DataType_BOOL);
    CHECK(*foldIntegers(cast, Operands{V{0, 2}}) == V{0, 2});
    to->set_i(onnx::TensorProto_DataType_FLOAT); // to floating point: not an integer computation
    CHECK_FALSE(foldIntegers(cast, Operands{V{0, 2}}));
    CHECK_FALSE(foldIntegers(nodeOf("Add"), Operands{V{1, 2}, std::nullopt})); // data
    CHECK_FALSE(foldIntegers(nodeOf("Add"), Operands{V{1, 2}, V{1, 2, 3}}));    // no broadcast
    CHECK_FALSE(foldIntegers(nodeOf("Softmax"), Operands{V{1, 2}}));
}
