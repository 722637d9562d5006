// SPDX-License-Identifier: MIT
// popops: element-wise maps, fills and reductions, each a PoplibsNode in the program: computed on
// the host, priced by the vertex table (PopLibs' estimators) over each tile's elements.
#include "sim/poplar/Elements.hpp"
#include "sim/poplar/GraphStore.hpp"
#include "sim/poplar/ProgramNode.hpp"

#include <popops/ElementWise.hpp>
#include <popops/ElementWiseUtil.hpp>
#include <popops/Reduce.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poplar/exceptions.hpp>
#include <poputil/TileMapping.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace popops {

using poplar::Tensor;
using poplar::detail::PoplibsNode;
using poplar::detail::ProgramAccess;
using ipusim::costs::BinaryOpKind;
using ipusim::costs::UnaryOpKind;

void addCodelets(poplar::Graph&) {} // the vertex table prices popops' vertices; nothing to compile

namespace {

std::string opName(const poplar::DebugContext& d, const char* op) { return d.getPathName().empty() ? op : d.getPathName(); }

void checkOperands(const poplar::Graph& graph, const Tensor& a, const Tensor& b, const char* op)
{
    graph.store()->checkOwned(a, op);
    graph.store()->checkOwned(b, op);
    if (a.elementType() != b.elementType())
        throw poplar::type_error(fmt::format("popops {}: operands of types {} and {}", op, a.elementType().toString(), b.elementType().toString()));
    if (a.shape() != b.shape() && b.numElements() != 1)
        throw poplar::poplar_error(fmt::format("popops {}: operands of shapes {} and {}: expected one shape, or a single-element second "
                                               "operand", op, a.shapeToString(), b.shapeToString()));
}

BinaryOpKind binaryKind(expr::BinaryOpType op)
{
    switch (op) {
    case expr::BinaryOpType::ADD: return BinaryOpKind::Add;
    case expr::BinaryOpType::SUBTRACT: return BinaryOpKind::Sub;
    case expr::BinaryOpType::MULTIPLY: return BinaryOpKind::Mul;
    case expr::BinaryOpType::DIVIDE: return BinaryOpKind::Div;
    case expr::BinaryOpType::MAXIMUM:
    case expr::BinaryOpType::MINIMUM: return BinaryOpKind::Max; // MINIMUM is priced as MAXIMUM: one estimator in PopLibs
    case expr::BinaryOpType::POWER: return BinaryOpKind::Pow;
    }
    return BinaryOpKind::Add;
}

long double apply(expr::BinaryOpType op, long double a, long double b)
{
    switch (op) {
    case expr::BinaryOpType::ADD: return a + b;
    case expr::BinaryOpType::SUBTRACT: return a - b;
    case expr::BinaryOpType::MULTIPLY: return a * b;
    case expr::BinaryOpType::DIVIDE: return a / b;
    case expr::BinaryOpType::MAXIMUM: return std::max(a, b);
    case expr::BinaryOpType::MINIMUM: return std::min(a, b);
    case expr::BinaryOpType::POWER: return std::pow(a, b);
    }
    return 0;
}

UnaryOpKind unaryKind(expr::UnaryOpType op)
{
    switch (op) {
    case expr::UnaryOpType::ABSOLUTE: return UnaryOpKind::Abs;
    case expr::UnaryOpType::EXPONENT: return UnaryOpKind::Exp;
    case expr::UnaryOpType::LOGARITHM: return UnaryOpKind::Log;
    case expr::UnaryOpType::LOGICAL_NOT: return UnaryOpKind::LogicalNot;
    case expr::UnaryOpType::NEGATE: return UnaryOpKind::Neg;
    case expr::UnaryOpType::SQRT: return UnaryOpKind::Sqrt;
    case expr::UnaryOpType::SQUARE: return UnaryOpKind::Square;
    case expr::UnaryOpType::TANH: return UnaryOpKind::Tanh;
    case expr::UnaryOpType::SIGMOID: return UnaryOpKind::Sigmoid;
    case expr::UnaryOpType::RELU: return UnaryOpKind::Relu;
    }
    return UnaryOpKind::Neg;
}

long double apply(expr::UnaryOpType op, long double a)
{
    switch (op) {
    case expr::UnaryOpType::ABSOLUTE: return std::fabs(a);
    case expr::UnaryOpType::EXPONENT: return std::exp(a);
    case expr::UnaryOpType::LOGARITHM: return std::log(a);
    case expr::UnaryOpType::LOGICAL_NOT: return a == 0;
    case expr::UnaryOpType::NEGATE: return -a;
    case expr::UnaryOpType::SQRT: return std::sqrt(a);
    case expr::UnaryOpType::SQUARE: return a * a;
    case expr::UnaryOpType::TANH: return std::tanh(a);
    case expr::UnaryOpType::SIGMOID: return 1 / (1 + std::exp(-a));
    case expr::UnaryOpType::RELU: return std::max<long double>(a, 0);
    }
    return 0;
}

/** A new tensor of `like`'s type and shape, mapped as it is. */
Tensor outputLike(poplar::Graph& graph, const Tensor& like, const std::string& name) { return graph.clone(like, name); }

void binary(expr::BinaryOpType op, const Tensor& a, const Tensor& b, const Tensor& out, bool inPlace,
            poplar::program::Sequence& prog, const std::string& name)
{
    PoplibsNode node;
    node.codelet = ipusim::Codelet(inPlace ? ipusim::Vertex::BinaryOp1DInPlace : ipusim::Vertex::BinaryOp1D, binaryKind(op));
    node.inputs = {a, b};
    node.output = out;
    node.host = [=](poplar::detail::GraphStore& store) {
        const auto x = poplar::detail::values(store, a), y = poplar::detail::values(store, b);
        std::vector<long double> r(x.size());
        for (std::size_t i = 0; i < x.size(); ++i)
            r[i] = apply(op, x[i], y[y.size() == 1 ? 0 : i]);
        poplar::detail::setValues(store, out, r);
    };
    prog.add(ProgramAccess::make(name, std::move(node)));
}

void unary(expr::UnaryOpType op, const Tensor& a, const Tensor& out, bool inPlace, poplar::program::Sequence& prog, const std::string& name)
{
    PoplibsNode node;
    node.codelet = ipusim::Codelet(inPlace ? ipusim::Vertex::UnaryOp1DInPlace : ipusim::Vertex::UnaryOp1D, unaryKind(op));
    node.inputs = {a};
    node.output = out;
    node.host = [=](poplar::detail::GraphStore& store) {
        auto x = poplar::detail::values(store, a);
        for (auto& v : x)
            v = apply(op, v);
        poplar::detail::setValues(store, out, x);
    };
    prog.add(ProgramAccess::make(name, std::move(node)));
}

} // namespace

