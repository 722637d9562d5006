// SPDX-License-Identifier: MIT
// What Poplar's graph compiler refuses, checked before lowering: vertices off any tile, fields
// never connected or given a value, tensors not mapped to tiles.
#include "sim/poplar/CompiledGraph.hpp"

#include <poplar/exceptions.hpp>

#include <fmt/format.h>

#include <set>

namespace poplar::detail {

namespace {

/** The first element of `t` not mapped to a tile, or none. */
std::optional<std::size_t> firstUnmapped(const GraphStore& store, const Tensor& t)
{
    std::size_t flat = 0;
    for (const auto& r : t.regions()) {
        const auto& tiles = store.variables[r.var].tile;
        for (std::size_t e = r.begin; e < r.end; ++e, ++flat)
            if (tiles[e] == kUnmapped)
                return flat;
    }
    return std::nullopt;
}

void checkMapped(const GraphStore& store, const Tensor& t, const std::string& user)
{
    store.checkOwned(t, user);
    if (const auto e = firstUnmapped(store, t))
        throw invalid_tile_mapping(fmt::format("{} uses {}, whose element {} is not mapped to a tile (setTileMapping)", user,
                                               store.describeTensor(t), *e));
}

void checkVertex(const GraphStore& store, unsigned id)
{
    const auto& v = store.vertices[id];
    const std::string name = store.describeVertex(id);
    if (v.tile == kUnmapped)
        throw invalid_tile_mapping(fmt::format("{} in compute set '{}' is not mapped to a tile (setTileMapping)", name,
                                               store.computeSets[v.computeSet].name));
    for (const auto& [fieldName, f] : v.fields) {
        if (f.info->direction == FieldDirection::State) {
            if (!f.hasValue)
                throw graph_connection_error(fmt::format("field '{}' of {} has no value: give it one with setInitialValue", fieldName, name));
            continue;
        }
        if ((f.info->vectorOfEdges || f.info->shape == FieldShape::VectorList) && !f.sized)
            throw graph_connection_error(fmt::format("field '{}' of {} is not connected: connect it to a list of tensors, or "
                                                     "setFieldSize and connect each field[i]", fieldName, name));
        for (std::size_t i = 0; i < f.edges.size(); ++i) {
            const std::string field = f.edges.size() > 1 || f.sized ? fmt::format("'{}[{}]'", fieldName, i) : fmt::format("'{}'", fieldName);
            if (!f.edges[i])
                throw graph_connection_error(fmt::format("field {} of {} is not connected to a tensor", field, name));
            checkMapped(store, *f.edges[i], fmt::format("field {} of {}", field, name));
        }
    }
}

void checkProgram(const GraphStore& store, const ProgramNode& node, std::set<const ProgramNode*>& seen)
{
    if (!seen.insert(&node).second)
        return;
    std::visit(
        [&](const auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (std::is_same_v<T, SequenceNode>) {
                for (const auto& c : op.children)
                    checkProgram(store, *c, seen);
            } else if constexpr (std::is_same_v<T, RepeatNode>) {
                checkProgram(store, *op.body, seen);
            } else if constexpr (std::is_same_v<T, RemoteCopyNode>) {
                if (!store.remoteBuffers.count(op.buffer.handle()))
                    throw invalid_program(fmt::format("a Copy with remote buffer '{}', which is not of this graph", op.buffer.handle()));
                checkMapped(store, op.tensor, fmt::format("the Copy with remote buffer '{}'", op.buffer.handle()));
                if (op.offset)
                    checkMapped(store, *op.offset, fmt::format("the Copy with remote buffer '{}'", op.buffer.handle()));
            } else if constexpr (std::is_same_v<T, IfNode>) {
                checkMapped(store, op.predicate, "an If");
                checkProgram(store, *op.then, seen);
                checkProgram(store, *op.otherwise, seen);
            } else if constexpr (std::is_same_v<T, RepeatWhileNode>) {
                checkMapped(store, op.predicate, "a RepeatWhile loop");
                checkProgram(store, *op.condition, seen);
                checkProgram(store, *op.body, seen);
            } else if constexpr (std::is_same_v<T, ExecuteNode>) {
                if (op.computeSet >= store.computeSets.size())
                    throw invalid_program(fmt::format("Execute of compute set {}: the graph has {}", op.computeSet, store.computeSets.size()));
            } else if constexpr (std::is_same_v<T, CopyNode>) {
                store.checkOwned(op.src, "Copy");
                store.checkOwned(op.dst, "Copy");
                checkMapped(store, op.src, "a Copy");
                checkMapped(store, op.dst, "a Copy");
                for (const auto& r : op.dst.regions())
                    if (store.variables[r.var].constant)
                        throw invalid_program(fmt::format("a Copy writes to {}, a constant", store.describeTensor(op.dst)));
            } else if constexpr (std::is_same_v<T, StreamToTensorNode>) {
                checkMapped(store, op.dst, fmt::format("the Copy from stream '{}'", op.stream.handle()));
            } else if constexpr (std::is_same_v<T, TensorToStreamNode>) {
                checkMapped(store, op.src, fmt::format("the Copy to stream '{}'", op.stream.handle()));
            } else if constexpr (std::is_same_v<T, PrintTensorNode>) {
                checkMapped(store, op.tensor, "a PrintTensor");
            } else if constexpr (std::is_same_v<T, PoplibsNode>) {
                for (const auto& t : op.inputs)
                    checkMapped(store, t, "'" + node.name + "'");
                checkMapped(store, op.output, "'" + node.name + "'");
            }
        },
        node.op);
}

} // namespace

void checkGraph(const GraphStore& store, const std::vector<NodePtr>& programs)
{
    for (unsigned id = 0; id < store.vertices.size(); ++id)
        checkVertex(store, id);
    std::set<const ProgramNode*> seen;
    for (const auto& p : programs)
        checkProgram(store, *p, seen);
    for (const auto& v : store.variables)
        for (std::size_t e = 0; e < v.elements; ++e)
            if (v.tile[e] == kUnmapped)
                throw invalid_tile_mapping(fmt::format("{} '{}' of shape {}: element {} is not mapped to a tile (setTileMapping)",
                                                       v.constant ? "constant" : "variable", v.name,
                                                       Tensor(v.type, v.shape, {}).shapeToString(), e));
}

} // namespace poplar::detail
