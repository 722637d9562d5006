// SPDX-License-Identifier: MIT
#include "sim/config/OnnxConstantFold.hpp"

#include <onnx/defs/tensor_proto_util.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>

namespace ipusim::config {
namespace {

using Shape = std::vector<int64_t>;
using Operands = std::vector<std::optional<ConstantTensor>>;
using T = onnx::TensorProto_DataType;

/** The number of values of a shape; -1 for a negative dimension or past kMaxFoldedValues. */
int64_t countOf(const Shape& shape)
{
    int64_t n = 1;
    for (int64_t d : shape) {
        if (d < 0 || (d > 0 && n > kMaxFoldedValues / d))
            return -1;
        n *= d;
    }
    return n;
}

bool fits(const Shape& shape) { return countOf(shape) >= 0; }

Shape stridesOf(const Shape& shape)
{
    Shape strides(shape.size(), 1);
    for (std::size_t k = shape.size(); k-- > 1;)
        strides[k - 1] = strides[k] * shape[k];
    return strides;
}

/** The values at out's positions of a tensor read with `strides` from `offset`: a transpose,
 *  a slice or a broadcast, each a strided view. */
std::vector<double> readStrided(const std::vector<double>& in, const Shape& out, const Shape& strides, int64_t offset)
{
    const int64_t n = countOf(out);
    std::vector<double> values;
    values.reserve(std::size_t(n));
    Shape at(out.size(), 0);
    int64_t from = offset;
    for (int64_t i = 0; i < n; ++i) {
        values.push_back(in[std::size_t(from)]);
        for (std::size_t k = out.size(); k-- > 0;) {
            if (++at[k] < out[k]) {
                from += strides[k];
                break;
            }
            from -= strides[k] * (out[k] - 1);
            at[k] = 0;
        }
    }
    return values;
}

/** numpy's broadcast of two shapes: trailing dimensions equal or one of them 1. */
std::optional<Shape> broadcastShape(const Shape& a, const Shape& b)
{
    Shape out(std::max(a.size(), b.size()));
    for (std::size_t k = 0; k < out.size(); ++k) {
        const int64_t x = k < out.size() - a.size() ? 1 : a[k - (out.size() - a.size())];
        const int64_t y = k < out.size() - b.size() ? 1 : b[k - (out.size() - b.size())];
        if (x != y && x != 1 && y != 1)
            return std::nullopt;
        out[k] = x == 1 ? y : x;
    }
    return out;
}

/** A tensor's values repeated to a shape it broadcasts to. */
std::vector<double> broadcastTo(const ConstantTensor& t, const Shape& out)
{
    const Shape own = stridesOf(t.shape);
    Shape strides(out.size(), 0);
    const std::size_t lead = out.size() - t.shape.size();
    for (std::size_t k = 0; k < t.shape.size(); ++k)
        strides[lead + k] = t.shape[k] == 1 ? 0 : own[k];
    return readStrided(t.values, out, strides, 0);
}

/** f over the operands' values element by element, broadcast to one shape. */
std::optional<ConstantTensor> elementwise(const std::vector<const ConstantTensor*>& in, int32_t type,
                                          const std::function<double(const std::vector<double>&)>& f)
{
    Shape shape = in[0]->shape;
    for (const ConstantTensor* t : in) {
        const auto s = broadcastShape(shape, t->shape);
        if (!s)
            return std::nullopt;
        shape = *s;
    }
    if (!fits(shape))
        return std::nullopt;
    std::vector<std::vector<double>> spread;
    for (const ConstantTensor* t : in)
        spread.push_back(broadcastTo(*t, shape));
    ConstantTensor out{shape, {}, type};
    std::vector<double> args(in.size());
    for (std::size_t i = 0; i < spread[0].size(); ++i) {
        for (std::size_t k = 0; k < in.size(); ++k)
            args[k] = spread[k][i];
        out.values.push_back(f(args));
    }
    return out;
}

} // namespace

bool realElementType(int64_t type)
{
    return type == T::TensorProto_DataType_FLOAT || type == T::TensorProto_DataType_DOUBLE || type == T::TensorProto_DataType_FLOAT16 ||
           type == T::TensorProto_DataType_BFLOAT16;
}

namespace {

const onnx::AttributeProto* attribute(const onnx::NodeProto& node, const std::string& name)
{
    for (const auto& a : node.attribute())
        if (a.name() == name)
            return &a;
    return nullptr;
}

int64_t intAttr(const onnx::NodeProto& node, const std::string& name, int64_t fallback)
{
    const auto* a = attribute(node, name);
    return a ? a->i() : fallback;
}

/** An axis counted from the end made a position in `rank` dimensions; nothing when outside. */
std::optional<std::size_t> axisIn(int64_t axis, std::size_t rank)
{
    if (axis < 0)
        axis += int64_t(rank);
    return axis < 0 || axis >= int64_t(rank) ? std::nullopt : std::optional<std::size_t>(std::size_t(axis));
}

/** Axes given as operand k (opset 13) or attribute `axes` (before it); empty when neither. */
Shape axesOf(const onnx::NodeProto& node, const Operands& in, std::size_t k)
{
    if (k < in.size() && in[k])
        return in[k]->integers();
    const auto* a = attribute(node, "axes");
    return a ? Shape(a->ints().begin(), a->ints().end()) : Shape{};
}

// --- element-wise ops ----------------------------------------------------------------------

/** Integer division as ONNX's Div of integers (toward zero, as C); a zero divisor gives 0. */
double divide(double x, double y, bool real) { return real ? x / y : y == 0 ? 0 : std::trunc(x / y); }

/** Mod: the divisor's sign (fmod 0, numpy's mod) or the dividend's (fmod 1, C's fmod). */
double modulo(double x, double y, bool cStyle)
{
    if (y == 0)
        return 0;
    const double r = std::fmod(x, y);
    return cStyle || r == 0 || (r < 0) == (y < 0) ? r : r + y;
}

std::optional<ConstantTensor> binaryOp(const onnx::NodeProto& node, const ConstantTensor& a, const ConstantTensor& b)
{
    using F = std::function<double(double, double)>;
    const std::string& op = node.op_type();
    const bool real = a.real();
    static const std::map<std::string, F> comparisons = {
        {"Equal", [](double x, double y) { return double(x == y); }},        {"Less", [](double x, double y) { return double(x < y); }},
        {"LessOrEqual", [](double x, double y) { return double(x <= y); }},  {"Greater", [](double x, double y) { return double(x > y); }},
        {"GreaterOrEqual", [](double x, double y) { return double(x >= y); }}, {"And", [](double x, double y) { return double(x && y); }},
        {"Or", [](double x, double y) { return double(x || y); }},           {"Xor", [](double x, double y) { return double(bool(x) != bool(y)); }}};
    const std::map<std::string, F> arithmetic = {
        {"Add", std::plus<double>()},
        {"Sub", std::minus<double>()},
        {"Mul", std::multiplies<double>()},
        {"Div", [real](double x, double y) { return divide(x, y, real); }},
        {"Mod", [c = intAttr(node, "fmod", 0) != 0](double x, double y) { return modulo(x, y, c); }},
        {"Pow", [real](double x, double y) { return real ? std::pow(x, y) : std::round(std::pow(x, y)); }},
        {"Min", [](double x, double y) { return std::min(x, y); }},
        {"Max", [](double x, double y) { return std::max(x, y); }}};
    const bool comparison = comparisons.count(op) > 0;
    const F* f = comparison ? &comparisons.at(op) : arithmetic.count(op) ? &arithmetic.at(op) : nullptr;
    if (!f)
        return std::nullopt;
    return elementwise({&a, &b}, comparison ? int32_t(T::TensorProto_DataType_BOOL) : a.type, [f](const std::vector<double>& v) { return (*f)(v[0], v[1]); });
}

std::optional<ConstantTensor> unaryOp(const std::string& op, const ConstantTensor& a)
{
    static const std::map<std::string, std::function<double(double)>> ops = {
        {"Not", [](double x) { return double(x == 0); }},   {"Abs", [](double x) { return std::fabs(x); }},
        {"Neg", [](double x) { return -x; }},                {"Sqrt", [](double x) { return std::sqrt(x); }},
        {"Reciprocal", [](double x) { return 1 / x; }},      {"Floor", [](double x) { return std::floor(x); }},
        {"Ceil", [](double x) { return std::ceil(x); }},     {"Identity", [](double x) { return x; }}};
    auto it = ops.find(op);
    if (it == ops.end())
        return std::nullopt;
    ConstantTensor out{a.shape, a.values, op == "Not" ? int32_t(T::TensorProto_DataType_BOOL) : a.type};
    std::transform(out.values.begin(), out.values.end(), out.values.begin(), it->second);
    return out;
}

/** Cast: to an integer type toward zero (to bool, nonzero is 1), to floating point as it is. */
ConstantTensor cast(const onnx::NodeProto& node, ConstantTensor a)
{
    const int64_t to = intAttr(node, "to", T::TensorProto_DataType_FLOAT);
    a.type = int32_t(to);
    if (!a.real())
        for (double& v : a.values)
            v = to == T::TensorProto_DataType_BOOL ? double(v != 0) : std::trunc(v);
    return a;
}

// --- shape ops -----------------------------------------------------------------------------

/** Reshape's target: 0 keeps the input's dimension (unless allowzero), -1 takes the rest. */
std::optional<ConstantTensor> reshape(const onnx::NodeProto& node, ConstantTensor a, const Shape& target)
{
    Shape shape = target;
    int64_t known = 1;
    std::optional<std::size_t> rest;
    for (std::size_t k = 0; k < shape.size(); ++k) {
        if (shape[k] == 0 && intAttr(node, "allowzero", 0) == 0) {
            if (k >= a.shape.size())
                return std::nullopt;
            shape[k] = a.shape[k];
        }
        if (shape[k] == -1) {
            if (rest)
                return std::nullopt;
            rest = k;
        } else if (shape[k] < 0) {
            return std::nullopt;
        } else {
            known *= shape[k];
        }
    }
    const auto n = int64_t(a.values.size());
    if (rest) {
        if (known == 0 || n % known)
            return std::nullopt;
        shape[*rest] = n / known;
    }
    if (countOf(shape) != n)
        return std::nullopt;
    a.shape = shape;
    return a;
}

std::optional<ConstantTensor> squeeze(ConstantTensor a, const Shape& axes)
{
    std::vector<bool> drop(a.shape.size(), axes.empty());
    for (int64_t axis : axes) {
        const auto k = axisIn(axis, a.shape.size());
        if (!k || a.shape[*k] != 1)
            return std::nullopt;
        drop[*k] = true;
    }
    Shape shape;
    for (std::size_t k = 0; k < a.shape.size(); ++k)
        if (!drop[k] || a.shape[k] != 1)
            shape.push_back(a.shape[k]);
    a.shape = shape;
    return a;
}

std::optional<ConstantTensor> unsqueeze(ConstantTensor a, const Shape& axes)
{
    const std::size_t rank = a.shape.size() + axes.size();
    std::vector<bool> added(rank, false);
    for (int64_t axis : axes) {
        const auto k = axisIn(axis, rank);
        if (!k || added[*k])
            return std::nullopt;
        added[*k] = true;
    }
    Shape shape;
    auto next = a.shape.begin();
    for (std::size_t k = 0; k < rank; ++k)
        shape.push_back(added[k] ? 1 : *next++);
    a.shape = shape;
    return a;
}

std::optional<ConstantTensor> transpose(const onnx::NodeProto& node, const ConstantTensor& a)
{
    const auto* p = attribute(node, "perm");
    Shape perm = p ? Shape(p->ints().begin(), p->ints().end()) : Shape{};
    if (!p)
        for (std::size_t k = a.shape.size(); k-- > 0;)
            perm.push_back(int64_t(k));
    if (perm.size() != a.shape.size())
        return std::nullopt;
    const Shape own = stridesOf(a.shape);
    Shape shape, strides;
    for (int64_t k : perm) {
        if (k < 0 || k >= int64_t(a.shape.size()))
            return std::nullopt;
        shape.push_back(a.shape[std::size_t(k)]);
        strides.push_back(own[std::size_t(k)]);
    }
    return ConstantTensor{shape, readStrided(a.values, shape, strides, 0), a.type};
}

std::optional<ConstantTensor> concat(const onnx::NodeProto& node, const Operands& in)
{
    const ConstantTensor& first = *in[0];
    const auto axis = axisIn(intAttr(node, "axis", 0), first.shape.size());
    if (!axis)
        return std::nullopt;
    ConstantTensor out{first.shape, {}, first.type};
    out.shape[*axis] = 0;
    for (const auto& t : in) {
        Shape other = t->shape;
        if (other.size() != first.shape.size())
            return std::nullopt;
        out.shape[*axis] += other[*axis];
        other[*axis] = first.shape[*axis];
        if (other != first.shape)
            return std::nullopt;
    }
    // Each operand contributes a block of its axis' extent times the inner size per outer index.
    const int64_t outer = countOf(Shape(first.shape.begin(), first.shape.begin() + std::ptrdiff_t(*axis)));
    for (int64_t o = 0; o < outer; ++o)
        for (const auto& t : in) {
            const auto block = std::ptrdiff_t(t->values.size() / std::size_t(std::max<int64_t>(outer, 1)));
            out.values.insert(out.values.end(), t->values.begin() + o * block, t->values.begin() + (o + 1) * block);
        }
    return out;
}

/** Slice(data, starts, ends[, axes[, steps]]): each axis' bounds clamped as ONNX defines them. */
std::optional<ConstantTensor> slice(const Operands& in)
{
    const ConstantTensor& a = *in[0];
    const Shape starts = in[1]->integers(), ends = in[2]->integers();
    Shape axes = in.size() > 3 && in[3] ? in[3]->integers() : Shape{};
    if (axes.empty())
        for (std::size_t k = 0; k < starts.size(); ++k)
            axes.push_back(int64_t(k));
    const Shape steps = in.size() > 4 && in[4] ? in[4]->integers() : Shape(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        return std::nullopt;
    Shape shape = a.shape, strides = stridesOf(a.shape);
    int64_t offset = 0;
    for (std::size_t i = 0; i < starts.size(); ++i) {
        const auto k = axisIn(axes[i], a.shape.size());
        if (!k || steps[i] == 0)
            return std::nullopt;
        const int64_t dim = a.shape[*k], step = steps[i];
        auto bound = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + dim : v, lo, hi); };
        const int64_t start = step > 0 ? bound(starts[i], 0, dim) : bound(starts[i], 0, dim - 1);
        const int64_t end = step > 0 ? bound(ends[i], 0, dim) : bound(ends[i], -1, dim - 1);
        const int64_t span = step > 0 ? end - start : start - end, by = step > 0 ? step : -step;
        shape[*k] = span > 0 ? (span + by - 1) / by : 0;
        offset += start * strides[*k];
        strides[*k] *= step;
    }
    if (countOf(shape) == 0)
        return ConstantTensor{shape, {}, a.type};
    return ConstantTensor{shape, readStrided(a.values, shape, strides, offset), a.type};
}

std::optional<ConstantTensor> gather(const onnx::NodeProto& node, const ConstantTensor& a, const ConstantTensor& indices)
{
    const auto axis = axisIn(intAttr(node, "axis", 0), a.shape.size());
    if (!axis)
        return std::nullopt;
    const int64_t dim = a.shape[*axis];
    const int64_t outer = countOf(Shape(a.shape.begin(), a.shape.begin() + std::ptrdiff_t(*axis)));
    const int64_t inner = countOf(Shape(a.shape.begin() + std::ptrdiff_t(*axis) + 1, a.shape.end()));
    Shape shape(a.shape.begin(), a.shape.begin() + std::ptrdiff_t(*axis));
    shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
    shape.insert(shape.end(), a.shape.begin() + std::ptrdiff_t(*axis) + 1, a.shape.end());
    if (!fits(shape))
        return std::nullopt;
    ConstantTensor out{shape, {}, a.type};
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t index : indices.integers()) {
            if (index < -dim || index >= dim)
                return std::nullopt;
            const int64_t from = (o * dim + (index < 0 ? index + dim : index)) * inner;
            out.values.insert(out.values.end(), a.values.begin() + from, a.values.begin() + from + inner);
        }
    return out;
}