Tensor map(poplar::Graph& graph, expr::BinaryOpType op, const Tensor& a, const Tensor& b, poplar::program::Sequence& prog,
           const poplar::DebugContext& debugContext, const poplar::OptionFlags&)
{
    checkOperands(graph, a, b, "map");
    const std::string name = opName(debugContext, "popops::map");
    Tensor out = outputLike(graph, a, name + "/out");
    binary(op, a, b, out, false, prog, name);
    return out;
}

void mapInPlace(poplar::Graph& graph, expr::BinaryOpType op, const Tensor& a, const Tensor& b, poplar::program::Sequence& prog,
                const poplar::DebugContext& debugContext, const poplar::OptionFlags&)
{
    checkOperands(graph, a, b, "mapInPlace");
    binary(op, a, b, a, true, prog, opName(debugContext, "popops::mapInPlace"));
}

Tensor map(poplar::Graph& graph, expr::UnaryOpType op, const Tensor& a, poplar::program::Sequence& prog,
           const poplar::DebugContext& debugContext, const poplar::OptionFlags&)
{
    graph.store()->checkOwned(a, "popops map");
    const std::string name = opName(debugContext, "popops::map");
    Tensor out = outputLike(graph, a, name + "/out");
    unary(op, a, out, false, prog, name);
    return out;
}

void mapInPlace(poplar::Graph& graph, expr::UnaryOpType op, const Tensor& a, poplar::program::Sequence& prog,
                const poplar::DebugContext& debugContext, const poplar::OptionFlags&)
{
    graph.store()->checkOwned(a, "popops mapInPlace");
    unary(op, a, a, true, prog, opName(debugContext, "popops::mapInPlace"));
}

