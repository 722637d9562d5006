// SPDX-License-Identifier: MIT
#include "sim/config/OnnxFoldPass.hpp"

#include "sim/config/OnnxConstantFold.hpp"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

namespace ipusim::config {
namespace {

using Values = std::map<std::string, std::vector<int64_t>>;

/** Shape inference with data propagation: the integer values it computed. */
Values inferShapes(onnx::ModelProto& model)
{
    std::unordered_map<std::string, onnx::TensorShapeProto> computed;
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 0, true), &computed);
    Values out;
    for (const auto& [name, value] : computed) {
        std::vector<int64_t> v;
        for (const auto& d : value.dim())
            if (d.has_dim_value())
                v.push_back(d.dim_value());
        if (int(v.size()) == value.dim_size())
            out[name] = v;
    }
    return out;
}

/** Every value's shape that is fully known (from inference, the inputs and the outputs). */
Values knownShapes(const onnx::GraphProto& g)
{
    Values out;
    auto note = [&](const onnx::ValueInfoProto& vi) {
        if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
            return;
        std::vector<int64_t> dims;
        for (const auto& d : vi.type().tensor_type().shape().dim()) {
            if (!d.has_dim_value())
                return;
            dims.push_back(d.dim_value());
        }
        out[vi.name()] = dims;
    };
    for (const auto* list : {&g.value_info(), &g.input(), &g.output()})
        for (const auto& vi : *list)
            note(vi);
    return out;
}

/** The values folding starts from: Constant nodes and integer initializers (shapes, indices).
 *  A floating-point initializer is a weight, whatever its size: folding it would turn a learned
 *  tensor (a transposed weight) into a constant. */
std::map<std::string, ConstantTensor> constantsOf(const onnx::GraphProto& g)
{
    std::map<std::string, ConstantTensor> out;
    for (const auto& init : g.initializer())
        if (auto t = constantTensor(init); t && !t->real())
            out[init.name()] = std::move(*t);
    for (const auto& node : g.node())
        if (node.op_type() == "Constant" && node.output_size() == 1)
            for (const auto& a : node.attribute())
                if (a.name() == "value")
                    if (auto t = constantTensor(a.t()))
                        out[node.output(0)] = std::move(*t);
    return out;
}

/** Shape(x) of a known shape, with opset 15's start and end. */
std::optional<ConstantTensor> shapeOf(const onnx::NodeProto& node, const Values& shapes)
{
    auto it = shapes.find(node.input(0));
    if (it == shapes.end())
        return std::nullopt;
    const auto rank = int64_t(it->second.size());
    int64_t start = 0, end = rank;
    for (const auto& a : node.attribute()) {
        if (a.name() == "start")
            start = a.i();
        if (a.name() == "end")
            end = a.i();
    }
    start = std::clamp(start < 0 ? start + rank : start, int64_t(0), rank);
    end = std::clamp(end < 0 ? end + rank : end, int64_t(0), rank);
    ConstantTensor out{{std::max<int64_t>(end - start, 0)}, {}, onnx::TensorProto_DataType_INT64};
    for (int64_t k = start; k < end; ++k)
        out.values.push_back(double(it->second[std::size_t(k)]));
    return out;
}

/** A value data propagation computed, shaped as inference has it (a scalar keeps rank 0). */
ConstantTensor propagated(const std::string& name, const std::vector<int64_t>& values, const Values& shapes)
{
    ConstantTensor t{{int64_t(values.size())}, std::vector<double>(values.begin(), values.end()), onnx::TensorProto_DataType_INT64};
    auto shape = shapes.find(name);
    if (shape != shapes.end() && shape->second.size() <= 1) {
        int64_t n = 1;
        for (int64_t d : shape->second)
            n *= d;
        if (n == int64_t(values.size()))
            t.shape = shape->second;
    }
    return t;
}

void becomeConstant(onnx::NodeProto& node, onnx::TensorProto value)
{
    node.clear_input();
    node.clear_attribute();
    node.clear_domain();
    node.set_op_type("Constant");
    auto* a = node.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    *a->mutable_t() = std::move(value);
}

/** One pass in graph order: the nodes folded, each added to `known` (the values so far). */
int foldRound(onnx::GraphProto& g, const Values& propagatedValues, std::map<std::string, ConstantTensor>& known)
{
    const Values shapes = knownShapes(g);
    auto operand = [&](const std::string& name) -> std::optional<ConstantTensor> {
        if (auto it = known.find(name); it != known.end())
            return it->second;
        if (auto it = propagatedValues.find(name); it != propagatedValues.end())
            return propagated(name, it->second, shapes);
        return std::nullopt;
    };
    int folded = 0;
    for (auto& node : *g.mutable_node()) {
        if (node.op_type() == "Constant" || node.output_size() != 1 || node.output(0).empty())
            continue;
        if (!node.domain().empty() && node.domain() != "ai.onnx")
            continue;
        std::optional<ConstantTensor> value;
        if (auto it = propagatedValues.find(node.output(0)); it != propagatedValues.end()) {
            // Made a constant too: ONNX's Slice and Reshape inference read constants, not
            // propagated values.
            value = propagated(node.output(0), it->second, shapes);
        } else if (node.op_type() == "Shape") {
            value = shapeOf(node, shapes);
        } else {
            std::vector<std::optional<ConstantTensor>> operands;
            for (const std::string& in : node.input())
                operands.push_back(in.empty() ? std::nullopt : operand(in));
            value = foldConstant(node, operands);
        }
        std::optional<onnx::TensorProto> proto = value ? tensorProtoOf(*value) : std::nullopt;
        if (!proto)
            continue;
        becomeConstant(node, std::move(*proto));
        known[node.output(0)] = std::move(*value);
        ++folded;
    }
    return folded;
}

} // namespace

std::map<std::string, std::vector<int64_t>> foldModelConstants(onnx::ModelProto& model)
{
    // Each round folds what the shapes known so far allow; Swin-T needs 16 (each stage's pads,
    // then its windows, then its masks). The bound keeps a pathological chain from costing more
    // inferences than that.
    constexpr int kRounds = 64;
    Values values = inferShapes(model);
    std::map<std::string, ConstantTensor> known = constantsOf(model.graph()); // read once: later rounds add what they fold
    for (int round = 0; round < kRounds && foldRound(*model.mutable_graph(), values, known) > 0; ++round)
        values = inferShapes(model);
    return values;
}

} // namespace ipusim::config
