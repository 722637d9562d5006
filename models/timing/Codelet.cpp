// SPDX-License-Identifier: MIT
// Codelets: a vertex of the table with its template operation, named as PopLibs names it.
#include "models/timing/VertexTable.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim {
namespace {

using costs::BinaryOpKind;
using costs::NonLinearity;
using costs::UnaryOpKind;

// Each op's name in schedule params and in PopLibs' template, in the order errors list them.
template <class Kind>
struct OpName
{
    const char* param;
    const char* poplibs;
    Kind kind;
};
const std::vector<OpName<UnaryOpKind>> kUnary = {
    {"relu", "RELU", UnaryOpKind::Relu},          {"exp", "EXPONENT", UnaryOpKind::Exp},
    {"log", "LOGARITHM", UnaryOpKind::Log},       {"sqrt", "SQRT", UnaryOpKind::Sqrt},
    {"rsqrt", "RSQRT", UnaryOpKind::Rsqrt},       {"inverse", "INVERSE", UnaryOpKind::Inverse},
    {"tanh", "TANH", UnaryOpKind::Tanh},          {"sigmoid", "SIGMOID", UnaryOpKind::Sigmoid},
    {"gelu_erf", "GELU_ERF", UnaryOpKind::GeluErf}, {"neg", "NEGATE", UnaryOpKind::Neg},
    {"square", "SQUARE", UnaryOpKind::Square},    {"erf", "ERF", UnaryOpKind::Erf},
    {"abs", "ABSOLUTE", UnaryOpKind::Abs},        {"logical_not", "LOGICAL_NOT", UnaryOpKind::LogicalNot}};
const std::vector<OpName<BinaryOpKind>> kBinary = {
    {"add", "ADD", BinaryOpKind::Add}, {"sub", "SUBTRACT", BinaryOpKind::Sub}, {"mul", "MULTIPLY", BinaryOpKind::Mul},
    {"div", "DIVIDE", BinaryOpKind::Div}, {"max", "MAXIMUM", BinaryOpKind::Max},
    {"equal", "EQUAL", BinaryOpKind::Equal}, {"not_equal", "NOT_EQUAL", BinaryOpKind::NotEqual},
    {"greater", "GREATER_THAN", BinaryOpKind::Greater}, {"less", "LESS_THAN", BinaryOpKind::Less}, {"pow", "POWER", BinaryOpKind::Pow}};
const std::vector<OpName<NonLinearity>> kNonLinearity = {
    {"relu", "RELU", NonLinearity::Relu}, {"sigmoid", "SIGMOID", NonLinearity::Sigmoid},
    {"tanh", "TANH", NonLinearity::Tanh}, {"gelu", "GELU", NonLinearity::Gelu}};
const std::vector<OpName<costs::MapExpr>> kMap = {{"hard_sigmoid", "HARD_SIGMOID", costs::MapExpr::HardSigmoid},
                                                  {"hard_sigmoid_grad", "HARD_SIGMOID_GRAD", costs::MapExpr::HardSigmoidGrad},
                                                  {"max_arg_grad", "MAX_ARG_GRAD", costs::MapExpr::MaxArgGrad}};
const std::vector<OpName<ReduceOp>> kReduce = {
    {"add", "ADD", ReduceOp::Add}, {"max", "MAX", ReduceOp::Max}, {"square_add", "SQUARE_ADD", ReduceOp::SquareAdd}};

template <class Kind>
std::vector<std::string> paramNames(const std::vector<OpName<Kind>>& ops)
{
    std::vector<std::string> out;
    for (const auto& op : ops)
        out.push_back(op.param);
    return out;
}

template <class Kind>
std::optional<Kind> namedParam(const std::vector<OpName<Kind>>& ops, const std::string& name)
{
    for (const auto& op : ops)
        if (name == op.param)
            return op.kind;
    return std::nullopt;
}

// The PopLibs names of the operations a vertex takes, by their enum value (built once).
using OpList = std::vector<std::pair<uint8_t, const char*>>;
template <class Kind>
OpList listOf(const std::vector<OpName<Kind>>& table)
{
    OpList out;
    for (const auto& op : table)
        out.emplace_back(uint8_t(op.kind), op.poplibs);
    return out;
}
const OpList& opsOf(VertexOps ops)
{
    static const std::array<OpList, 6> lists = {OpList{}, listOf(kUnary), listOf(kBinary), listOf(kNonLinearity), listOf(kReduce), listOf(kMap)};
    return lists.at(std::size_t(ops));
}

} // namespace

