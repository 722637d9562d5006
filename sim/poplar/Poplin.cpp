// SPDX-License-Identifier: MIT
// poplin: matrix products, a PoplibsNode each: computed on the host (fp32 partials, as poplin's
// default), planned and priced by the compiler's convolution planner, as a model's matmul is.
#include "sim/poplar/Elements.hpp"
#include "sim/poplar/GraphStore.hpp"
#include "sim/poplar/ProgramNode.hpp"
#include "sim/poplar/TargetAccess.hpp"
#include "workloads/lowering/ConvPlanner.hpp"

#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <poplar/exceptions.hpp>
#include <poputil/TileMapping.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace poplin {

using poplar::Tensor;

void addCodelets(poplar::Graph&) {} // the convolution planner prices poplin's vertices; nothing to compile

namespace {

/** The matmul's groups (a batch), rows, reduction and columns; throws on shapes that do not multiply. */
std::array<std::size_t, 4> dimsOf(const Tensor& A, const Tensor& B)
{
    const bool batched = A.rank() == 3;
    if (A.rank() != B.rank() || (A.rank() != 2 && A.rank() != 3) || (batched && A.dim(0) != B.dim(0)) ||
        A.dim(A.rank() - 1) != B.dim(B.rank() - 2))
        throw poplar::poplar_error(fmt::format("poplin matMul of shapes {} and {}: expected [m, k] x [k, n] or [g, m, k] x [g, k, n]",
                                               A.shapeToString(), B.shapeToString()));
    return {batched ? A.dim(0) : 1, A.dim(A.rank() - 2), A.dim(A.rank() - 1), B.dim(B.rank() - 1)};
}

ipusim::Precision precisionOf(const poplar::Type& t)
{
    if (t == poplar::HALF)
        return ipusim::Precision::FP16;
    if (t == poplar::FLOAT)
        return ipusim::Precision::FP32;
    throw poplar::type_error(fmt::format("poplin matMul of {} operands: expected half or float", t.toString()));
}

/** The tiles a graph's matmul is planned on: its own, up to one IPU's. */
ipusim::IpuParams planningIpu(const poplar::Graph& graph)
{
    ipusim::IpuParams hw = poplar::systemOf(graph.getTarget()).ipu;
    hw.tiles = std::min(graph.getTarget().getNumTiles(), graph.getTarget().getTilesPerIPU());
    return hw;
}

} // namespace

Tensor matMul(poplar::Graph& graph, const Tensor& A, const Tensor& B, poplar::program::Sequence& prog, const poplar::Type& outputType,
              const poplar::DebugContext& debugContext, const poplar::OptionFlags&, PlanningCache*)
{
    graph.store()->checkOwned(A, "poplin matMul");
    graph.store()->checkOwned(B, "poplin matMul");
    const auto [groups, m, k, n] = dimsOf(A, B);
    if (A.elementType() != B.elementType())
        throw poplar::type_error(fmt::format("poplin matMul of {} and {} operands", A.elementType().toString(), B.elementType().toString()));
    const std::string name = debugContext.getPathName().empty() ? "poplin::matMul" : debugContext.getPathName();
    poplar::detail::PoplibsNode node;
    node.kind = poplar::detail::PoplibsNode::Kind::MatMul;
    node.problem.groups = groups;
    node.problem.positions = m;
    node.problem.reduction = k;
    node.problem.outChans = n;
    node.problem.input = precisionOf(A.elementType());
    node.problem.partials = ipusim::Precision::FP32;
    node.problem.output = precisionOf(outputType);
    const ipusim::IpuParams hw = planningIpu(graph);
    node.firstTile = graph.tileBase();
    node.tiles = hw.tiles;
    // The product lands on the plan's tiles: its elements spread evenly over them, in order.
    const ipusim::ConvPlan plan = ipusim::planConv(hw, node.problem);
    std::vector<std::size_t> shape = A.rank() == 3 ? std::vector<std::size_t>{groups, m, n} : std::vector<std::size_t>{m, n};
    Tensor C = graph.addVariable(outputType, shape, name + "/out");
    const std::size_t used = std::max<std::size_t>(1, std::min<std::size_t>(plan.tilesUsed(), hw.tiles));
    const Tensor flat = C.flatten();
    const std::size_t per = (flat.numElements() + used - 1) / used;
    for (std::size_t t = 0, at = 0; at < flat.numElements(); ++t, at += per)
        graph.setTileMapping(flat.slice(at, std::min(flat.numElements(), at + per)), unsigned(t));
    node.inputs = {A, B};
    node.output = C;
    const std::size_t g = groups, rows = m, inner = k, cols = n;
    node.host = [=](poplar::detail::GraphStore& store) {
        const auto a = poplar::detail::values(store, A), b = poplar::detail::values(store, B);
        std::vector<long double> c(g * rows * cols);
        for (std::size_t q = 0; q < g; ++q)
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t j = 0; j < cols; ++j) {
                    float sum = 0; // fp32 partials
                    for (std::size_t p = 0; p < inner; ++p)
                        sum += float(a[(q * rows + i) * inner + p]) * float(b[(q * inner + p) * cols + j]);
                    c[(q * rows + i) * cols + j] = sum;
                }
        poplar::detail::setValues(store, C, c);
    };
    prog.add(poplar::detail::ProgramAccess::make(name, std::move(node)));
    return C;
}

Tensor matMul(poplar::Graph& graph, const Tensor& A, const Tensor& B, poplar::program::Sequence& prog, const poplar::DebugContext& debugContext,
              const poplar::OptionFlags& options, PlanningCache* cache)
{
    return matMul(graph, A, B, prog, A.elementType(), debugContext, options, cache);
}

Tensor createMatMulInputLHS(poplar::Graph& graph, const poplar::Type& type, const std::vector<std::size_t>& aShape,
                            const std::vector<std::size_t>& /*bShape*/, const poplar::DebugContext& debugContext, const poplar::OptionFlags&,
                            PlanningCache*)
{
    Tensor t = graph.addVariable(type, aShape, debugContext);
    poputil::mapTensorLinearly(graph, t);
    return t;
}

Tensor createMatMulInputRHS(poplar::Graph& graph, const poplar::Type& type, const std::vector<std::size_t>& /*aShape*/,
                            const std::vector<std::size_t>& bShape, const poplar::DebugContext& debugContext, const poplar::OptionFlags&,
                            PlanningCache*)
{
    Tensor t = graph.addVariable(type, bShape, debugContext);
    poputil::mapTensorLinearly(graph, t);
    return t;
}

} // namespace poplin
