// SPDX-License-Identifier: MIT
#pragma once
// A Poplar program as a tree: what program::Sequence, Execute, Copy, ... build, and what the
// engine runs on the host and lowers onto the simulated IPUs.
#include "models/timing/VertexTable.hpp"
#include "workloads/graph/Graph.hpp"

#include <poplar/DataStream.hpp>
#include <poplar/Program.hpp>
#include <poplar/SyncType.hpp>
#include <poplar/Tensor.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace poplar::detail {

struct ProgramNode;
struct GraphStore;
using NodePtr = std::shared_ptr<ProgramNode>;

struct SequenceNode { std::vector<NodePtr> children; };
struct ExecuteNode { unsigned computeSet = 0; };
struct CopyNode { Tensor src, dst; };
struct StreamToTensorNode { DataStream stream; Tensor dst; };
struct TensorToStreamNode { Tensor src; DataStream stream; };
struct RepeatNode { unsigned count = 0; NodePtr body; };
struct SyncNode { SyncType type = SyncType::INTERNAL; };
struct PrintTensorNode { std::string title; Tensor tensor; };
struct WriteUndefNode { Tensor tensor; };
struct IfNode { Tensor predicate; NodePtr then, otherwise; };
/** A load from (or store to) a remote buffer's slot: slot 0, or the one `offset` holds. */
struct RemoteCopyNode { RemoteBuffer buffer; Tensor tensor; std::optional<Tensor> offset; bool store = false; };
struct RepeatWhileNode { NodePtr condition; Tensor predicate; NodePtr body; bool whileTrue = true; };

/** A PopLibs op (popops, poplin): computed on the host by `host`, priced by the vertex table
 *  (element-wise ops, fills, reductions: `codelet` over each tile's elements of `output`) or by
 *  the convolution planner (a matmul: `problem` on tiles from `firstTile`). */
struct PoplibsNode
{
    enum class Kind { ElementWise, Fill, Reduce, MatMul } kind = Kind::ElementWise;
    std::optional<ipusim::Codelet> codelet;
    std::vector<Tensor> inputs;
    Tensor output;
    std::uint64_t partialsPerOutput = 1;    // Reduce
    std::vector<std::size_t> reduceOutputOf; // Reduce: each input element's output element
    ipusim::ConvProblem problem;          // MatMul
    std::uint32_t firstTile = 0;          // MatMul: the first tile of the graph it was planned on
    std::uint32_t tiles = 0;              // MatMul: that graph's tiles
    std::function<void(GraphStore&)> host;
};

struct ProgramNode
{
    std::string name;
    std::variant<SequenceNode, ExecuteNode, CopyNode, StreamToTensorNode, TensorToStreamNode, RepeatNode, SyncNode, PrintTensorNode,
                 WriteUndefNode, PoplibsNode, IfNode, RepeatWhileNode, RemoteCopyNode>
        op;
};

/** What a run's data decided where its control flow depends on it: for each If, the branch each
 *  time it ran (1: true); for each RepeatWhile loop, its iterations each time it ran. */
struct ControlOutcomes
{
    std::map<const ProgramNode*, std::vector<std::uint64_t>> taken;
    friend bool operator<(const ControlOutcomes& a, const ControlOutcomes& b) { return a.taken < b.taken; }
};

/** Whether a program holds an If or a RepeatWhile loop (its time then depends on its data). */
bool dependsOnData(const ProgramNode& node);

/** Programs of nodes made in the library (PopLibs' ops). */
struct ProgramAccess
{
    static program::Program make(std::string name, PoplibsNode op)
    {
        auto node = std::make_shared<ProgramNode>();
        node->name = std::move(name);
        node->op = std::move(op);
        return program::Program(std::move(node));
    }
};

} // namespace poplar::detail