const std::vector<std::string>& unaryOpNames()
{
    static const std::vector<std::string> names = paramNames(kUnary);
    return names;
}
const std::vector<std::string>& binaryOpNames()
{
    static const std::vector<std::string> names = paramNames(kBinary);
    return names;
}
const std::vector<std::string>& nonLinearityNames()
{
    static const std::vector<std::string> names = paramNames(kNonLinearity);
    return names;
}
std::optional<UnaryOpKind> unaryOpNamed(const std::string& name) { return namedParam(kUnary, name); }
std::optional<BinaryOpKind> binaryOpNamed(const std::string& name) { return namedParam(kBinary, name); }
std::optional<NonLinearity> nonLinearityNamed(const std::string& name) { return namedParam(kNonLinearity, name); }
const std::vector<std::string>& reduceOpNames()
{
    static const std::vector<std::string> names = paramNames(kReduce);
    return names;
}
std::optional<ReduceOp> reduceOpNamed(const std::string& name) { return namedParam(kReduce, name); }
const std::vector<std::string>& mapExprNames()
{
    static const std::vector<std::string> names = paramNames(kMap);
    return names;
}
std::optional<costs::MapExpr> mapExprNamed(const std::string& name) { return namedParam(kMap, name); }

Codelet::Codelet(Vertex vertex, VertexOps ops, uint8_t op) : m_vertex(vertex), m_op(op)
{
    if (rowOf(vertex).ops != ops)
        throw std::logic_error(std::string("vertex ") + rowOf(vertex).name + " does not take that operation");
}

Codelet::Codelet(Vertex vertex)
    : Codelet(vertex, rowOf(vertex).ops == VertexOps::Reduce ? VertexOps::Reduce : VertexOps::None, uint8_t(ReduceOp::Add))
{
}
Codelet::Codelet(Vertex vertex, UnaryOpKind op) : Codelet(vertex, VertexOps::Unary, uint8_t(op)) {}
Codelet::Codelet(Vertex vertex, BinaryOpKind op) : Codelet(vertex, VertexOps::Binary, uint8_t(op)) {}
Codelet::Codelet(Vertex vertex, NonLinearity op) : Codelet(vertex, VertexOps::NonLinearity, uint8_t(op)) {}
Codelet::Codelet(Vertex vertex, ReduceOp op) : Codelet(vertex, VertexOps::Reduce, uint8_t(op)) {}
Codelet::Codelet(Vertex vertex, costs::MapExpr op) : Codelet(vertex, VertexOps::Map, uint8_t(op)) {}

uint8_t Codelet::opOf(VertexOps ops) const
{
    if (rowOf(m_vertex).ops != ops)
        throw std::logic_error(std::string("vertex ") + rowOf(m_vertex).name + " is not instantiated with that kind of operation");
    return m_op;
}

std::string Codelet::name() const
{
    const VertexRow& row = rowOf(m_vertex);
    if (row.ops == VertexOps::None)
        return row.name;
    for (const auto& [op, poplibs] : opsOf(row.ops))
        if (op == m_op)
            return std::string(row.name) + "<" + poplibs + ">";
    throw std::logic_error("an operation the table does not name");
}

std::optional<Codelet> Codelet::parse(const std::string& name)
{
    const std::size_t open = name.find('<');
    const std::optional<Vertex> vertex = vertexNamed(name.substr(0, open));
    if (!vertex)
        return std::nullopt;
    const VertexOps ops = rowOf(*vertex).ops;
    if (open == std::string::npos)
        return ops == VertexOps::None ? std::optional<Codelet>(Codelet(*vertex)) : std::nullopt;
    for (const auto& [op, poplibs] : opsOf(ops))
        if (name.compare(open, std::string::npos, std::string("<") + poplibs + ">") == 0)
            return Codelet(*vertex, ops, op);
    return std::nullopt;
}

std::vector<std::string> codeletNames(const std::vector<Codelet>& codelets)
{
    std::vector<std::string> out;
    for (const Codelet& c : codelets) {
        std::string name = c.name();
        if (std::find(out.begin(), out.end(), name) == out.end())
            out.push_back(std::move(name));
    }
    return out;
}

} // namespace ipusim