/** ScatterND without reduction: the data with each indexed slice replaced by its update. */
std::optional<ConstantTensor> scatterND(const onnx::NodeProto& node, ConstantTensor a, const ConstantTensor& indices,
                                        const ConstantTensor& updates)
{
    const auto* reduction = attribute(node, "reduction");
    if ((reduction && reduction->s() != "none") || indices.shape.empty())
        return std::nullopt;
    const auto depth = std::size_t(indices.shape.back());
    if (depth > a.shape.size())
        return std::nullopt;
    const Shape strides = stridesOf(a.shape);
    const int64_t inner = countOf(Shape(a.shape.begin() + std::ptrdiff_t(depth), a.shape.end()));
    const Shape index = indices.integers();
    if (updates.values.size() != index.size() / std::max<std::size_t>(depth, 1) * std::size_t(inner))
        return std::nullopt;
    for (std::size_t u = 0; u * depth < index.size(); ++u) {
        int64_t at = 0;
        for (std::size_t k = 0; k < depth; ++k) {
            const int64_t i = index[u * depth + k], dim = a.shape[k];
            if (i < -dim || i >= dim)
                return std::nullopt;
            at += (i < 0 ? i + dim : i) * strides[k];
        }
        std::copy_n(updates.values.begin() + std::ptrdiff_t(u) * inner, inner, a.values.begin() + at);
    }
    return a;
}

