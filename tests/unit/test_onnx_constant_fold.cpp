// SPDX-License-Identifier: MIT
// Computations the importer folds itself (sim/config/OnnxConstantFold): each op on values
// worked by hand, as torch writes expand(n, -1, -1), arange, F.pad's pads and Swin's mask.
#include "sim/config/OnnxConstantFold.hpp"

#include <catch2/catch.hpp>
#include <onnx/onnx_pb.h>

#include <numeric>

using namespace ipusim::config;
using V = std::vector<int64_t>;
using D = std::vector<double>;
using Operands = std::vector<std::optional<ConstantTensor>>;

namespace {

onnx::NodeProto nodeOf(const std::string& op)
{
    onnx::NodeProto n;
    n.set_op_type(op);
    n.add_output("y");
    return n;
}

void setInt(onnx::NodeProto& node, const std::string& name, int64_t v)
{
    auto* a = node.add_attribute();
    a->set_name(name);
    a->set_i(v);
}

void setInts(onnx::NodeProto& node, const std::string& name, const V& v)
{
    auto* a = node.add_attribute();
    a->set_name(name);
    for (int64_t x : v)
        a->add_ints(x);
}

/** An integer tensor: 1-D unless a shape is given . */
ConstantTensor ints(const V& values, V shape = {})
{
    if (shape.empty())
        shape = {int64_t(values.size())};
    return ConstantTensor{shape, D(values.begin(), values.end()), onnx::TensorProto_DataType_INT64};
}

ConstantTensor reals(const D& values, const V& shape) { return ConstantTensor{shape, values, onnx::TensorProto_DataType_FLOAT}; }

ConstantTensor fold(const onnx::NodeProto& node, const Operands& operands)
{
    const auto out = foldConstant(node, operands);
    REQUIRE(out);
    return *out;
}

} // namespace

TEST_CASE("ONNX constant folding: expand(n, -1, -1)'s shape computation", "[onnx][fold]")
{
    // torch writes the target [1, -1, -1] as Where(Equal(shape, -1), ConstantOfShape(1), shape).
    const ConstantTensor shape = ints({2, -1, -1});
    const ConstantTensor zeros = fold(nodeOf("ConstantOfShape"), {ints({3})});
    CHECK(zeros.values == D{0, 0, 0}); // no value attribute: float zeros
    CHECK(zeros.real());
    onnx::NodeProto fill = nodeOf("ConstantOfShape");
    auto* a = fill.add_attribute();
    a->set_name("value");
    a->mutable_t()->set_data_type(onnx::TensorProto_DataType_INT64);
    a->mutable_t()->add_int64_data(1);
    const ConstantTensor ones = fold(fill, {ints({3})});
    CHECK(ones.integers() == V{1, 1, 1});
    CHECK_FALSE(ones.real());
    const ConstantTensor minusOnes = fold(nodeOf("Mul"), {ones, ints({-1})});
    const ConstantTensor equal = fold(nodeOf("Equal"), {shape, minusOnes});
    CHECK(equal.integers() == V{0, 1, 1});
    CHECK(fold(nodeOf("Where"), {equal, ones, shape}).integers() == V{2, 1, 1});
}

