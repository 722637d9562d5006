// SPDX-License-Identifier: MIT
#pragma once
// A Poplar program as a tree: what program::Sequence, Execute, Copy, ... build, and what the
// engine runs on the host and lowers onto the simulated IPUs.
#include <poplar/DataStream.hpp>
#include <poplar/SyncType.hpp>
#include <poplar/Tensor.hpp>

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace poplar::detail {

struct ProgramNode;
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

struct ProgramNode
{
    std::string name;
    std::variant<SequenceNode, ExecuteNode, CopyNode, StreamToTensorNode, TensorToStreamNode, RepeatNode, SyncNode, PrintTensorNode,
                 WriteUndefNode>
        op;
};

} // namespace poplar::detail