std::optional<ConstantTensor> expand(const ConstantTensor& a, const Shape& target)
{
    const auto shape = broadcastShape(a.shape, target);
    if (!shape || !fits(*shape))
        return std::nullopt;
    return ConstantTensor{*shape, broadcastTo(a, *shape), a.type};
}

/** ConstantOfShape: its `value` attribute (a float 0 without one) repeated to the shape. */
std::optional<ConstantTensor> constantOfShape(const onnx::NodeProto& node, const Shape& shape)
{
    ConstantTensor fill{{}, {0.0}, T::TensorProto_DataType_FLOAT};
    if (const auto* a = attribute(node, "value")) {
        const auto value = constantTensor(a->t());
        if (!value || value->values.size() != 1)
            return std::nullopt;
        fill = *value;
    }
    if (!fits(shape))
        return std::nullopt;
    return ConstantTensor{shape, std::vector<double>(std::size_t(countOf(shape)), fill.values[0]), fill.type};
}

std::optional<ConstantTensor> range(const ConstantTensor& start, const ConstantTensor& limit, const ConstantTensor& delta)
{
    if (start.values.size() != 1 || limit.values.size() != 1 || delta.values.size() != 1 || delta.values[0] == 0)
        return std::nullopt;
    const double from = start.values[0], step = delta.values[0];
    const double n = std::max(std::ceil((limit.values[0] - from) / step), 0.0);
    if (n > double(kMaxFoldedValues))
        return std::nullopt;
    ConstantTensor out{{int64_t(n)}, {}, start.type};
    for (int64_t k = 0; k < int64_t(n); ++k)
        out.values.push_back(from + double(k) * step);
    return out;
}