Tensor createOutputForElementWiseOp(poplar::Graph& graph, const std::vector<Tensor>& inputs, const poplar::Type& outputType,
                                    const poplar::DebugContext& debugContext)
{
    if (inputs.empty())
        throw poplar::poplar_error("popops createOutputForElementWiseOp: no inputs");
    return graph.clone(outputType, inputs.front(), debugContext);
}

void scaledAddTo(poplar::Graph& graph, const Tensor& A, const Tensor& B, float scale, poplar::program::Sequence& prog,
                 const poplar::DebugContext& debugContext, const poplar::OptionFlags&)
{
    checkOperands(graph, A, B, "scaledAddTo");
    if (A.shape() != B.shape())
        throw poplar::poplar_error(fmt::format("popops scaledAddTo: operands of shapes {} and {}", A.shapeToString(), B.shapeToString()));
    PoplibsNode node;
    node.codelet = ipusim::Codelet(ipusim::Vertex::ScaledAddSupervisor);
    node.inputs = {A, B};
    node.output = A;
    node.host = [=](poplar::detail::GraphStore& store) {
        auto x = poplar::detail::values(store, A);
        const auto y = poplar::detail::values(store, B);
        for (std::size_t i = 0; i < x.size(); ++i)
            x[i] += scale * y[i];
        poplar::detail::setValues(store, A, x);
    };
    prog.add(ProgramAccess::make(opName(debugContext, "popops::scaledAddTo"), std::move(node)));
}

void fill(poplar::Graph& graph, const Tensor& t, poplar::program::Sequence& prog, float value, const poplar::DebugContext& debugContext)
{
    graph.store()->checkOwned(t, "popops fill");
    PoplibsNode node;
    node.kind = PoplibsNode::Kind::Fill;
    node.codelet = ipusim::Codelet(ipusim::Vertex::Fill);
    node.output = t;
    node.host = [=](poplar::detail::GraphStore& store) {
        poplar::detail::setValues(store, t, std::vector<long double>(t.numElements(), value));
    };
    prog.add(ProgramAccess::make(opName(debugContext, "popops::fill"), std::move(node)));
}

void zero(poplar::Graph& graph, const Tensor& t, poplar::program::Sequence& prog, const poplar::DebugContext& debugContext)
{
    fill(graph, t, prog, 0.0f, debugContext.getPathName().empty() ? poplar::DebugContext("popops::zero") : debugContext);
}

namespace {

/** Each input element's output element: the index with `dims` dropped. */
std::vector<std::size_t> outputIndexOf(const std::vector<std::size_t>& shape, const std::set<std::size_t>& dims)
{
    std::size_t total = 1;
    for (auto d : shape)
        total *= d;
    std::vector<std::size_t> out(total);
    std::vector<std::size_t> index(shape.size(), 0);
    for (std::size_t flat = 0; flat < total; ++flat) {
        std::size_t o = 0;
        for (std::size_t d = 0; d < shape.size(); ++d)
            if (!dims.count(d))
                o = o * shape[d] + index[d];
        out[flat] = o;
        for (std::size_t d = shape.size(); d-- > 0;) {
            if (++index[d] < shape[d])
                break;
            index[d] = 0;
        }
    }
    return out;
}

long double reduceStart(Operation op)
{
    switch (op) {
    case Operation::MUL: return 1;
    case Operation::MIN: return INFINITY;
    case Operation::MAX: return -INFINITY;
    case Operation::ADD:
    case Operation::SQUARE_ADD: break;
    }
    return 0;
}

long double reduceStep(Operation op, long double acc, long double v)
{
    switch (op) {
    case Operation::ADD: return acc + v;
    case Operation::SQUARE_ADD: return acc + v * v;
    case Operation::MUL: return acc * v;
    case Operation::MIN: return std::min(acc, v);
    case Operation::MAX: return std::max(acc, v);
    }
    return acc;
}

std::vector<std::size_t> reducedShape(const Tensor& in, poplar::ArrayRef<std::size_t> dims, std::set<std::size_t>& dimSet)
{
    for (auto d : dims) {
        if (d >= in.rank())
            throw poplar::poplar_error(fmt::format("popops reduce: dimension {} of a tensor of rank {}", d, in.rank()));
        dimSet.insert(d);
    }
    std::vector<std::size_t> shape;
    for (std::size_t d = 0; d < in.rank(); ++d)
        if (!dimSet.count(d))
            shape.push_back(in.dim(unsigned(d)));
    return shape;
}

} // namespace

