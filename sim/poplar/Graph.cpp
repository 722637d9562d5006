// SPDX-License-Identifier: MIT
// poplar::Graph: records what the program builds into the GraphStore and checks it as Poplar
// does, each error naming the vertex, the field and the tensor.
#include "sim/poplar/Elements.hpp"
#include "sim/poplar/GraphStore.hpp"
#include "sim/poplar/TargetAccess.hpp"

#include <poplar/Graph.hpp>
#include <poplar/exceptions.hpp>
#include <poputil/TileMapping.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

namespace poplar {

namespace detail {

std::string GraphStore::describeVertex(unsigned id) const
{
    return fmt::format("vertex {} ({})", id, vertices.at(id).type);
}

std::string GraphStore::describeTensor(const Tensor& t) const
{
    if (!t.valid())
        return "an empty tensor";
    if (t.regions().empty())
        return fmt::format("a tensor of shape {} with no elements", t.shapeToString());
    const auto& r = t.regions().front();
    const auto& v = variables.at(r.var);
    std::string where = t.regions().size() == 1 && r.begin == 0 && r.end == v.elements ? "" : fmt::format(" (elements from {})", r.begin);
    return fmt::format("tensor '{}'{} of shape {}", v.name, where, t.shapeToString());
}

unsigned char* GraphStore::remoteSlot(const std::string& handle, std::uint64_t slot, const std::string& where)
{
    const auto it = remoteBuffers.find(handle);
    if (it == remoteBuffers.end())
        throw poplar_error(fmt::format("{}: no remote buffer '{}'", where, handle));
    const RemoteBuffer& b = it->second;
    if (slot >= b.getRepeats())
        throw index_error(fmt::format("{}: slot {} of remote buffer '{}', which has slots 0 to {}", where, slot, handle, b.getRepeats() - 1));
    return remoteData.at(handle).data() + slot * b.numElements() * b.elementType().size();
}

void GraphStore::checkOwned(const Tensor& t, const std::string& where) const
{
    if (!t.valid())
        throw poplar_error(fmt::format("{}: the tensor is empty (default-constructed)", where));
    for (const auto& r : t.regions())
        if (r.var >= variables.size() || r.end > variables[r.var].elements)
            throw poplar_error(fmt::format("{}: the tensor is not of this graph", where));
}

} // namespace detail

using detail::GraphStore;

Graph::Graph(const Target& target, replication_factor r) : m_store(std::make_shared<GraphStore>()), m_target(target), m_tiles(target.getNumTiles())
{
    if (r.value != 1)
        throw unimplemented_error(fmt::format("Graph: replication factor {}: ipusim's Poplar API runs unreplicated graphs (1)", r.value));
    if (target.getNumTiles() == 0)
        throw poplar_error("Graph: the target has no tiles (a default-constructed Target): take it from a Device");
    m_store->target = target;
}

Graph::Graph(const Device& device, replication_factor r) : Graph(device.getTarget(), r) {}
Graph::Graph(std::shared_ptr<GraphStore> store, Target target, unsigned tileBase, unsigned tiles)
    : m_store(std::move(store)), m_target(std::move(target)), m_tileBase(tileBase), m_tiles(tiles) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

const Target& Graph::getTarget() const { return m_target; }

Graph Graph::createVirtualGraph(unsigned lowerTile, unsigned upperTile)
{
    if (lowerTile >= upperTile || upperTile > m_tiles)
        throw poplar_error(fmt::format("createVirtualGraph({}, {}): expected 0 <= lower < upper <= {} (this graph's tiles)", lowerTile,
                                       upperTile, m_tiles));
    return Graph(m_store, TargetAccess::narrow(m_target, lowerTile, upperTile - lowerTile), m_tileBase + lowerTile, upperTile - lowerTile);
}

Graph Graph::createVirtualGraph(const std::vector<unsigned>& tiles)
{
    if (tiles.empty())
        throw poplar_error("createVirtualGraph: no tiles");
    for (std::size_t i = 1; i < tiles.size(); ++i)
        if (tiles[i] != tiles[i - 1] + 1)
            throw unimplemented_error("createVirtualGraph: ipusim takes a contiguous ascending range of tiles");
    return createVirtualGraph(tiles.front(), tiles.back() + 1);
}

unsigned Graph::globalTile(unsigned tile, const char* what) const
{
    if (tile >= m_tiles)
        throw invalid_tile_mapping(fmt::format("{}: tile {} of a graph of {} tiles", what, tile, m_tiles));
    return m_tileBase + tile;
}

// ---- codelets ----

bool Graph::addCodelets(StringRef src, CodeletFileType type, StringRef compileFlags, StringRef)
{
    m_store->codelets.add(src, type, compileFlags, nullptr);
    return true;
}

bool Graph::addCodelets(StringRef src, CodeletFileType type, StringRef compileFlags, std::ostream& compileOutput, StringRef)
{
    m_store->codelets.add(src, type, compileFlags, &compileOutput);
    return true;
}

bool Graph::addCodelets(ArrayRef<std::string> sources, StringRef compileFlags, StringRef)
{
    for (const auto& s : sources)
        m_store->codelets.add(s, CodeletFileType::Auto, compileFlags, nullptr);
    return true;
}

void Graph::addCodelets(std::stringstream& stream, StringRef compileFlags, CodeletFileType type, StringRef)
{
    // The compiler reads files: the stream goes to a file of its own for the compile.
    const auto path = std::filesystem::temp_directory_path() /
                      fmt::format("ipusim-codelet-{}-{}{}", getpid(), std::random_device{}(), getExtensionFromFileType(type));
    std::ofstream(path) << stream.str();
    try {
        m_store->codelets.add(path.string(), type, compileFlags, nullptr);
    } catch (...) {
        std::filesystem::remove(path);
        throw;
    }
    std::filesystem::remove(path);
}

bool Graph::hasCodelet(StringRef codeletName) const { return m_store->codelets.find(codeletName) != nullptr; }

// ---- tensors ----

Tensor Graph::addVariable(const Type& type, ArrayRef<std::size_t> shape, const DebugContext& debugContext)
{
    detail::VariableRecord v;
    v.type = type;
    v.shape = shape.vec();
    v.elements = 1;
    for (auto d : v.shape)
        v.elements *= d;
    v.name = debugContext.getPathName().empty() ? fmt::format("var{}", m_store->variables.size()) : debugContext.getPathName();
    v.data.assign(v.elements * type.size(), 0);
    v.tile.assign(v.elements, detail::kUnmapped);
    const auto id = unsigned(m_store->variables.size());
    m_store->variables.push_back(std::move(v));
    return Tensor(type, shape.vec(), {{id, 0, m_store->variables.back().elements}});
}

Tensor Graph::addVariable(const Type& type, ArrayRef<std::size_t> shape, VariableMappingMethod mapping, const DebugContext& debugContext)
{
    Tensor t = addVariable(type, shape, debugContext);
    if (mapping == VariableMappingMethod::LINEAR)
        poputil::mapTensorLinearly(*this, t);
    return t;
}

Tensor Graph::clone(const Tensor& t, const DebugContext& debugContext) { return clone(t.elementType(), t, debugContext); }

Tensor Graph::clone(const Type& type, const Tensor& t, const DebugContext& debugContext)
{
    m_store->checkOwned(t, "clone");
    Tensor c = addVariable(type, t.shape(), debugContext);
    // Same mapping, element by element.
    auto& vars = m_store->variables;
    std::size_t i = 0;
    const unsigned var = c.regions().front().var;
    for (const auto& r : t.regions())
        for (std::size_t e = r.begin; e < r.end; ++e)
            vars[var].tile[i++] = vars[r.var].tile[e];
    return c;
}

Tensor Graph::addConstantRaw(const Type& type, ArrayRef<std::size_t> shape, const void* values, std::size_t count, const Type& hostType,
                             const DebugContext& debugContext)
{
    std::size_t elements = 1;
    for (auto d : shape)
        elements *= d;
    const std::string name = debugContext.getPathName().empty() ? fmt::format("constant{}", m_store->variables.size()) : debugContext.getPathName();
    if (count != 1 && count != elements)
        throw tensor_creation_error(fmt::format("addConstant '{}': {} values for a tensor of {} elements (expected 1 or {})", name, count,
                                                elements, elements));
    Tensor t = addVariable(type, shape, name);
    auto& v = m_store->variables.back();
    v.constant = true;
    if (count == 1) {
        std::vector<unsigned char> one(type.size());
        detail::convertElements(values, hostType, one.data(), type, 1);
        for (std::size_t e = 0; e < v.elements; ++e)
            std::copy(one.begin(), one.end(), v.data.begin() + std::ptrdiff_t(e * type.size()));
    } else {
        detail::convertElements(values, hostType, v.data.data(), type, count);
    }
    return t;
}

void Graph::setTensorValueRaw(const Tensor& t, const void* values, std::size_t count, const Type& hostType)
{
    m_store->checkOwned(t, "setInitialValue");
    if (count != 1 && count != t.numElements())
        throw poplar_error(fmt::format("setInitialValue of {}: {} values for {} elements", m_store->describeTensor(t), count, t.numElements()));
    std::vector<unsigned char> bytes(t.numElements() * t.elementType().size());
    for (std::size_t e = 0; e < t.numElements(); ++e)
        detail::convertElements(static_cast<const unsigned char*>(values) + (count == 1 ? 0 : e * hostType.size()), hostType,
                                bytes.data() + e * t.elementType().size(), t.elementType(), 1);
    detail::scatter(*m_store, t, bytes.data());
}

void Graph::setTileMapping(const Tensor& t, unsigned tile)
{
    m_store->checkOwned(t, "setTileMapping");
    const unsigned global = globalTile(tile, fmt::format("setTileMapping of {}", m_store->describeTensor(t)).c_str());
    for (const auto& r : t.regions()) {
        auto& tiles = m_store->variables[r.var].tile;
        std::fill(tiles.begin() + std::ptrdiff_t(r.begin), tiles.begin() + std::ptrdiff_t(r.end), global);
    }
}

void Graph::setTileMapping(const Tensor& t, const TileToTensorMapping& mapping)
{
    m_store->checkOwned(t, "setTileMapping");
    const Tensor flat = t.flatten();
    for (std::size_t tile = 0; tile < mapping.size(); ++tile)
        for (const auto& interval : mapping[tile]) {
            if (interval.end() > flat.numElements())
                throw invalid_tile_mapping(fmt::format("setTileMapping of {}: interval {} past its {} elements", m_store->describeTensor(t),
                                                       fmt::format("[{}, {})", interval.begin(), interval.end()), flat.numElements()));
            setTileMapping(flat.slice(interval.begin(), interval.end()), unsigned(tile));
        }
}

void Graph::setTileMapping(VertexRef v, unsigned tile)
{
    if (v.getId() >= m_store->vertices.size())
        throw poplar_error(fmt::format("setTileMapping: no vertex {}", v.getId()));
    m_store->vertices[v.getId()].tile = globalTile(tile, fmt::format("setTileMapping of {}", m_store->describeVertex(v.getId())).c_str());
}

TileToTensorMapping Graph::getTileMapping(const Tensor& t, bool requireComplete) const
{
    m_store->checkOwned(t, "getTileMapping");
    TileToTensorMapping out(m_tiles);
    std::size_t flat = 0;
    for (const auto& r : t.regions()) {
        const auto& tiles = m_store->variables[r.var].tile;
        for (std::size_t e = r.begin; e < r.end; ++e, ++flat) {
            const std::uint32_t tile = tiles[e];
            if (tile == detail::kUnmapped || tile < m_tileBase || tile >= m_tileBase + m_tiles) {
                if (requireComplete && tile == detail::kUnmapped)
                    throw invalid_tile_mapping(fmt::format("getTileMapping: element {} of {} is not mapped to a tile", flat,
                                                           m_store->describeTensor(t)));
                continue;
            }
            auto& list = out[tile - m_tileBase];
            if (!list.empty() && list.back().end() == flat)
                list.back() = Interval(list.back().begin(), flat + 1);
            else
                list.emplace_back(flat, flat + 1);
        }
    }
    return out;
}

// ---- compute sets and vertices ----

ComputeSet Graph::addComputeSet(const DebugContext& debugContext)
{
    const auto id = unsigned(m_store->computeSets.size());
    m_store->computeSets.push_back({debugContext.getPathName().empty() ? fmt::format("cs{}", id) : debugContext.getPathName(), {}});
    return ComputeSet(id);
}

VertexRef Graph::addVertex(ComputeSet cs, StringRef vertexType)
{
    if (cs.getId() >= m_store->computeSets.size())
        throw poplar_error(fmt::format("addVertex '{}': no compute set {}", vertexType, cs.getId()));
    const detail::VertexClassInfo* codelet = m_store->codelets.find(vertexType);
    if (!codelet) {
        std::string known;
        for (const auto& n : m_store->codelets.names())
            known += (known.empty() ? "" : ", ") + n;
        throw unknown_vertex_type(fmt::format("addVertex: unknown vertex type '{}': the codelets added define {}", vertexType,
                                              known.empty() ? "none (add them with Graph::addCodelets)" : known));
    }
    detail::VertexRecord v;
    v.type = vertexType;
    v.codelet = codelet;
    v.computeSet = cs.getId();
    for (std::size_t f = 0; f < codelet->numFields; ++f) {
        detail::FieldRecord field;
        field.info = &codelet->fields[f];
        if (field.info->direction != detail::FieldDirection::State && !field.info->vectorOfEdges &&
            field.info->shape != detail::FieldShape::VectorList)
            field.edges.resize(1);
        v.fields.emplace(field.info->name, std::move(field));
    }
    const auto id = unsigned(m_store->vertices.size());
    m_store->vertices.push_back(std::move(v));
    m_store->computeSets[cs.getId()].vertices.push_back(id);
    return VertexRef(id);
}

VertexRef Graph::addVertex(ComputeSet cs, StringRef vertexType, std::initializer_list<ConnectionDesc> connections)
{
    VertexRef v = addVertex(cs, vertexType);
    for (const auto& [field, tensor] : connections)
        connect(v[field], tensor);
    return v;
}

namespace {

detail::FieldRecord& fieldOf(GraphStore& store, const FieldRef& f)
{
    if (f.vertex() >= store.vertices.size())
        throw poplar_error(fmt::format("field '{}': no vertex {}", f.name(), f.vertex()));
    auto& v = store.vertices[f.vertex()];
    const auto it = v.fields.find(f.name());
    if (it == v.fields.end()) {
        std::string names;
        for (const auto& [name, record] : v.fields)
            names += (names.empty() ? "" : ", ") + name;
        throw unknown_field(fmt::format("{} has no field '{}': its fields are {}", store.describeVertex(f.vertex()), f.name(),
                                        names.empty() ? "none" : names));
    }
    return it->second;
}

std::string fieldName(const GraphStore& store, const FieldRef& f)
{
    return fmt::format("field '{}{}' of {}", f.name(), f.index() >= 0 ? fmt::format("[{}]", f.index()) : "", store.describeVertex(f.vertex()));
}

} // namespace

void Graph::connect(FieldRef f, const Tensor& t)
{
    auto& field = fieldOf(*m_store, f);
    const std::string where = fieldName(*m_store, f);
    m_store->checkOwned(t, "connect " + where);
    const auto& info = *field.info;
    if (info.direction == detail::FieldDirection::State)
        throw graph_connection_error(fmt::format("connect {} to {}: the field is vertex state, not an edge: give it a value with "
                                                 "setInitialValue", where, m_store->describeTensor(t)));
    if (t.elementType().toString() != info.elementType)
        throw type_error(fmt::format("connect {} to {}: the field holds {}, the tensor {}", where, m_store->describeTensor(t),
                                     info.elementType, t.elementType().toString()));
    if (info.shape == detail::FieldShape::VectorList && f.index() < 0) {
        // A list of vectors from a 2-D tensor: one vector a row.
        if (t.rank() != 2)
            throw graph_connection_error(fmt::format("connect {} to {}: a VectorList takes a tensor of rank 2 (a vector a row) or a "
                                                     "list of tensors", where, m_store->describeTensor(t)));
        std::vector<Tensor> rows;
        for (std::size_t r = 0; r < t.dim(0); ++r)
            rows.push_back(t[r]);
        connect(f, rows);
        return;
    }
    if (info.shape == detail::FieldShape::Scalar && t.numElements() != 1)
        throw graph_connection_error(fmt::format("connect {} to {}: the field is one {} element, the tensor has {}", where,
                                                 m_store->describeTensor(t), info.elementType, t.numElements()));
    std::size_t index = 0;
    if (info.vectorOfEdges || info.shape == detail::FieldShape::VectorList) {
        if (f.index() < 0)
            throw graph_connection_error(fmt::format("connect {} to {}: the field is a Vector of edges: connect field[i], or a list of "
                                                     "tensors", where, m_store->describeTensor(t)));
        index = std::size_t(f.index());
        if (!field.sized || index >= field.edges.size())
            throw no_size_specified(fmt::format("connect {}: the field has {} edges (setFieldSize sets how many)", where, field.edges.size()));
    } else if (f.index() >= 0) {
        throw graph_connection_error(fmt::format("connect {}: the field is a single edge, not a Vector of edges", where));
    }
    field.edges[index] = t;
}

void Graph::connect(FieldRef f, ArrayRef<Tensor> tensors)
{
    auto& field = fieldOf(*m_store, f);
    if (!field.info->vectorOfEdges && field.info->shape != detail::FieldShape::VectorList)
        throw graph_connection_error(fmt::format("connect {} to {} tensors: the field is a single edge", fieldName(*m_store, f), tensors.size()));
    setFieldSize(f, tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i)
        connect(f[i], tensors[i]);
}

void Graph::setFieldSize(FieldRef f, std::size_t size)
{
    auto& field = fieldOf(*m_store, f);
    if (!field.info->vectorOfEdges && field.info->shape != detail::FieldShape::VectorList)
        throw graph_connection_error(fmt::format("setFieldSize of {}: only a Vector of edges or a VectorList has a size to set",
                                                 fieldName(*m_store, f)));
    field.edges.resize(size);
    field.sized = true;
}

std::size_t Graph::getFieldSize(FieldRef f) const { return fieldOf(*m_store, f).edges.size(); }

void Graph::setFieldValueRaw(FieldRef f, const void* values, std::size_t count, const Type& hostType)
{
    auto& field = fieldOf(*m_store, f);
    const auto& info = *field.info;
    if (info.direction != detail::FieldDirection::State)
        throw graph_connection_error(fmt::format("setInitialValue of {}: the field is an edge: connect it to a tensor", fieldName(*m_store, f)));
    if (info.shape == detail::FieldShape::Scalar && count != 1)
        throw graph_connection_error(fmt::format("setInitialValue of {}: {} values for a field of one", fieldName(*m_store, f), count));
    field.value.assign(count * info.elementSize, 0);
    detail::convertElements(values, hostType, field.value.data(), detail::typeNamed(info.elementType), count);
    field.valueCount = count;
    field.hasValue = true;
}

void Graph::setPerfEstimate(const VertexRef& v, std::uint64_t cycles, std::uint64_t flops)
{
    setPerfEstimate(v, VertexPerfEstimate(cycles, flops));
}

void Graph::setPerfEstimate(const VertexRef& v, const VertexPerfEstimate& estimate)
{
    if (v.getId() >= m_store->vertices.size())
        throw poplar_error(fmt::format("setPerfEstimate: no vertex {}", v.getId()));
    m_store->vertices[v.getId()].estimate = estimate;
}

void Graph::registerPerfEstimator(StringRef vertexTypeName, PerfEstimateFunc f) { m_store->estimators[vertexTypeName] = std::move(f); }

// ---- host streams ----

DataStream Graph::addHostToDeviceFIFO(StringRef handle, const Type& elementType, std::size_t numElements, ReplicatedStreamMode, const OptionFlags&)
{
    if (m_store->streams.count(handle))
        throw poplar_error(fmt::format("addHostToDeviceFIFO: a stream '{}' exists already", handle));
    if (numElements == 0)
        throw poplar_error(fmt::format("addHostToDeviceFIFO '{}': a stream of no elements", handle));
    DataStream s(handle, elementType, numElements, true);
    m_store->streams[handle] = s;
    return s;
}

DataStream Graph::addDeviceToHostFIFO(StringRef handle, const Type& elementType, std::size_t numElements, const OptionFlags&)
{
    if (m_store->streams.count(handle))
        throw poplar_error(fmt::format("addDeviceToHostFIFO: a stream '{}' exists already", handle));
    if (numElements == 0)
        throw poplar_error(fmt::format("addDeviceToHostFIFO '{}': a stream of no elements", handle));
    DataStream s(handle, elementType, numElements, false);
    m_store->streams[handle] = s;
    return s;
}

RemoteBuffer Graph::addRemoteBuffer(StringRef handle, const Type& elementType, std::size_t numElements, std::size_t repeats, bool, bool)
{
    if (m_store->remoteBuffers.count(handle))
        throw poplar_error(fmt::format("addRemoteBuffer: a remote buffer '{}' exists already", handle));
    if (numElements == 0 || repeats == 0)
        throw poplar_error(fmt::format("addRemoteBuffer '{}': {} elements and {} repeats: expected at least one of each", handle, numElements, repeats));
    RemoteBuffer b(handle, elementType, numElements, repeats);
    m_store->remoteBuffers[handle] = b;
    m_store->remoteData[handle].assign(numElements * repeats * elementType.size(), 0);
    return b;
}

void Graph::createHostWrite(StringRef handle, const Tensor& t, bool)
{
    m_store->checkOwned(t, "createHostWrite '" + handle + "'");
    m_store->hostWrites[handle] = t;
}

void Graph::createHostRead(StringRef handle, const Tensor& t, bool)
{
    m_store->checkOwned(t, "createHostRead '" + handle + "'");
    m_store->hostReads[handle] = t;
}

} // namespace poplar