/** The ops whose operands past the first are optional (Slice's axes and steps). */
std::size_t requiredOperands(const std::string& op)
{
    static const std::map<std::string, std::size_t> required = {{"Slice", 3}, {"Squeeze", 1}, {"Unsqueeze", 1}, {"Reshape", 2}};
    auto it = required.find(op);
    return it == required.end() ? std::size_t(-1) : it->second;
}

} // namespace

std::vector<int64_t> ConstantTensor::integers() const
{
    std::vector<int64_t> out;
    out.reserve(values.size());
    for (double v : values) // the int64 extremes torch writes for open slice bounds saturate
        out.push_back(v >= 9.2e18 ? std::numeric_limits<int64_t>::max() : v <= -9.2e18 ? std::numeric_limits<int64_t>::min() : int64_t(v));
    return out;
}

std::optional<ConstantTensor> constantTensor(const onnx::TensorProto& t)
{
    ConstantTensor out{Shape(t.dims().begin(), t.dims().end()), {}, t.data_type()};
    switch (t.data_type()) {
    case T::TensorProto_DataType_FLOAT: {
        const auto v = onnx::ParseData<float>(&t);
        out.values.assign(v.begin(), v.end());
        break;
    }
    case T::TensorProto_DataType_DOUBLE: out.values = onnx::ParseData<double>(&t); break;
    default: {
        const auto v = integerValues(t);
        if (!v)
            return std::nullopt;
        out.values.assign(v->begin(), v->end());
    }
    }
    if (countOf(out.shape) != int64_t(out.values.size()))
        return std::nullopt; // a tensor whose data is elsewhere (an external or absent weight)
    return out;
}