void reduceWithOutput(poplar::Graph& graph, const Tensor& in, const Tensor& out, poplar::ArrayRef<std::size_t> dims, ReduceParams params,
                      poplar::program::Sequence& prog, const poplar::DebugContext& debugContext, const poplar::OptionFlags&)
{
    graph.store()->checkOwned(in, "popops reduce");
    graph.store()->checkOwned(out, "popops reduce");
    std::set<std::size_t> dimSet;
    const auto shape = reducedShape(in, dims, dimSet);
    std::size_t outputs = 1;
    for (auto d : shape)
        outputs *= d;
    if (out.numElements() != outputs)
        throw poplar::poplar_error(fmt::format("popops reduce: an output of {} elements for a result of shape {}", out.numElements(),
                                               Tensor(in.elementType(), shape, {}).shapeToString()));
    PoplibsNode node;
    node.kind = PoplibsNode::Kind::Reduce;
    node.codelet = ipusim::Codelet(ipusim::Vertex::ReduceContinuous, params.op == Operation::MAX || params.op == Operation::MIN
                                                                          ? ipusim::ReduceOp::Max
                                                                      : params.op == Operation::SQUARE_ADD ? ipusim::ReduceOp::SquareAdd
                                                                                                           : ipusim::ReduceOp::Add);
    node.inputs = {in};
    node.output = out;
    node.partialsPerOutput = outputs ? in.numElements() / outputs : 0;
    node.reduceOutputOf = outputIndexOf(in.shape(), dimSet);
    const std::vector<std::size_t>& outputOf = node.reduceOutputOf;
    node.host = [=, outputOf = outputOf](poplar::detail::GraphStore& store) {
        const auto x = poplar::detail::values(store, in);
        std::vector<long double> acc(outputs, reduceStart(params.op));
        for (std::size_t i = 0; i < x.size(); ++i)
            acc[outputOf[i]] = reduceStep(params.op, acc[outputOf[i]], x[i]);
        if (params.update) {
            const auto before = poplar::detail::values(store, out);
            for (std::size_t i = 0; i < outputs; ++i)
                acc[i] += before[i];
        }
        poplar::detail::setValues(store, out, acc);
    };
    prog.add(ProgramAccess::make(opName(debugContext, "popops::reduce"), std::move(node)));
}

Tensor reduce(poplar::Graph& graph, const Tensor& in, const poplar::Type& outType, poplar::ArrayRef<std::size_t> dims, ReduceParams params,
              poplar::program::Sequence& prog, const poplar::DebugContext& debugContext, const poplar::OptionFlags& options)
{
    std::set<std::size_t> dimSet;
    const auto shape = reducedShape(in, dims, dimSet);
    const std::string name = opName(debugContext, "popops::reduce");
    if (outType != in.elementType())
        throw poplar::unimplemented_error(fmt::format("popops reduce to {} of a {} tensor: ipusim reduces to the input's type", outType.toString(),
                                                      in.elementType().toString()));
    Tensor out = graph.addVariable(outType, shape, name + "/out");
    poputil::mapTensorLinearly(graph, out);
    reduceWithOutput(graph, in, out, dims, params, prog, name, options);
    return out;
}

Tensor allTrue(poplar::Graph& graph, const Tensor& A, poplar::program::Sequence& prog, const poplar::DebugContext& debugContext)
{
    if (A.elementType() != poplar::BOOL)
        throw poplar::type_error(fmt::format("popops allTrue of a {} tensor: expected bool", A.elementType().toString()));
    std::vector<std::size_t> dims(A.rank());
    for (std::size_t d = 0; d < dims.size(); ++d)
        dims[d] = d;
    // The logical AND of bools is their minimum.
    return reduce(graph, A, dims, ReduceParams(Operation::MIN), prog, debugContext.getPathName().empty() ? "popops::allTrue" : debugContext);
}

Tensor reduce(poplar::Graph& graph, const Tensor& in, poplar::ArrayRef<std::size_t> dims, ReduceParams params, poplar::program::Sequence& prog,
              const poplar::DebugContext& debugContext, const poplar::OptionFlags& options)
{
    return reduce(graph, in, in.elementType(), dims, params, prog, debugContext, options);
}

} // namespace popops