TEST_CASE("ONNX constant folding: arange, casts, masks and what is not folded", "[onnx][fold]")
{
    CHECK(fold(nodeOf("Range"), {ints({0}), ints({7}), ints({3})}).integers() == V{0, 3, 6});
    CHECK(fold(nodeOf("Range"), {ints({5}), ints({0}), ints({-2})}).integers() == V{5, 3, 1});
    CHECK(fold(nodeOf("Range"), {reals({0.5}, {}), reals({2}, {}), reals({0.5}, {})}).values == D{0.5, 1, 1.5});
    CHECK(fold(nodeOf("Mod"), {ints({-1, 5, 7}), ints({3})}).integers() == V{2, 2, 1}); // the divisor's sign, as numpy
    onnx::NodeProto fmod = nodeOf("Mod");
    setInt(fmod, "fmod", 1);
    CHECK(fold(fmod, {reals({-1, 5}, {2}), reals({3}, {})}).values == D{-1, 2}); // the dividend's, as C
    CHECK(fold(nodeOf("Div"), {ints({-7, 7}), ints({2})}).integers() == V{-3, 3});  // toward zero
    CHECK(fold(nodeOf("Less"), {ints({1, 5}), ints({3})}).integers() == V{1, 0});
    CHECK(fold(nodeOf("Not"), {ints({1, 0})}).integers() == V{0, 1});
    CHECK(fold(nodeOf("Expand"), {ints({4}), ints({2, 3})}).integers() == V{4, 4, 4, 4, 4, 4});
    CHECK(fold(nodeOf("Concat"), {ints({2}), ints({-1}), ints({49, 3})}).integers() == V{2, -1, 49, 3});
    // An attention scale as torch writes (C // heads) ** -0.5: Pow of two constants.
    const ConstantTensor scale = fold(nodeOf("Pow"), {reals({16}, {}), reals({-0.5}, {})});
    CHECK(scale.real());
    CHECK(scale.shape.empty());
    CHECK(scale.values == D{0.25});
    onnx::NodeProto cast = nodeOf("Cast");
    setInt(cast, "to", onnx::TensorProto_DataType_BOOL);
    CHECK(fold(cast, {ints({0, 2})}).integers() == V{0, 1});
    onnx::NodeProto toFloat = nodeOf("Cast");
    setInt(toFloat, "to", onnx::TensorProto_DataType_FLOAT);
    CHECK(fold(toFloat, {ints({0, 2})}).real());
    onnx::NodeProto toInt = nodeOf("Cast");
    setInt(toInt, "to", onnx::TensorProto_DataType_INT64);
    CHECK(fold(toInt, {reals({-1.5, 2.7}, {2})}).integers() == V{-1, 2});
    CHECK_FALSE(foldConstant(nodeOf("Add"), {ints({1, 2}), std::nullopt})); // data
    CHECK_FALSE(foldConstant(nodeOf("Add"), {ints({1, 2}), ints({1, 2, 3})})); // no broadcast
    CHECK_FALSE(foldConstant(nodeOf("Softmax"), {ints({1, 2})}));
    CHECK_FALSE(foldConstant(nodeOf("ConstantOfShape"), {ints({4096, 4096})})); // past kMaxFoldedValues
}

TEST_CASE("ONNX constant folding: broadcasting and views of n-dimensional tensors", "[onnx][fold]")
{
    // [2, 1] + [3] broadcasts to [2, 3].
    const ConstantTensor sum = fold(nodeOf("Add"), {ints({10, 20}, {2, 1}), ints({1, 2, 3})});
    CHECK(sum.shape == V{2, 3});
    CHECK(sum.integers() == V{11, 12, 13, 21, 22, 23});
    const ConstantTensor m = ints({0, 1, 2, 3, 4, 5}, {2, 3});
    onnx::NodeProto transpose = nodeOf("Transpose");
    const ConstantTensor t = fold(transpose, {m}); // no perm: reversed
    CHECK(t.shape == V{3, 2});
    CHECK(t.integers() == V{0, 3, 1, 4, 2, 5});
    CHECK(fold(nodeOf("Reshape"), {m, ints({0, -1, 1})}).shape == V{2, 3, 1}); // 0 keeps, -1 takes the rest
    CHECK(fold(nodeOf("Unsqueeze"), {m, ints({0, -1})}).shape == V{1, 2, 3, 1});
    CHECK(fold(nodeOf("Squeeze"), {ints({7}, {1, 1}), std::nullopt}).shape.empty());
    onnx::NodeProto along1 = nodeOf("Concat");
    setInt(along1, "axis", 1);
    CHECK(fold(along1, {m, ints({9, 9}, {2, 1})}).integers() == V{0, 1, 2, 9, 3, 4, 5, 9});
    onnx::NodeProto gather = nodeOf("Gather");
    setInt(gather, "axis", 1);
    const ConstantTensor columns = fold(gather, {m, ints({2, -3})});
    CHECK(columns.shape == V{2, 2});
    CHECK(columns.integers() == V{2, 0, 5, 3});
}

