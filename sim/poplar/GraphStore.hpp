// SPDX-License-Identifier: MIT
#pragma once
// What a Poplar graph holds, shared by the graph and its virtual graphs: variables with their
// values and tile mapping, vertices with their fields, compute sets, host streams, codelets and
// cycle estimators. The public classes (poplar::Graph, Tensor, ...) are handles into it.
#include "sim/poplar/CodeletLibrary.hpp"

#include <poplar/DataStream.hpp>
#include <poplar/PerfEstimateFunc.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace poplar::detail {

inline constexpr std::uint32_t kUnmapped = ~0u;

struct VariableRecord
{
    std::string name;
    Type type;
    std::vector<std::size_t> shape;
    std::size_t elements = 0;
    bool constant = false;
    std::vector<unsigned char> data; // elements x type.size(), the values the codelets compute on
    std::vector<std::uint32_t> tile; // a tile (of the whole device) per element, kUnmapped until mapped
};

/** A field of a vertex as connected so far. */
struct FieldRecord
{
    const FieldInfo* info = nullptr;
    std::vector<std::optional<Tensor>> edges; // one for an edge, setFieldSize() for a Vector of edges
    bool sized = false;                       // setFieldSize() was called (a Vector of edges)
    std::vector<unsigned char> value;         // a state field's value(s), in the field's type
    std::size_t valueCount = 0;
    bool hasValue = false;
};

struct VertexRecord
{
    std::string type;
    const VertexClassInfo* codelet = nullptr;
    unsigned computeSet = 0;
    std::uint32_t tile = kUnmapped;
    std::map<std::string, FieldRecord> fields;
    std::optional<VertexPerfEstimate> estimate;
};

struct ComputeSetRecord
{
    std::string name;
    std::vector<unsigned> vertices;
};

struct GraphStore
{
    Target target;
    std::vector<VariableRecord> variables;
    std::vector<VertexRecord> vertices;
    std::vector<ComputeSetRecord> computeSets;
    std::map<std::string, DataStream> streams;
    std::map<std::string, RemoteBuffer> remoteBuffers;
    std::map<std::string, std::vector<unsigned char>> remoteData; // each buffer's slots, in Streaming Memory
    std::map<std::string, Tensor> hostWrites, hostReads;
    std::map<std::string, PerfEstimateFunc> estimators;
    CodeletLibrary codelets;

    /** "vertex 3 (SumVertex)". */
    [[nodiscard]] std::string describeVertex(unsigned id) const;
    /** "tensor 'v1'[0:4] of shape {4}": the first variable's name and the view's shape. */
    [[nodiscard]] std::string describeTensor(const Tensor& t) const;
    /** The bytes of slot `slot` of a remote buffer; throws naming the buffer past its slots. */
    unsigned char* remoteSlot(const std::string& handle, std::uint64_t slot, const std::string& where);

    /** Checks a tensor's regions name this store's variables. */
    void checkOwned(const Tensor& t, const std::string& where) const;
};

} // namespace poplar::detail
