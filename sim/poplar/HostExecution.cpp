// SPDX-License-Identifier: MIT
#include "sim/poplar/HostExecution.hpp"

#include "sim/poplar/Elements.hpp"

#include <poplar/exceptions.hpp>

#include <fmt/format.h>

#include <cstring>
#include <iostream>
#include <memory>

namespace poplar::detail {

namespace {

/** One vertex's buffers, as its tile holds them during compute: one an edge, and the memory its
 *  field arrays need. */
struct VertexFrame
{
    unsigned id = 0;
    void* instance = nullptr;
    const VertexClassInfo* codelet = nullptr;
    std::vector<std::vector<std::vector<unsigned char>>> buffers; // field, edge
    std::vector<std::unique_ptr<unsigned char[]>> arrays;

    VertexFrame() = default;
    VertexFrame(const VertexFrame&) = delete;
    VertexFrame& operator=(const VertexFrame&) = delete;
    ~VertexFrame() { release(); }
    void release()
    {
        if (instance)
            codelet->destroy(instance);
        instance = nullptr;
    }
};

void* allocateIn(void* context, std::size_t bytes)
{
    auto& frame = *static_cast<VertexFrame*>(context);
    frame.arrays.emplace_back(new unsigned char[bytes]());
    return frame.arrays.back().get();
}

/** Reads the vertex's edges and binds every field of a new instance of its class. */
void prepare(GraphStore& store, VertexFrame& frame)
{
    const VertexRecord& v = store.vertices[frame.id];
    frame.codelet = v.codelet;
    frame.instance = v.codelet->create();
    frame.buffers.resize(v.codelet->numFields);
    for (std::size_t i = 0; i < v.codelet->numFields; ++i) {
        const FieldInfo& info = v.codelet->fields[i];
        const FieldRecord& f = v.fields.at(info.name);
        std::vector<EdgeBuffer> edges;
        if (info.direction == FieldDirection::State) {
            frame.buffers[i].push_back(f.value);
            edges.push_back({frame.buffers[i].back().data(), f.valueCount});
        } else {
            for (const auto& edge : f.edges)
                frame.buffers[i].push_back(gather(store, *edge)); // outputs too: a vertex may leave elements as they were
            for (std::size_t e = 0; e < f.edges.size(); ++e)
                edges.push_back({frame.buffers[i][e].data(), f.edges[e]->numElements()});
        }
        FieldBinding binding{edges.data(), edges.size(), &allocateIn, &frame};
        info.bind(frame.instance, binding);
    }
}

void finish(GraphStore& store, VertexFrame& frame)
{
    const VertexRecord& v = store.vertices[frame.id];
    for (std::size_t i = 0; i < v.codelet->numFields; ++i) {
        const FieldInfo& info = v.codelet->fields[i];
        if (info.direction != FieldDirection::Output && info.direction != FieldDirection::InOut)
            continue;
        const FieldRecord& f = v.fields.at(info.name);
        for (std::size_t e = 0; e < f.edges.size(); ++e)
            scatter(store, *f.edges[e], frame.buffers[i][e].data());
    }
    frame.release();
}

} // namespace

void HostExecution::execute(unsigned computeSet)
{
    // Every vertex reads its inputs before any writes its outputs: on the IPU the exchange
    // delivers them all before the compute phase.
    const auto& set = m_store.computeSets[computeSet];
    // Frames free their vertices however this ends (a codelet may throw).
    std::vector<VertexFrame> frames(set.vertices.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
        frames[i].id = set.vertices[i];
        prepare(m_store, frames[i]);
    }
    for (auto& frame : frames) {
        // A MultiVertex runs on each worker; a Vertex, or a SupervisorVertex, once.
        const unsigned runs = frame.codelet->kind == VertexKind::MultiVertex ? m_store.target.getNumWorkerContexts() : 1u;
        bool ok = true;
        try {
            for (unsigned w = 0; w < runs; ++w)
                ok = frame.codelet->compute(frame.instance, w) && ok;
        } catch (const std::exception& e) {
            throw poplar_error(fmt::format("{} in compute set '{}' threw from compute(): {}", m_store.describeVertex(frame.id), set.name, e.what()));
        }
        if (!ok)
            throw poplar_error(fmt::format("{} in compute set '{}' returned false from compute()", m_store.describeVertex(frame.id), set.name));
    }
    for (auto& frame : frames)
        finish(m_store, frame);
}

void HostExecution::stream(const DataStream& s, const Tensor& t, bool toDevice)
{
    const auto it = m_streams.find(s.handle());
    if (it == m_streams.end())
        throw stream_connection_error(fmt::format("stream '{}' is not connected: call Engine::connectStream(\"{}\", buffer) before run()",
                                                  s.handle(), s.handle()));
    StreamBuffer& b = it->second;
    const std::size_t bytes = s.numElements() * s.elementType().size();
    std::vector<unsigned char> data(bytes);
    if (toDevice) {
        if (b.callback)
            b.callback(data.data());
        else
            std::memcpy(data.data(), b.at, bytes);
        scatter(m_store, t, data.data());
    } else {
        gatherInto(m_store, t, data.data());
        if (b.callback)
            b.callback(data.data());
        else
            std::memcpy(b.at, data.data(), bytes);
    }
    if (!b.callback && b.end) {
        b.at += bytes;
        if (b.at + bytes > b.end)
            b.at = b.begin;
    }
}

bool HostExecution::truth(const Tensor& predicate) const
{
    return values(m_store, predicate).at(0) != 0;
}

void HostExecution::run(const ProgramNode& node)
{
    std::visit(
        [&](const auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (std::is_same_v<T, SequenceNode>) {
                for (const auto& c : op.children)
                    run(*c);
            } else if constexpr (std::is_same_v<T, ExecuteNode>) {
                execute(op.computeSet);
            } else if constexpr (std::is_same_v<T, CopyNode>) {
                const auto data = gather(m_store, op.src);
                scatter(m_store, op.dst, data.data());
            } else if constexpr (std::is_same_v<T, StreamToTensorNode>) {
                stream(op.stream, op.dst, true);
            } else if constexpr (std::is_same_v<T, TensorToStreamNode>) {
                stream(op.stream, op.src, false);
            } else if constexpr (std::is_same_v<T, RepeatNode>) {
                for (unsigned i = 0; i < op.count; ++i)
                    run(*op.body);
            } else if constexpr (std::is_same_v<T, PoplibsNode>) {
                op.host(m_store);
            } else if constexpr (std::is_same_v<T, RemoteCopyNode>) {
                const std::string where = fmt::format("Copy {} remote buffer '{}'", op.store ? "to" : "from", op.buffer.handle());
                const long double offset = op.offset ? values(m_store, *op.offset).at(0) : 0;
                if (offset < 0)
                    throw index_error(fmt::format("{}: slot {} (the offset tensor's value)", where, double(offset)));
                const std::uint64_t slot = std::uint64_t(offset);
                unsigned char* data = m_store.remoteSlot(op.buffer.handle(), slot, where);
                if (op.store)
                    gatherInto(m_store, op.tensor, data);
                else
                    scatter(m_store, op.tensor, data);
            } else if constexpr (std::is_same_v<T, IfNode>) {
                const bool taken = truth(op.predicate);
                m_outcomes.taken[&node].push_back(taken);
                run(taken ? *op.then : *op.otherwise);
            } else if constexpr (std::is_same_v<T, RepeatWhileNode>) {
                std::uint64_t iterations = 0;
                for (run(*op.condition); truth(op.predicate) == op.whileTrue; run(*op.condition)) {
                    if (++iterations > kMaxWhileIterations)
                        throw poplar_error(fmt::format("{} '{}' ran {} iterations and goes on: its predicate never turned {}",
                                                       op.whileTrue ? "RepeatWhileTrue" : "RepeatWhileFalse", node.name,
                                                       kMaxWhileIterations, op.whileTrue ? "false" : "true"));
                    run(*op.body);
                }
                m_outcomes.taken[&node].push_back(iterations);
            } else if constexpr (std::is_same_v<T, PrintTensorNode>) {
                const auto data = gather(m_store, op.tensor);
                std::cout << (op.title.empty() ? "" : op.title + ": ") << '[';
                for (std::size_t i = 0; i < op.tensor.numElements(); ++i) {
                    float f = 0;
                    convertElements(data.data() + i * op.tensor.elementType().size(), op.tensor.elementType(), &f, FLOAT, 1);
                    std::cout << (i ? " " : "") << f;
                }
                std::cout << "]\n";
            }
        },
        node.op);
}

} // namespace poplar::detail
