// SPDX-License-Identifier: MIT
#include "sim/poplar/ProgramNode.hpp"

#include <poplar/Program.hpp>
#include <poplar/exceptions.hpp>

#include <fmt/format.h>

namespace poplar::program {

namespace {

template <class Op>
std::shared_ptr<detail::ProgramNode> makeNode(Op op, const DebugContext& debugContext)
{
    auto n = std::make_shared<detail::ProgramNode>();
    n->name = debugContext.getPathName();
    n->op = std::move(op);
    return n;
}

} // namespace

Program::Program() : m_node(makeNode(detail::SequenceNode{}, {})) {}

bool Program::isEmpty() const
{
    const auto* s = std::get_if<detail::SequenceNode>(&m_node->op);
    return s && s->children.empty();
}

Sequence::Sequence(const DebugContext& debugContext) : Program(makeNode(detail::SequenceNode{}, debugContext)) {}

Sequence::Sequence(std::initializer_list<Program> programs, const DebugContext& debugContext) : Sequence(debugContext)
{
    for (const auto& p : programs)
        add(p);
}

void Sequence::add(const Program& p)
{
    if (p.node() == m_node)
        throw invalid_program("Sequence::add: a sequence cannot hold itself");
    std::get<detail::SequenceNode>(m_node->op).children.push_back(p.node());
}

Execute::Execute(ComputeSet cs, const DebugContext& debugContext) : Program(makeNode(detail::ExecuteNode{cs.getId()}, debugContext)) {}

Copy::Copy(const Tensor& src, const Tensor& dst, bool, const DebugContext& debugContext)
    : Program(makeNode(detail::CopyNode{src, dst}, debugContext))
{
    if (src.numElements() != dst.numElements() || src.elementType() != dst.elementType())
        throw invalid_program(fmt::format("Copy from a tensor of shape {} ({}) to one of shape {} ({}): expected as many elements of one type",
                                          src.shapeToString(), src.elementType().toString(), dst.shapeToString(), dst.elementType().toString()));
}

Copy::Copy(const DataStream& stream, const Tensor& dst, bool, const DebugContext& debugContext)
    : Program(makeNode(detail::StreamToTensorNode{stream, dst}, debugContext))
{
    if (!stream.toDevice())
        throw invalid_program(fmt::format("Copy from stream '{}': it is a device-to-host stream", stream.handle()));
    if (stream.numElements() != dst.numElements() || stream.elementType() != dst.elementType())
        throw invalid_program(fmt::format("Copy from stream '{}' ({} {}) to a tensor of {} {}", stream.handle(), stream.numElements(),
                                          stream.elementType().toString(), dst.numElements(), dst.elementType().toString()));
}

Copy::Copy(const Tensor& src, const DataStream& stream, bool, const DebugContext& debugContext)
    : Program(makeNode(detail::TensorToStreamNode{src, stream}, debugContext))
{
    if (stream.toDevice())
        throw invalid_program(fmt::format("Copy to stream '{}': it is a host-to-device stream", stream.handle()));
    if (stream.numElements() != src.numElements() || stream.elementType() != src.elementType())
        throw invalid_program(fmt::format("Copy of a tensor of {} {} to stream '{}' ({} {})", src.numElements(), src.elementType().toString(),
                                          stream.handle(), stream.numElements(), stream.elementType().toString()));
}

namespace {
void checkRemote(const RemoteBuffer& buffer, const Tensor& t, const std::optional<Tensor>& offset)
{
    if (buffer.numElements() != t.numElements() || buffer.elementType() != t.elementType())
        throw invalid_program(fmt::format("Copy between remote buffer '{}' ({} {} a slot) and a tensor of {} {}", buffer.handle(),
                                          buffer.numElements(), buffer.elementType().toString(), t.numElements(), t.elementType().toString()));
    if (offset && (offset->numElements() != 1 || offset->elementType().isFloatingPoint()))
        throw invalid_program(fmt::format("Copy with remote buffer '{}': the offset is a tensor of {} {}: expected one integer", buffer.handle(),
                                          offset->numElements(), offset->elementType().toString()));
}
} // namespace

Copy::Copy(const RemoteBuffer& buffer, const Tensor& dst, const DebugContext& debugContext)
    : Program(makeNode(detail::RemoteCopyNode{buffer, dst, std::nullopt, false}, debugContext))
{
    checkRemote(buffer, dst, std::nullopt);
}

Copy::Copy(const RemoteBuffer& buffer, const Tensor& dst, const Tensor& offset, const DebugContext& debugContext)
    : Program(makeNode(detail::RemoteCopyNode{buffer, dst, offset, false}, debugContext))
{
    checkRemote(buffer, dst, offset);
}

Copy::Copy(const Tensor& src, const RemoteBuffer& buffer, const DebugContext& debugContext)
    : Program(makeNode(detail::RemoteCopyNode{buffer, src, std::nullopt, true}, debugContext))
{
    checkRemote(buffer, src, std::nullopt);
}

Copy::Copy(const Tensor& src, const RemoteBuffer& buffer, const Tensor& offset, const DebugContext& debugContext)
    : Program(makeNode(detail::RemoteCopyNode{buffer, src, offset, true}, debugContext))
{
    checkRemote(buffer, src, offset);
}

Repeat::Repeat(unsigned count, const Program& body, const DebugContext& debugContext)
    : Program(makeNode(detail::RepeatNode{count, body.node()}, debugContext)) {}

Sync::Sync(SyncType type, const DebugContext& debugContext) : Program(makeNode(detail::SyncNode{type}, debugContext)) {}

PrintTensor::PrintTensor(const Tensor& t, const DebugContext& debugContext) : PrintTensor("", t, debugContext) {}

PrintTensor::PrintTensor(const std::string& title, const Tensor& t, const DebugContext& debugContext)
    : Program(makeNode(detail::PrintTensorNode{title, t}, debugContext)) {}

namespace {
void checkPredicate(const Tensor& predicate, const char* program)
{
    if (predicate.numElements() != 1 || predicate.elementType().isFloatingPoint())
        throw invalid_program(fmt::format("{}: the predicate is a tensor of {} {} elements: expected one element of an integer or bool "
                                          "type", program, predicate.numElements(), predicate.elementType().toString()));
}
} // namespace

If::If(const Tensor& predicate, const Program& trueBody, const Program& falseBody, const DebugContext& debugContext)
    : Program(makeNode(detail::IfNode{predicate, trueBody.node(), falseBody.node()}, debugContext))
{
    checkPredicate(predicate, "If");
}

RepeatWhileTrue::RepeatWhileTrue(const Program& condition, const Tensor& predicate, const Program& body, const DebugContext& debugContext)
    : Program(makeNode(detail::RepeatWhileNode{condition.node(), predicate, body.node(), true}, debugContext))
{
    checkPredicate(predicate, "RepeatWhileTrue");
}

RepeatWhileFalse::RepeatWhileFalse(const Program& condition, const Tensor& predicate, const Program& body, const DebugContext& debugContext)
    : Program(makeNode(detail::RepeatWhileNode{condition.node(), predicate, body.node(), false}, debugContext))
{
    checkPredicate(predicate, "RepeatWhileFalse");
}

WriteUndef::WriteUndef(const Tensor& t, const DebugContext& debugContext) : Program(makeNode(detail::WriteUndefNode{t}, debugContext)) {}

} // namespace poplar::program

namespace poplar::detail {

bool dependsOnData(const ProgramNode& node)
{
    return std::visit(
        [](const auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (std::is_same_v<T, IfNode> || std::is_same_v<T, RepeatWhileNode>) {
                return true;
            } else if constexpr (std::is_same_v<T, SequenceNode>) {
                for (const auto& c : op.children)
                    if (dependsOnData(*c))
                        return true;
                return false;
            } else if constexpr (std::is_same_v<T, RepeatNode>) {
                return dependsOnData(*op.body);
            } else {
                return false;
            }
        },
        node.op);
}

} // namespace poplar::detail
