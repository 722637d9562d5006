// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: handles of a vertex and of one of its fields (or one edge of a Vector of
// edges, field[i]).
#include <cstddef>
#include <string>

namespace poplar {

class FieldRef
{
public:
    FieldRef(unsigned vertex, std::string name, long index = -1) : m_vertex(vertex), m_name(std::move(name)), m_index(index) {}
    FieldRef operator[](std::size_t i) const { return FieldRef(m_vertex, m_name, long(i)); }
    [[nodiscard]] unsigned vertex() const { return m_vertex; }
    [[nodiscard]] const std::string& name() const { return m_name; }
    [[nodiscard]] long index() const { return m_index; }

private:
    unsigned m_vertex;
    std::string m_name;
    long m_index;
};

class VertexRef
{
public:
    VertexRef() = default;
    explicit VertexRef(unsigned id) : m_id(id) {}
    FieldRef operator[](const std::string& field) const { return FieldRef(m_id, field); }
    [[nodiscard]] unsigned getId() const { return m_id; }

private:
    unsigned m_id = ~0u;
};

} // namespace poplar