std::optional<onnx::TensorProto> tensorProtoOf(const ConstantTensor& t)
{
    onnx::TensorProto out;
    out.set_data_type(t.type);
    for (int64_t d : t.shape)
        out.add_dims(d);
    switch (t.type) {
    case T::TensorProto_DataType_FLOAT:
        for (double v : t.values)
            out.add_float_data(float(v));
        return out;
    case T::TensorProto_DataType_DOUBLE:
        for (double v : t.values)
            out.add_double_data(v);
        return out;
    case T::TensorProto_DataType_INT64:
        for (int64_t v : t.integers())
            out.add_int64_data(v);
        return out;
    case T::TensorProto_DataType_INT32:
    case T::TensorProto_DataType_BOOL: // int32_data holds booleans too
        for (int64_t v : t.integers())
            out.add_int32_data(int32_t(v));
        return out;
    default: return std::nullopt;
    }
}

std::optional<std::vector<int64_t>> integerValues(const onnx::TensorProto& t)
{
    switch (t.data_type()) {
    case T::TensorProto_DataType_INT64: return onnx::ParseData<int64_t>(&t);
    case T::TensorProto_DataType_INT32: {
        const auto v = onnx::ParseData<int32_t>(&t);
        return std::vector<int64_t>(v.begin(), v.end());
    }
    case T::TensorProto_DataType_BOOL: { // one byte a value raw, else int32_data
        std::vector<int64_t> v(t.int32_data().begin(), t.int32_data().end());
        for (char c : t.raw_data())
            v.push_back(c != 0);
        return v;
    }
    default: return std::nullopt;
    }
}

