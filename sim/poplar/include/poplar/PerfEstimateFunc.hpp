// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: a vertex type's cycle estimator (Graph::registerPerfEstimator), given the
// vertex's fields as a VertexIntrospector.
#include <poplar/Target.hpp>
#include <poplar/Type.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace poplar {

struct VertexPerfEstimate
{
    VertexPerfEstimate() = default;
    VertexPerfEstimate(std::uint64_t cycles, std::uint64_t flops = 0) : cycles(cycles), flops(flops) {}
    std::uint64_t cycles = 0;
    std::uint64_t flops = 0;
};

/** One field of a vertex, as an estimator sees it: its size (elements of an edge, edges of a
 *  Vector of edges, values of a vector of state), each edge's size, its initial value. */
class FieldData
{
public:
    FieldData() = default;
    FieldData(std::vector<std::size_t> sizes, bool vectorOfEdges, Type type, std::vector<unsigned char> initial)
        : m_sizes(std::move(sizes)), m_vectorOfEdges(vectorOfEdges), m_type(type), m_initial(std::move(initial)) {}
    [[nodiscard]] std::size_t size() const
    {
        if (m_vectorOfEdges)
            return m_sizes.size();
        return m_sizes.empty() ? 0 : m_sizes[0];
    }
    [[nodiscard]] std::size_t getSizeAtIndex(std::size_t i) const { return m_sizes.at(i); }
    [[nodiscard]] Type elementType() const { return m_type; }
    /** The value of a state field set with setInitialValue, as T (the field's own type). */
    template <class T>
    T getInitialValue(const Target&) const
    {
        T v{};
        std::memcpy(&v, m_initial.data(), std::min(sizeof v, m_initial.size()));
        return v;
    }

private:
    std::vector<std::size_t> m_sizes;
    bool m_vectorOfEdges = false;
    Type m_type;
    std::vector<unsigned char> m_initial;
};

class VertexIntrospector
{
public:
    VertexIntrospector(std::function<FieldData(const std::string&)> fields, std::string type)
        : m_fields(std::move(fields)), m_type(std::move(type)) {}
    [[nodiscard]] FieldData getFieldInfo(const std::string& name) const { return m_fields(name); }
    [[nodiscard]] const std::string& getVertexType() const { return m_type; }

private:
    std::function<FieldData(const std::string&)> m_fields;
    std::string m_type;
};

using PerfEstimateFunc = std::function<VertexPerfEstimate(const VertexIntrospector&, const Target&)>;

} // namespace poplar
