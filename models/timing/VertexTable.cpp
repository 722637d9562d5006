// SPDX-License-Identifier: MIT
#include "models/timing/VertexTable.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim {
namespace {

using costs::BinaryOpKind;
using costs::NonLinearity;
using costs::UnaryOpKind;

// Sections are those of poplibs-costs.md, which names each estimator's PopLibs source file.
const std::array<VertexRow, kVertexCount> kTable = {{
    {Vertex::ConvPartial1x1Out, "ConvPartial1x1Out", VertexOps::None, "poplin getConvPartial1x1SupervisorCycleEstimate, §3.2"},
    {Vertex::ConvPartialnx1, "ConvPartialnx1", VertexOps::None, "poplin getConvPartialnx1SupervisorCycleEstimate, §3.2"},
    {Vertex::UnaryOp1D, "UnaryOp1D", VertexOps::Unary, "popops unaryOpSupervisor estimator, §3.4"},
    {Vertex::UnaryOp1DInPlace, "UnaryOp1DInPlace", VertexOps::Unary, "popops unaryOpInPlaceSupervisor estimator, §3.4"},
    {Vertex::BinaryOp1D, "BinaryOp1D", VertexOps::Binary, "popops binaryOpSupervisor estimator, §3.4"},
    {Vertex::BinaryOp1DInPlace, "BinaryOp1DInPlace", VertexOps::Binary, "popops binaryOpInPlaceSupervisor estimator, §3.4"},
    {Vertex::BroadcastScalar1DInPlace, "BroadcastScalar1DInPlace", VertexOps::Binary, "popops BroadcastScalar1DInPlaceSupervisor estimator, §3.9"},
    {Vertex::NonLinearity1DInPlace, "NonLinearity1DInPlace", VertexOps::NonLinearity, "popnn NonLinearity1DInPlace estimator, §3.5"},
    {Vertex::NonLinearityGrad1D, "NonLinearityGrad1D", VertexOps::NonLinearity, "popnn NonLinearityGrad1D estimator, §3.5"},
    {Vertex::ScaledAddSupervisor, "ScaledAddSupervisor", VertexOps::None, "popops getScaledArithmeticSupervisorCycleEstimate, §3.6"},
    {Vertex::Cast1D, "Cast1D", VertexOps::None, "popops getCast1DCycleEstimate, §3.7"},
    {Vertex::Fill, "Fill", VertexOps::None, "popops _fillCycleEstimate, §3.7"},
    {Vertex::ReducePartials, "ReducePartials", VertexOps::Reduce, "poplin getReduceCycleEstimate (conv partials), §3.3"},
    {Vertex::ReduceSingleInput, "ReduceSingleInput", VertexOps::Reduce, "popops getCyclesEstimateForSingleInput, §3.8"},
    {Vertex::ReduceStrided, "ReduceStrided", VertexOps::Reduce, "popops getCyclesEstimateForStridedReduce, §3.8"},
    {Vertex::ReduceContinuous, "ReduceContinuous", VertexOps::Reduce, "popops getCycleEstimateReduceAllRegionsContinuous, §3.8"},
    {Vertex::MaxPooling, "MaxPooling", VertexOps::None, "popnn getPoolingCycles, §3.11"},
    {Vertex::SumPooling, "SumPooling", VertexOps::None, "popnn getPoolingCycles, §3.11"},
    {Vertex::MaxPoolingGrad, "MaxPoolingGrad", VertexOps::None, "popnn getPoolingCycles, §3.11"},
    {Vertex::InverseStdDeviation, "InverseStdDeviation", VertexOps::None, "poplin InverseStdDeviation estimator, §3.10"},
    {Vertex::DropoutSupervisor, "DropoutSupervisor", VertexOps::None, "poprand DropoutSupervisor estimator"},
    {Vertex::EncodeOneHot, "EncodeOneHot", VertexOps::None, "popops EncodeOneHot estimator, §3.12"},
    {Vertex::MultiSlice, "MultiSlice", VertexOps::None, "popops getMultiSliceCycleEstimate, §3.12"},
    {Vertex::MultiUpdateAdd, "MultiUpdateAdd", VertexOps::None, "popops getMultiSliceCycleEstimate with an add, §3.12"},
    {Vertex::Copy, "Copy", VertexOps::None, "no estimator: an element a cycle, at most memcpy_bytes_per_cycle"},
}};

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
    {"square", "SQUARE", UnaryOpKind::Square}};
const std::vector<OpName<BinaryOpKind>> kBinary = {
    {"add", "ADD", BinaryOpKind::Add}, {"sub", "SUBTRACT", BinaryOpKind::Sub}, {"mul", "MULTIPLY", BinaryOpKind::Mul},
    {"div", "DIVIDE", BinaryOpKind::Div}, {"max", "MAXIMUM", BinaryOpKind::Max},
    {"equal", "EQUAL", BinaryOpKind::Equal}};
const std::vector<OpName<NonLinearity>> kNonLinearity = {
    {"relu", "RELU", NonLinearity::Relu}, {"sigmoid", "SIGMOID", NonLinearity::Sigmoid},
    {"tanh", "TANH", NonLinearity::Tanh}, {"gelu", "GELU", NonLinearity::Gelu}};
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
    static const std::array<OpList, 5> lists = {OpList{}, listOf(kUnary), listOf(kBinary), listOf(kNonLinearity), listOf(kReduce)};
    return lists.at(std::size_t(ops));
}

} // namespace

const std::array<VertexRow, kVertexCount>& vertexTable() { return kTable; }

const VertexRow& rowOf(Vertex vertex) { return kTable.at(std::size_t(vertex)); }

std::optional<Vertex> vertexNamed(const std::string& name)
{
    for (const auto& row : kTable)
        if (name == row.name)
            return row.vertex;
    return std::nullopt;
}

std::vector<std::string> vertexNames()
{
    std::vector<std::string> out;
    for (const auto& row : kTable)
        out.push_back(row.name);
    return out;
}

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
