// SPDX-License-Identifier: MIT
#pragma once
// ipusim: what a codelet compiled for the host tells the library, and how the library binds a
// vertex's fields to element buffers before compute(). ipusim-popc (and addCodelets of a source)
// compiles the codelet with a generated table of its vertex classes: for each class, its fields
// by name, each field's kind read off its C++ type by the traits below, and functions to create,
// bind, run and destroy a vertex. The library and the codelet share this header, nothing else.
#include <poplar/Vertex.hpp>

#include <cstddef>
#include <new>
#include <type_traits>

namespace poplar::detail {

inline constexpr unsigned kCodeletAbiVersion = 1;

enum class FieldDirection { Input, Output, InOut, State };
enum class FieldShape
{
    Scalar,    // an edge of one element
    Vector,    // an edge of a Vector of elements
    VectorList // an edge of a list of vectors: one tensor a vector
};

/** One edge's elements (or a state field's values), gathered for the vertex. */
struct EdgeBuffer
{
    void* data = nullptr;
    std::size_t size = 0; // elements
};

struct FieldBinding
{
    const EdgeBuffer* edges = nullptr;
    std::size_t numEdges = 0;
    /** Memory that lives as long as the vertex (arrays of spans and of edges). */
    void* (*allocate)(void* context, std::size_t bytes) = nullptr;
    void* context = nullptr;
};

struct FieldInfo
{
    const char* name;
    FieldDirection direction;
    FieldShape shape;
    bool vectorOfEdges; // a Vector of edges (Vector<Input<...>>): one edge an index
    const char* elementType; // the poplar::Type's name
    unsigned elementSize;
    void (*bind)(void* vertex, const FieldBinding& binding);
};

enum class VertexKind { Worker, MultiVertex, Supervisor };

struct VertexClassInfo
{
    const char* name;
    VertexKind kind;
    const FieldInfo* fields;
    std::size_t numFields;
    void* (*create)();
    void (*destroy)(void*);
    /** Runs compute() (compute(worker) for a MultiVertex); false when it returned false. */
    bool (*compute)(void* vertex, unsigned worker);
};

struct CodeletTable
{
    unsigned abiVersion;
    const VertexClassInfo* classes;
    std::size_t numClasses;
};

// ---- The C++ element types a field may hold, by the poplar::Type names ----
template <class T> struct ElementName { static constexpr const char* value = nullptr; };
template <> struct ElementName<float> { static constexpr const char* value = "float"; };
template <> struct ElementName<half> { static constexpr const char* value = "half"; };
template <> struct ElementName<int> { static constexpr const char* value = "int"; };
template <> struct ElementName<unsigned> { static constexpr const char* value = "unsigned int"; };
template <> struct ElementName<short> { static constexpr const char* value = "short"; };
template <> struct ElementName<unsigned short> { static constexpr const char* value = "unsigned short"; };
template <> struct ElementName<char> { static constexpr const char* value = "char"; };
template <> struct ElementName<signed char> { static constexpr const char* value = "signed char"; };
template <> struct ElementName<unsigned char> { static constexpr const char* value = "unsigned char"; };
template <> struct ElementName<bool> { static constexpr const char* value = "bool"; };
template <> struct ElementName<long long> { static constexpr const char* value = "long long"; };
template <> struct ElementName<unsigned long long> { static constexpr const char* value = "unsigned long long"; };

// ---- What a field's C++ type says ----
template <class F> struct EdgeTraits { static constexpr bool isEdge = false; };
#define IPUSIM_EDGE_TRAITS(EDGE, DIRECTION)                                                                              \
    template <class T> struct EdgeTraits<EDGE<T>>                                                                        \
    {                                                                                                                    \
        static constexpr bool isEdge = true;                                                                             \
        static constexpr FieldDirection direction = FieldDirection::DIRECTION;                                           \
        static constexpr FieldShape shape = FieldShape::Scalar;                                                          \
        using Element = T;                                                                                               \
    };                                                                                                                   \
    template <class T, VectorLayout L, unsigned A, bool I> struct EdgeTraits<EDGE<Vector<T, L, A, I>>>                   \
    {                                                                                                                    \
        static constexpr bool isEdge = true;                                                                             \
        static constexpr FieldDirection direction = FieldDirection::DIRECTION;                                           \
        static constexpr FieldShape shape = FieldShape::Vector;                                                          \
        using Element = T;                                                                                               \
    };                                                                                                                   \
    template <class T, VectorListLayout L, unsigned A, bool I> struct EdgeTraits<EDGE<VectorList<T, L, A, I>>>           \
    {                                                                                                                    \
        static constexpr bool isEdge = true;                                                                             \
        static constexpr FieldDirection direction = FieldDirection::DIRECTION;                                           \
        static constexpr FieldShape shape = FieldShape::VectorList;                                                      \
        using Element = T;                                                                                               \
    };
IPUSIM_EDGE_TRAITS(Input, Input)
IPUSIM_EDGE_TRAITS(Output, Output)
IPUSIM_EDGE_TRAITS(InOut, InOut)
#undef IPUSIM_EDGE_TRAITS

template <class F> struct FieldTraits
{
    // An edge, or a plain state value.
    static constexpr bool vectorOfEdges = false;
    static constexpr bool edge = EdgeTraits<F>::isEdge;
    using Traits = EdgeTraits<F>;
};
template <class E, VectorLayout L, unsigned A, bool I> struct FieldTraits<Vector<E, L, A, I>>
{
    // A Vector of edges, or a Vector of state values.
    static constexpr bool vectorOfEdges = EdgeTraits<E>::isEdge;
    static constexpr bool edge = vectorOfEdges;
    using Traits = EdgeTraits<E>;
};

/** A Vector of state values (not of edges). */
template <class F, class = void> struct IsStateVector : std::false_type {};
template <class F>
struct IsStateVector<F, std::void_t<typename F::value_type>> : std::is_base_of<Span<typename F::value_type>, F> {};

template <class F>
constexpr FieldInfo fieldInfoOf(const char* name, void (*bind)(void*, const FieldBinding&))
{
    using FT = FieldTraits<F>;
    if constexpr (FT::edge) {
        using Element = std::remove_const_t<typename FT::Traits::Element>;
        static_assert(ElementName<Element>::value != nullptr,
                      "ipusim: a vertex edge's elements must be bool, char, short, int, long long (signed or unsigned), half or float");
        return {name, FT::Traits::direction, FT::Traits::shape, FT::vectorOfEdges, ElementName<Element>::value, unsigned(sizeof(Element)), bind};
    } else if constexpr (IsStateVector<F>::value) {
        using Element = typename F::value_type;
        static_assert(ElementName<Element>::value != nullptr, "ipusim: a Vector of state values must hold a Poplar element type");
        return {name, FieldDirection::State, FieldShape::Vector, false, ElementName<Element>::value, unsigned(sizeof(Element)), bind};
    } else {
        static_assert(ElementName<F>::value != nullptr,
                      "ipusim: a vertex field must be an Input, Output or InOut edge, a Vector of edges, or a state value or "
                      "Vector of a Poplar element type");
        return {name, FieldDirection::State, FieldShape::Scalar, false, ElementName<F>::value, unsigned(sizeof(F)), bind};
    }
}

template <class T>
T* allocateArray(const FieldBinding& b, std::size_t n)
{
    void* p = b.allocate(b.context, sizeof(T) * (n ? n : 1));
    T* a = static_cast<T*>(p);
    for (std::size_t i = 0; i < n; ++i)
        new (a + i) T();
    return a;
}

/** One edge of shape `shape` from one buffer (VectorList: every buffer a vector). */
template <class Edge>
void bindEdge(Edge& e, const FieldBinding& b, std::size_t first, std::size_t count)
{
    using Traits = EdgeTraits<Edge>;
    using Element = typename Traits::Element;
    if constexpr (Traits::shape == FieldShape::Scalar) {
        e.m_p = static_cast<Element*>(b.edges[first].data);
    } else if constexpr (Traits::shape == FieldShape::Vector) {
        e.m_data = static_cast<std::remove_pointer_t<decltype(e.m_data)>*>(b.edges[first].data);
        e.m_size = b.edges[first].size;
    } else {
        using Inner = std::remove_pointer_t<decltype(e.m_data)>;
        Inner* lists = allocateArray<Inner>(b, count);
        for (std::size_t i = 0; i < count; ++i) {
            lists[i].m_data = static_cast<decltype(lists[i].m_data)>(b.edges[first + i].data);
            lists[i].m_size = b.edges[first + i].size;
        }
        e.m_data = lists;
        e.m_size = count;
    }
}

template <class V, class F, F V::*Member>
void bindField(void* vertex, const FieldBinding& b)
{
    F& field = static_cast<V*>(vertex)->*Member;
    using FT = FieldTraits<F>;
    if constexpr (FT::vectorOfEdges) {
        using Edge = typename F::value_type;
        Edge* edges = allocateArray<Edge>(b, b.numEdges);
        for (std::size_t i = 0; i < b.numEdges; ++i)
            bindEdge(edges[i], b, i, 1);
        field.m_data = edges;
        field.m_size = b.numEdges;
    } else if constexpr (FT::edge) {
        bindEdge(field, b, 0, b.numEdges);
    } else if constexpr (IsStateVector<F>::value) {
        field.m_data = static_cast<typename F::value_type*>(b.edges[0].data);
        field.m_size = b.edges[0].size;
    } else {
        field = *static_cast<const F*>(b.edges[0].data);
    }
}

template <class V, class F, F V::*Member>
constexpr FieldInfo field(const char* name)
{
    return fieldInfoOf<F>(name, &bindField<V, F, Member>);
}

template <class V>
bool computeVertex(void* vertex, unsigned worker)
{
    V& v = *static_cast<V*>(vertex);
    if constexpr (std::is_base_of_v<MultiVertex, V>) {
        if constexpr (std::is_same_v<decltype(v.compute(worker)), void>) {
            v.compute(worker);
            return true;
        } else {
            return bool(v.compute(worker));
        }
    } else {
        (void)worker;
        if constexpr (std::is_same_v<decltype(v.compute()), void>) {
            v.compute();
            return true;
        } else {
            return bool(v.compute());
        }
    }
}

template <class V>
constexpr VertexClassInfo vertexClass(const char* name, const FieldInfo* fields, std::size_t numFields)
{
    constexpr VertexKind kind = std::is_base_of_v<MultiVertex, V>        ? VertexKind::MultiVertex
                                : std::is_base_of_v<SupervisorVertex, V> ? VertexKind::Supervisor
                                                                         : VertexKind::Worker;
    return {name, kind, fields, numFields, [] { return static_cast<void*>(new V()); },
            [](void* v) { delete static_cast<V*>(v); }, &computeVertex<V>};
}

} // namespace poplar::detail

/** The entry point of a compiled codelet: its vertex classes. */
#define IPUSIM_CODELET_ENTRY ipusim_codelet_table_v1