std::optional<ConstantTensor> foldConstant(const onnx::NodeProto& node, const Operands& operands)
{
    const std::string& op = node.op_type();
    const std::size_t required = std::min(requiredOperands(op), operands.size());
    if (operands.empty() || !std::all_of(operands.begin(), operands.begin() + std::ptrdiff_t(required), [](const auto& o) { return o.has_value(); }))
        return std::nullopt;
    const ConstantTensor& a = *operands[0];
    auto in = [&](std::size_t k) { return k < operands.size() && operands[k] ? &*operands[k] : nullptr; };
    if (op == "ConstantOfShape")
        return constantOfShape(node, a.integers());
    if (op == "Cast")
        return cast(node, a);
    if (op == "Reshape")
        return reshape(node, a, in(1)->integers());
    if (op == "Flatten") {
        const auto axis = intAttr(node, "axis", 1) < 0 ? intAttr(node, "axis", 1) + int64_t(a.shape.size()) : intAttr(node, "axis", 1);
        if (axis < 0 || axis > int64_t(a.shape.size()))
            return std::nullopt;
        return reshape(node, a, {countOf(Shape(a.shape.begin(), a.shape.begin() + axis)), -1});
    }
    if (op == "Squeeze")
        return squeeze(a, axesOf(node, operands, 1));
    if (op == "Unsqueeze")
        return unsqueeze(a, axesOf(node, operands, 1));
    if (op == "Transpose")
        return transpose(node, a);
    if (op == "Concat")
        return concat(node, operands);
    if (op == "Slice")
        return slice(operands);
    if (operands.size() == 1)
        return unaryOp(op, a);
    if (op == "Gather" && in(1))
        return gather(node, a, *in(1));
    if (op == "Expand" && in(1))
        return expand(a, in(1)->integers());
    if (op == "Range" && in(1) && in(2))
        return range(a, *in(1), *in(2));
    if (op == "ScatterND" && in(1) && in(2))
        return scatterND(node, a, *in(1), *in(2));
    if (op == "Where" && in(1) && in(2))
        return elementwise({&a, in(1), in(2)}, in(1)->type, [](const std::vector<double>& v) { return v[0] != 0 ? v[1] : v[2]; });
    if (operands.size() == 2 && in(1))
        return binaryOp(node, a, *in(1));
    return std::nullopt;
}

} // namespace ipusim::config