TEST_CASE("ONNX constant folding: F.pad's pads reversed by a Slice of step -1", "[onnx][fold]")
{
    // torch reorders F.pad's (0, 0, 0, pad_r, 0, pad_b) pairs last-dimension-first into ONNX's
    // begins-then-ends: Reshape [-1, 2], Slice(start -1, end -inf, axis 0, step -1), Transpose,
    // Reshape [-1].
    const ConstantTensor pairs = fold(nodeOf("Reshape"), {ints({0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 3}), ints({-1, 2})});
    const ConstantTensor reversed =
        fold(nodeOf("Slice"), {pairs, ints({-1}), ints({-9223372036854775807LL}), ints({0}), ints({-1})});
    CHECK(reversed.shape == V{6, 2});
    CHECK(reversed.integers() == V{0, 3, 0, 0, 0, 2, 0, 1, 0, 0, 0, 0});
    onnx::NodeProto swap = nodeOf("Transpose");
    setInts(swap, "perm", {1, 0});
    const ConstantTensor pads = fold(nodeOf("Reshape"), {fold(swap, {reversed}), ints({-1})});
    CHECK(pads.integers() == V{0, 0, 0, 0, 0, 0, 3, 0, 2, 1, 0, 0});
    // A forward slice with a step: [1, 4) by 2 of 0..5.
    CHECK(fold(nodeOf("Slice"), {ints({0, 1, 2, 3, 4, 5}), ints({1}), ints({4}), std::nullopt, ints({2})}).integers() == V{1, 3});
}

TEST_CASE("ONNX constant folding: Swin's shifted-window attention mask", "[onnx][fold]")
{
    // A 4 x 4 map, windows of 2, shift 1: torchvision fills regions of attn_mask with counts
    // (ScatterND of slices), here rows 2 and 3 of a zero map take 3 and 6 in their first columns.
    ConstantTensor map = fold(nodeOf("ConstantOfShape"), {ints({4, 4})});
    map = fold(nodeOf("ScatterND"), {map, ints({2, 0, 2, 1, 3, 0, 3, 1}, {2, 2, 2}), reals({3, 3, 6, 6}, {2, 2})});
    CHECK(map.values == D{0, 0, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 6, 6, 0, 0});
    map.values = {0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 6, 6, 7, 8}; // every region filled so
    // view(2, 2, 2, 2).permute(0, 2, 1, 3).reshape(4, 4): one row a window.
    onnx::NodeProto windows = nodeOf("Transpose");
    setInts(windows, "perm", {0, 2, 1, 3});
    const ConstantTensor perWindow =
        fold(nodeOf("Reshape"), {fold(windows, {fold(nodeOf("Reshape"), {map, ints({2, 2, 2, 2})})}), ints({4, 4})});
    CHECK(perWindow.values == D{0, 0, 0, 0, 1, 2, 1, 2, 3, 3, 6, 6, 4, 5, 7, 8});
    // mask.unsqueeze(1) - mask.unsqueeze(2), then masked_fill(!= 0, -100).masked_fill(== 0, 0).
    const ConstantTensor diff = fold(nodeOf("Sub"), {fold(nodeOf("Unsqueeze"), {perWindow, ints({1})}),
                                                     fold(nodeOf("Unsqueeze"), {perWindow, ints({2})})});
    CHECK(diff.shape == V{4, 4, 4});
    const ConstantTensor zero = reals({0}, {});
    const ConstantTensor differs = fold(nodeOf("Not"), {fold(nodeOf("Equal"), {diff, zero})});
    const ConstantTensor mask = fold(nodeOf("Where"), {differs, reals({-100}, {}), diff});
    CHECK(mask.real());
    // Pairs of a window's positions in different regions: 0 in the first window, 8, 8 and 12.
    CHECK(std::accumulate(mask.values.begin(), mask.values.begin() + 16, 0.0) == 0);
    CHECK(std::accumulate(mask.values.begin(), mask.values.end(), 0.0) == -100.0 * (8 + 8 + 12));
}
