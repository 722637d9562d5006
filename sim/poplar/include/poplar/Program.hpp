// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: control programs, as Poplar's poplar::program classes. Each is a handle
// to a node of a program tree; the Engine runs the tree on the host and lowers it onto the
// simulated IPUs (a Repeat becomes a loop the simulator runs once and skips).
#include <poplar/DataStream.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Graph.hpp>
#include <poplar/SyncType.hpp>
#include <poplar/Tensor.hpp>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

namespace poplar {
namespace detail {
struct ProgramNode;
struct ProgramAccess;
} // namespace detail

namespace program {

class Program
{
public:
    Program();
    [[nodiscard]] bool isEmpty() const;
    [[nodiscard]] const std::shared_ptr<detail::ProgramNode>& node() const { return m_node; }

protected:
    friend struct detail::ProgramAccess;
    explicit Program(std::shared_ptr<detail::ProgramNode> node) : m_node(std::move(node)) {}
    std::shared_ptr<detail::ProgramNode> m_node;
};

/** Runs its programs in order. */
class Sequence : public Program
{
public:
    Sequence(const DebugContext& debugContext = {});
    Sequence(std::initializer_list<Program> programs, const DebugContext& debugContext = {});
    void add(const Program& p);
};

/** Runs a compute set: the exchange that brings its vertices' inputs, then their compute(). */
class Execute : public Program
{
public:
    explicit Execute(ComputeSet cs, const DebugContext& debugContext = {});
};

/** Copies elements between tensors (an exchange between tiles, IPU-Links between IPUs), or
 *  between a tensor and a host stream. */
class Copy : public Program
{
public:
    Copy(const Tensor& src, const Tensor& dst, bool dontOutline = false, const DebugContext& debugContext = {});
    Copy(const DataStream& stream, const Tensor& dst, bool optimiseMemory = false, const DebugContext& debugContext = {});
    Copy(const Tensor& src, const DataStream& stream, bool optimiseMemory = false, const DebugContext& debugContext = {});
    /** Loads slot 0 of a remote buffer (or the slot `offset`, a one-element integer tensor, says). */
    Copy(const RemoteBuffer& buffer, const Tensor& dst, const DebugContext& debugContext = {});
    Copy(const RemoteBuffer& buffer, const Tensor& dst, const Tensor& offset, const DebugContext& debugContext = {});
    /** Stores into a remote buffer's slot 0 (or the slot `offset` says). */
    Copy(const Tensor& src, const RemoteBuffer& buffer, const DebugContext& debugContext = {});
    Copy(const Tensor& src, const RemoteBuffer& buffer, const Tensor& offset, const DebugContext& debugContext = {});
};

/** Runs its body `count` times. */
class Repeat : public Program
{
public:
    Repeat(unsigned count, const Program& body, const DebugContext& debugContext = {});
};

/** Runs one of two programs by a predicate's value (a tensor of one element, true when not 0).
 *  The simulated run takes the branch the host run took. */
class If : public Program
{
public:
    If(const Tensor& predicate, const Program& trueBody, const Program& falseBody = Sequence(), const DebugContext& debugContext = {});
};

/** Runs `condition`, then `body` while `predicate` is true (RepeatWhileTrue) or false
 *  (RepeatWhileFalse), `condition` again after each iteration. The simulated run takes as many
 *  iterations as the host run took. */
class RepeatWhileTrue : public Program
{
public:
    RepeatWhileTrue(const Program& condition, const Tensor& predicate, const Program& body, const DebugContext& debugContext = {});
};
class RepeatWhileFalse : public Program
{
public:
    RepeatWhileFalse(const Program& condition, const Tensor& predicate, const Program& body, const DebugContext& debugContext = {});
};

/** A barrier over the tiles of one IPU (INTERNAL) or over every IPU (EXTERNAL, GLOBAL). */
class Sync : public Program
{
public:
    explicit Sync(SyncType type, const DebugContext& debugContext = {});
};

/** Prints a tensor's values to stdout when run (functional runs), as Poplar's PrintTensor. */
class PrintTensor : public Program
{
public:
    explicit PrintTensor(const Tensor& t, const DebugContext& debugContext = {});
    PrintTensor(const std::string& title, const Tensor& t, const DebugContext& debugContext = {});
};

/** Marks a tensor's contents undefined (no cost). */
class WriteUndef : public Program
{
public:
    explicit WriteUndef(const Tensor& t, const DebugContext& debugContext = {});
};

} // namespace program
} // namespace poplar
