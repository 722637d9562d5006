// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: the graph. Variables and constants mapped to tiles, compute sets of
// vertices (codelets) connected to tensors, host streams; as Poplar's Graph, from its public
// API reference. The codelets run on the host; the graph's programs are also lowered onto the
// simulated IPUs (Engine).
#include <poplar/ArrayRef.hpp>
#include <poplar/CodeletFileType.hpp>
#include <poplar/DataStream.hpp>
#include <poplar/DebugContext.hpp>
#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/PerfEstimateFunc.hpp>
#include <poplar/StringRef.hpp>
#include <poplar/Target.hpp>
#include <poplar/Tensor.hpp>
#include <poplar/VertexRef.hpp>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace poplar {

namespace detail {
struct GraphStore;
}

/** The library's version ("ipusim 0.1.0 (Poplar API, simulated Mk2)"). */
std::string versionString();
std::string packageHash();

/** How addVariable maps a new variable: not at all (setTileMapping later), or linearly. */
enum class VariableMappingMethod { NONE, LINEAR };

struct replication_factor
{
    explicit replication_factor(unsigned n) : value(n) {}
    unsigned value;
};

class ComputeSet
{
public:
    ComputeSet() = default;
    explicit ComputeSet(unsigned id) : m_id(id) {}
    [[nodiscard]] unsigned getId() const { return m_id; }
    friend bool operator==(const ComputeSet& a, const ComputeSet& b) { return a.m_id == b.m_id; }

private:
    unsigned m_id = ~0u;
};

/** Elements per tile, as intervals of a tensor's flattened elements. */
using TileToTensorMapping = std::vector<std::vector<Interval>>;

class Graph
{
public:
    using TileToTensorMapping = poplar::TileToTensorMapping;
    using ConnectionDesc = std::pair<const std::string, Tensor>;

    Graph(const Target& target, replication_factor r = replication_factor(1));
    Graph(const Device& device, replication_factor r = replication_factor(1));
    ~Graph();
    Graph(Graph&&) noexcept;
    Graph& operator=(Graph&&) noexcept;

    [[nodiscard]] const Target& getTarget() const;
    /** A graph over tiles [lowerTile, upperTile) of this one (tile numbers relative to them), sharing
     *  its variables, compute sets and codelets. */
    [[nodiscard]] Graph createVirtualGraph(unsigned lowerTile, unsigned upperTile);
    /** Same, over the tiles listed (ascending, contiguous). */
    [[nodiscard]] Graph createVirtualGraph(const std::vector<unsigned>& tiles);
    [[nodiscard]] unsigned getReplicationFactor() const { return 1; }

    /** Compiles a codelet source for the host (or loads an object ipusim-popc wrote) and adds
     *  its vertex classes. Compile errors go to `compileOutput` (or stderr) with file and line,
     *  and throw graph_program_compilation_error. */
    bool addCodelets(StringRef src, CodeletFileType type = CodeletFileType::Auto, StringRef compileFlags = "",
                     StringRef targetName = "");
    bool addCodelets(StringRef src, CodeletFileType type, StringRef compileFlags, std::ostream& compileOutput,
                     StringRef targetName = "");
    bool addCodelets(ArrayRef<std::string> sources, StringRef compileFlags = "", StringRef targetName = "");
    void addCodelets(std::stringstream& stream, StringRef compileFlags = "", CodeletFileType type = CodeletFileType::CppSource,
                     StringRef targetName = "");
    /** Whether a vertex class of that name was added. */
    [[nodiscard]] bool hasCodelet(StringRef codeletName) const;

    Tensor addVariable(const Type& type, ArrayRef<std::size_t> shape, const DebugContext& debugContext = {});
    Tensor addVariable(const Type& type, ArrayRef<std::size_t> shape, VariableMappingMethod mapping,
                       const DebugContext& debugContext = {});
    Tensor clone(const Tensor& t, const DebugContext& debugContext = {});
    Tensor clone(const Type& type, const Tensor& t, const DebugContext& debugContext = {});

    template <class T>
    Tensor addConstant(const Type& type, ArrayRef<std::size_t> shape, ArrayRef<T> values, const DebugContext& debugContext = {})
    {
        return addConstantRaw(type, shape, values.data(), values.size(), equivalent_device_type<T>::value, debugContext);
    }
    template <class T>
    Tensor addConstant(const Type& type, ArrayRef<std::size_t> shape, const T* values, const DebugContext& debugContext = {})
    {
        std::size_t n = 1;
        for (auto d : shape)
            n *= d;
        return addConstantRaw(type, shape, values, n, equivalent_device_type<T>::value, debugContext);
    }
    template <class T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    Tensor addConstant(const Type& type, ArrayRef<std::size_t> shape, T value, const DebugContext& debugContext = {})
    {
        return addConstantRaw(type, shape, &value, 1, equivalent_device_type<T>::value, debugContext);
    }
    template <class T>
    Tensor addConstant(const Type& type, ArrayRef<std::size_t> shape, std::initializer_list<T> values,
                       const DebugContext& debugContext = {})
    {
        return addConstantRaw(type, shape, values.begin(), values.size(), equivalent_device_type<T>::value, debugContext);
    }

