// SPDX-License-Identifier: MIT
#include "models/timing/VertexTable.hpp"

#include <stdexcept>

namespace ipusim {
namespace {

using costs::BinaryOpKind;
using costs::NonLinearity;
using costs::UnaryOpKind;

// Each row's estimator, reading the call's operation and arguments (a namespace of their own:
// their names are the vertices' and would meet the formulas' in a unity build).
namespace estimate {

template <class Args>
const Args& argsOf(const VertexCall& call)
{
    if (const Args* args = std::get_if<Args>(&call.args))
        return *args;
    throw std::logic_error(std::string("vertex ") + rowOf(call.codelet.vertex()).name + " called with another kind of arguments");
}

uint64_t conv1x1(const IpuParams& hw, const VertexCall& c) { return costs::convPartial1x1Out(hw, argsOf<costs::ConvShape>(c)); }
uint64_t convNx1(const IpuParams& hw, const VertexCall& c) { return costs::convPartialNx1(hw, argsOf<costs::ConvShape>(c)); }

template <bool InPlace>
uint64_t unary(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ElementArgs>(c);
    return costs::unaryOp(hw, c.codelet.unaryOp(), a.type, a.elements, InPlace);
}

template <bool InPlace>
uint64_t binary(const IpuParams& hw, const VertexCall& c)
{
    // Comparisons also run on int32 operands (packed sequence ids), at their own rate.
    if (const auto* ints = std::get_if<Int32Args>(&c.args)) {
        if (InPlace || c.codelet.binaryOp() != BinaryOpKind::Equal)
            throw std::logic_error("int32 operands are priced for BinaryOp1D<EQUAL> only");
        return costs::equalInt32(hw, ints->elements);
    }
    const auto& a = argsOf<ElementArgs>(c);
    return costs::binaryOp(hw, c.codelet.binaryOp(), a.type, a.elements, InPlace);
}

template <bool InPlace>
uint64_t byScalar(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ElementArgs>(c);
    const BinaryOpKind op = c.codelet.binaryOp();
    if (InPlace && (op == BinaryOpKind::NotEqual || op == BinaryOpKind::Greater || op == BinaryOpKind::Less))
        throw std::logic_error("BroadcastScalar1DInPlace of a comparison (bool out) does not exist");
    return costs::broadcastScalar(hw, op, a.type, a.elements);
}

uint64_t fusedMap(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ElementArgs>(c);
    return costs::fusedMap(hw, c.codelet.mapExpr(), a.type, a.elements);
}

uint64_t nonLinearity(const IpuParams& hw, const VertexCall& c)
{
    // popnn's forward vertices priced here are GELU's; the others run as popops UnaryOps.
    if (c.codelet.nonLinearity() != NonLinearity::Gelu)
        throw std::logic_error("NonLinearity1DInPlace is priced for GELU only");
    const auto& a = argsOf<ElementArgs>(c);
    return costs::geluNonLinearity(hw, a.type, a.elements);
}

uint64_t nonLinearityGrad(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ElementArgs>(c);
    return costs::nonLinearityGrad(hw, c.codelet.nonLinearity(), a.type, a.elements);
}

uint64_t cast(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<CastArgs>(c);
    return a.from ? costs::cast(hw, *a.from, a.to, a.elements) : costs::castFromBool(hw, a.elements);
}

uint64_t reducePartials(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ReduceArgs>(c);
    return costs::reduce(hw, a.partials, a.outputs, a.partialsPerOutput);
}

uint64_t reduceSingleInput(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ReduceArgs>(c);
    return costs::singleInputReduce(hw, a.partials, a.output, a.partialsPerOutput);
}

uint64_t reduceStrided(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ReduceArgs>(c);
    return costs::stridedReduce(hw, a.partials, a.output, a.outputs, a.partialsPerOutput, a.stride ? a.stride : a.outputs);
}

uint64_t reduceContinuous(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ReduceArgs>(c);
    return costs::reduceRows(hw, a.partials, a.outputs, a.partialsPerOutput);
}

// Formulas of one type and a count of elements (scaled add, fill, dropout), of a count alone
// (InverseStdDeviation's channels, EncodeOneHot's indices), and of the slices' offsets and elements.
template <uint64_t (*Formula)(const IpuParams&, Precision, uint64_t)>
uint64_t ofElements(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<ElementArgs>(c);
    return Formula(hw, a.type, a.elements);
}

template <uint64_t (*Formula)(const IpuParams&, uint64_t)>
uint64_t ofCount(const IpuParams& hw, const VertexCall& c)
{
    return Formula(hw, argsOf<CountArgs>(c).count);
}

template <uint64_t (*Formula)(const IpuParams&, Precision, uint64_t, uint64_t)>
uint64_t ofSlice(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<SliceArgs>(c);
    return Formula(hw, a.type, a.offsets, a.elements);
}

template <costs::PoolVertex Kind>
uint64_t pooling(const IpuParams& hw, const VertexCall& c)
{
    return costs::pooling(hw, Kind, argsOf<costs::PoolTileWork>(c));
}

uint64_t copy(const IpuParams& hw, const VertexCall& c)
{
    const auto& a = argsOf<CopyArgs>(c);
    return costs::copy(hw, a.bytes, a.elementBytes);
}

} // namespace estimate

// Sections are those of poplibs-costs.md, which names each estimator's PopLibs source file.
const std::array<VertexRow, kVertexCount> kTable = {{
    {Vertex::ConvPartial1x1Out, "ConvPartial1x1Out", VertexOps::None, estimate::conv1x1, "poplin getConvPartial1x1SupervisorCycleEstimate, §3.2"},
    {Vertex::ConvPartialnx1, "ConvPartialnx1", VertexOps::None, estimate::convNx1, "poplin getConvPartialnx1SupervisorCycleEstimate, §3.2"},
    {Vertex::UnaryOp1D, "UnaryOp1D", VertexOps::Unary, estimate::unary<false>, "popops unaryOpSupervisor estimator, §3.4"},
    {Vertex::UnaryOp1DInPlace, "UnaryOp1DInPlace", VertexOps::Unary, estimate::unary<true>, "popops unaryOpInPlaceSupervisor estimator, §3.4"},
    {Vertex::BinaryOp1D, "BinaryOp1D", VertexOps::Binary, estimate::binary<false>, "popops binaryOpSupervisor estimator, §3.4"},
    {Vertex::BinaryOp1DInPlace, "BinaryOp1DInPlace", VertexOps::Binary, estimate::binary<true>, "popops binaryOpInPlaceSupervisor estimator, §3.4"},
    {Vertex::BroadcastScalar1DInPlace, "BroadcastScalar1DInPlace", VertexOps::Binary, estimate::byScalar<true>, "popops BroadcastScalar1DInPlaceSupervisor estimator, §3.9"},
    {Vertex::BroadcastScalar1D, "BroadcastScalar1D", VertexOps::Binary, estimate::byScalar<false>, "popops BroadcastScalar1DSupervisor estimator (broadcastOpPerfInfo), §3.9"},
    {Vertex::ClampInPlace, "ClampInPlace", VertexOps::None, estimate::ofElements<costs::clamp>, "popops ClampInPlace estimator (clampCycles)"},
    {Vertex::SelectInPlace, "SelectInPlace", VertexOps::None, estimate::ofCount<costs::selectInPlace>, "popops SelectInPlace estimator, as written"},
    {Vertex::FusedMap, "FusedMap", VertexOps::Map, estimate::fusedMap, "popops ExpressionGenerator's setPerfEstimate (generated map codelets), §3.12"},
    {Vertex::NonLinearity1DInPlace, "NonLinearity1DInPlace", VertexOps::NonLinearity, estimate::nonLinearity, "popnn NonLinearity1DInPlace estimator, §3.5"},
    {Vertex::NonLinearityGrad1D, "NonLinearityGrad1D", VertexOps::NonLinearity, estimate::nonLinearityGrad, "popnn NonLinearityGrad1D estimator, §3.5"},
    {Vertex::ScaledAddSupervisor, "ScaledAddSupervisor", VertexOps::None, estimate::ofElements<costs::scaledAdd>, "popops getScaledArithmeticSupervisorCycleEstimate, §3.6"},
    {Vertex::Cast1D, "Cast1D", VertexOps::None, estimate::cast, "popops getCast1DCycleEstimate, §3.7"},
    {Vertex::Fill, "Fill", VertexOps::None, estimate::ofElements<costs::fill>, "popops _fillCycleEstimate, §3.7"},
    {Vertex::ReducePartials, "ReducePartials", VertexOps::Reduce, estimate::reducePartials, "poplin getReduceCycleEstimate (conv partials), §3.3"},
    {Vertex::ReduceSingleInput, "ReduceSingleInput", VertexOps::Reduce, estimate::reduceSingleInput, "popops getCyclesEstimateForSingleInput, §3.8"},
    {Vertex::ReduceStrided, "ReduceStrided", VertexOps::Reduce, estimate::reduceStrided, "popops getCyclesEstimateForStridedReduce, §3.8"},
    {Vertex::ReduceContinuous, "ReduceContinuous", VertexOps::Reduce, estimate::reduceContinuous, "popops getCycleEstimateReduceAllRegionsContinuous, §3.8"},
    {Vertex::MaxPooling, "MaxPooling", VertexOps::None, estimate::pooling<costs::PoolVertex::Max>, "popnn getPoolingCycles, §3.11"},
    {Vertex::SumPooling, "SumPooling", VertexOps::None, estimate::pooling<costs::PoolVertex::Sum>, "popnn getPoolingCycles, §3.11"},
    {Vertex::MaxPoolingGrad, "MaxPoolingGrad", VertexOps::None, estimate::pooling<costs::PoolVertex::MaxGrad>, "popnn getPoolingCycles, §3.11"},
    {Vertex::InverseStdDeviation, "InverseStdDeviation", VertexOps::None, estimate::ofCount<costs::inverseStdDeviation>, "poplin InverseStdDeviation estimator, §3.10"},
    {Vertex::DropoutSupervisor, "DropoutSupervisor", VertexOps::None, estimate::ofElements<costs::dropout>, "poprand DropoutSupervisor estimator"},
    {Vertex::EncodeOneHot, "EncodeOneHot", VertexOps::None, estimate::ofCount<costs::encodeOneHot>, "popops EncodeOneHot estimator, §3.12"},
    {Vertex::MultiSlice, "MultiSlice", VertexOps::None, estimate::ofSlice<costs::multiSlice>, "popops getMultiSliceCycleEstimate, §3.12"},
    {Vertex::MultiUpdateAdd, "MultiUpdateAdd", VertexOps::None, estimate::ofSlice<costs::multiUpdateAdd>, "popops getMultiSliceCycleEstimate with an add, §3.12"},
    {Vertex::Copy, "Copy", VertexOps::None, estimate::copy, "no estimator: an element a cycle, at most memcpy_bytes_per_cycle"},
    {Vertex::Select, "Select", VertexOps::None, estimate::ofCount<costs::select>, "popops Select estimator: 5 + selectCycles a worker's region"},
}};

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

uint64_t cyclesOf(const IpuParams& hw, const VertexCall& call) { return rowOf(call.codelet.vertex()).cycles(hw, call); }

} // namespace ipusim
