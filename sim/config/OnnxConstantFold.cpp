// SPDX-License-Identifier: MIT
#include "sim/config/OnnxConstantFold.hpp"

#include <onnx/defs/tensor_proto_util.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <string>

namespace ipusim::config {
namespace {

using Values = std::vector<int64_t>;

/** a op b element by element, numpy-broadcast (sizes equal or 1). */
std::optional<Values> elementwise(const Values& a, const Values& b, const std::function<int64_t(int64_t, int64_t)>& op)
{
    if (a.size() != b.size() && a.size() != 1 && b.size() != 1)
        return std::nullopt;
    Values out(std::max(a.size(), b.size()));
    for (std::size_t k = 0; k < out.size(); ++k)
        out[k] = op(a[a.size() == 1 ? 0 : k], b[b.size() == 1 ? 0 : k]);
    return out;
}

std::optional<Values> binary(const std::string& op, const Values& a, const Values& b)
{
    static const std::map<std::string, std::function<int64_t(int64_t, int64_t)>> ops = {
        {"Add", std::plus<int64_t>()},
        {"Sub", std::minus<int64_t>()},
        {"Mul", std::multiplies<int64_t>()},
        {"Div", [](int64_t x, int64_t y) { return y == 0 ? 0 : x / y; }},
        {"Mod", [](int64_t x, int64_t y) { return y == 0 ? 0 : ((x % y) + y) % y; }}, // fmod 0: the divisor's sign, as numpy
        {"Equal", [](int64_t x, int64_t y) { return int64_t(x == y); }},
        {"Less", [](int64_t x, int64_t y) { return int64_t(x < y); }},
        {"Greater", [](int64_t x, int64_t y) { return int64_t(x > y); }},
        {"And", [](int64_t x, int64_t y) { return int64_t(x && y); }},
        {"Or", [](int64_t x, int64_t y) { return int64_t(x || y); }}};
    auto it = ops.find(op);
    return it == ops.end() ? std::nullopt : elementwise(a, b, it->second);
}

int64_t intAttr(const onnx::NodeProto& node, const std::string& name, int64_t fallback)
{
    for (const auto& a : node.attribute())
        if (a.name() == name)
            return a.i();
    return fallback;
}

/** ConstantOfShape's value: an integer or boolean scalar (0 without one). */
std::optional<int64_t> fillValue(const onnx::NodeProto& node)
{
    for (const auto& a : node.attribute())
        if (a.name() == "value") {
            const auto values = integerValues(a.t());
            return values && values->size() == 1 ? std::optional<int64_t>(values->front()) : std::nullopt;
        }
    return 0;
}

int64_t count(const Values& shape)
{
    int64_t n = 1;
    for (int64_t d : shape)
        n *= d;
    return n;
}

/** Whether a Cast's target type holds integers (or booleans): values that stay exact. */
bool integerType(int64_t type)
{
    using T = onnx::TensorProto_DataType;
    return type == T::TensorProto_DataType_INT64 || type == T::TensorProto_DataType_INT32 || type == T::TensorProto_DataType_BOOL ||
           type == T::TensorProto_DataType_INT8 || type == T::TensorProto_DataType_INT16 || type == T::TensorProto_DataType_UINT8;
}

} // namespace

std::optional<Values> integerValues(const onnx::TensorProto& t)
{
    using T = onnx::TensorProto_DataType;
    switch (t.data_type()) {
    case T::TensorProto_DataType_INT64: return onnx::ParseData<int64_t>(&t);
    case T::TensorProto_DataType_INT32: {
        const auto v = onnx::ParseData<int32_t>(&t);
        return Values(v.begin(), v.end());
    }
    case T::TensorProto_DataType_BOOL: { // one byte a value raw, else int32_data
        Values v(t.int32_data().begin(), t.int32_data().end());
        for (char c : t.raw_data())
            v.push_back(c != 0);
        return v;
    }
    default: return std::nullopt;
    }
}

std::optional<Values> foldIntegers(const onnx::NodeProto& node, const std::vector<std::optional<Values>>& operands)
{
    const std::string& op = node.op_type();
    auto in = [&](std::size_t k) -> const std::optional<Values>& {
        static const std::optional<Values> none;
        return k < operands.size() ? operands[k] : none;
    };
    if (op == "ConstantOfShape") { // a shape in, a constant of that many values out
        const auto value = fillValue(node);
        if (!in(0) || !value || count(*in(0)) < 0 || count(*in(0)) > 4096)
            return std::nullopt;
        return Values(std::size_t(count(*in(0))), *value);
    }
    for (std::size_t k = 0; k < operands.size(); ++k)
        if (!operands[k] && !(k > 0 && (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze")))
            return std::nullopt; // every operand known (Reshape's, Squeeze's and Unsqueeze's shapes aside: the values keep their order)
    if (operands.empty() || !in(0))
        return std::nullopt;
    const Values& a = *in(0);
    if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity")
        return a;
    if (op == "Concat" && intAttr(node, "axis", 0) == 0) { // of 1-D values, as shapes are
        Values out;
        for (const auto& v : operands)
            out.insert(out.end(), v->begin(), v->end());
        return out;
    }
    if (op == "Cast")
        return integerType(intAttr(node, "to", 0)) ? std::optional<Values>(a) : std::nullopt;
    if (op == "Not" || op == "Abs" || op == "Neg") {
        Values out = a;
        for (int64_t& v : out)
            v = op == "Not" ? int64_t(!v) : op == "Abs" ? std::llabs(v) : -v;
        return out;
    }
    if (op == "Where" && in(1) && in(2)) {
        const auto picked = elementwise(a, *in(1), [](int64_t c, int64_t x) { return c ? x : 0; });
        const auto other = elementwise(a, *in(2), [](int64_t c, int64_t y) { return c ? 0 : y; });
        return picked && other ? elementwise(*picked, *other, std::plus<int64_t>()) : std::nullopt;
    }
    if (op == "Expand" && in(1)) // a value repeated to a shape
        return a.size() == 1 && count(*in(1)) <= 4096 ? std::optional<Values>(Values(std::size_t(count(*in(1))), a[0]))
                                                       : (count(*in(1)) == int64_t(a.size()) ? std::optional<Values>(a) : std::nullopt);
    if (op == "Range" && in(1) && in(2) && a.size() == 1 && in(1)->size() == 1 && in(2)->size() == 1 && (*in(2))[0] != 0) {
        Values out;
        for (int64_t v = a[0]; ((*in(2))[0] > 0 ? v < (*in(1))[0] : v > (*in(1))[0]) && out.size() <= 4096; v += (*in(2))[0])
            out.push_back(v);
        return out;
    }
    if (operands.size() == 2 && in(1))
        return binary(op, a, *in(1));
    return std::nullopt;
}

} // namespace ipusim::config