    void setTileMapping(const Tensor& t, unsigned tile);
    void setTileMapping(const Tensor& t, const TileToTensorMapping& mapping);
    void setTileMapping(VertexRef v, unsigned tile);
    /** Elements of `t` per tile of this graph; with `requireComplete`, an unmapped element is an error. */
    [[nodiscard]] TileToTensorMapping getTileMapping(const Tensor& t, bool requireComplete = true) const;

    ComputeSet addComputeSet(const DebugContext& debugContext = {});
    VertexRef addVertex(ComputeSet cs, StringRef vertexType);
    VertexRef addVertex(ComputeSet cs, StringRef vertexType, std::initializer_list<ConnectionDesc> connections);
    /** Connects a field to a tensor: an Input, Output or InOut edge (a scalar or a Vector of the
     *  tensor's elements), or element i of a Vector of edges (field[i]). */
    void connect(FieldRef field, const Tensor& t);
    /** A Vector of edges: one edge a tensor. */
    void connect(FieldRef field, ArrayRef<Tensor> tensors);
    void setFieldSize(FieldRef field, std::size_t size);
    [[nodiscard]] std::size_t getFieldSize(FieldRef field) const;

    template <class T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    void setInitialValue(FieldRef field, T value) { setFieldValueRaw(field, &value, 1, equivalent_device_type<T>::value); }
    template <class T>
    void setInitialValue(FieldRef field, ArrayRef<T> values) { setFieldValueRaw(field, values.data(), values.size(), equivalent_device_type<T>::value); }
    template <class T>
    void setInitialValue(FieldRef field, const std::vector<T>& values) { setInitialValue(field, ArrayRef<T>(values)); }
    template <class T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    void setInitialValue(const Tensor& t, T value) { setTensorValueRaw(t, &value, 1, equivalent_device_type<T>::value); }
    template <class T>
    void setInitialValue(const Tensor& t, ArrayRef<T> values) { setTensorValueRaw(t, values.data(), values.size(), equivalent_device_type<T>::value); }
    template <class T>
    void setInitialValue(const Tensor& t, const std::vector<T>& values) { setInitialValue(t, ArrayRef<T>(values)); }

    /** The cycles a vertex takes: tile cycles for a MultiVertex (all six workers), a worker's
     *  cycles for a Vertex (a worker context's issue slots). */
    void setPerfEstimate(const VertexRef& v, std::uint64_t cycles, std::uint64_t flops = 0);
    void setPerfEstimate(const VertexRef& v, const VertexPerfEstimate& estimate);
    /** Prices every vertex of a type without its own estimate (the type as addVertex names it). */
    void registerPerfEstimator(StringRef vertexTypeName, PerfEstimateFunc f);

    DataStream addHostToDeviceFIFO(StringRef handle, const Type& elementType, std::size_t numElements,
                                   ReplicatedStreamMode replicatedMode = ReplicatedStreamMode::REPLICATE, const OptionFlags& options = {});
    DataStream addDeviceToHostFIFO(StringRef handle, const Type& elementType, std::size_t numElements, const OptionFlags& options = {});
    /** A buffer in Streaming Memory of `repeats` slots of `numElements` elements. */
    RemoteBuffer addRemoteBuffer(StringRef handle, const Type& elementType, std::size_t numElements, std::size_t repeats = 1,
                                 bool rearrangeOnHost = false, bool optimiseMemory = false);
    void createHostWrite(StringRef handle, const Tensor& t, bool rearrangeOnHost = false);
    void createHostRead(StringRef handle, const Tensor& t, bool rearrangeOnHost = false);

    /** ipusim: the store every virtual graph of this graph shares. */
    [[nodiscard]] const std::shared_ptr<detail::GraphStore>& store() const { return m_store; }
    [[nodiscard]] unsigned tileBase() const { return m_tileBase; }

private:
    Graph(std::shared_ptr<detail::GraphStore> store, Target target, unsigned tileBase, unsigned tiles);
    Tensor addConstantRaw(const Type& type, ArrayRef<std::size_t> shape, const void* values, std::size_t count, const Type& hostType,
                          const DebugContext& debugContext);
    void setFieldValueRaw(FieldRef field, const void* values, std::size_t count, const Type& hostType);
    void setTensorValueRaw(const Tensor& t, const void* values, std::size_t count, const Type& hostType);
    [[nodiscard]] unsigned globalTile(unsigned tile, const char* what) const;

    std::shared_ptr<detail::GraphStore> m_store;
    Target m_target; // the device's, or the virtual graph's tiles alone
    unsigned m_tileBase = 0;
    unsigned m_tiles = 0;
};

} // namespace poplar
