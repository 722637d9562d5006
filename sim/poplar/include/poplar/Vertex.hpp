// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: what a codelet is written against, compiled for the host. A vertex class
// derives from Vertex (one worker runs compute()), MultiVertex (compute(workerId) on each of the
// six workers) or SupervisorVertex; its fields are edges (Input, Output, InOut of a scalar, a
// Vector or a VectorList), Vectors of edges, or state (a plain value or a Vector of values set
// with setInitialValue). On the host every Vector knows its size, whatever its layout.
#include <poplar/Half.hpp>

#include <cstddef>
#include <cstdint>

namespace poplar {

class Vertex
{
public:
    static constexpr unsigned numWorkers() { return 6; }
};
class MultiVertex
{
public:
    static constexpr unsigned numWorkers() { return 6; }
};
class SupervisorVertex
{
public:
    static constexpr unsigned numWorkers() { return 6; }
};

/** How a Vector's pointer and size are stored on the IPU (they cost vertex state there; on the
 *  host every layout holds a pointer and a size). */
enum class VectorLayout { ONE_PTR, SPAN, SCALED_PTR32, SCALED_PTR64, SCALED_PTR128, COMPACT_PTR, COMPACT_DELTAN, DELTAN, DELTANELEMENTS };
enum class VectorListLayout { DELTAN, DELTANELEMENTS, COMPACT_DELTAN, COMPACT_DELTANELEMENTS, ONE_PTR, SPAN, SCALED_PTR32, SCALED_PTR64, COMPACT_PTR };
inline constexpr VectorLayout ONE_PTR = VectorLayout::ONE_PTR;
inline constexpr VectorLayout SPAN = VectorLayout::SPAN;
inline constexpr VectorLayout SCALED_PTR32 = VectorLayout::SCALED_PTR32;
inline constexpr VectorLayout SCALED_PTR64 = VectorLayout::SCALED_PTR64;
inline constexpr VectorLayout COMPACT_PTR = VectorLayout::COMPACT_PTR;
inline constexpr VectorListLayout DELTAN = VectorListLayout::DELTAN;
inline constexpr VectorListLayout DELTANELEMENTS = VectorListLayout::DELTANELEMENTS;
inline constexpr VectorListLayout COMPACT_DELTAN = VectorListLayout::COMPACT_DELTAN;

namespace detail {
template <class T>
class Span
{
public:
    using value_type = T;
    T& operator[](std::size_t i) const { return m_data[i]; }
    [[nodiscard]] std::size_t size() const { return m_size; }
    [[nodiscard]] T* begin() const { return m_data; }
    [[nodiscard]] T* end() const { return m_data + m_size; }
    [[nodiscard]] T* data() const { return m_data; }
    // ipusim binds these before compute().
    T* m_data = nullptr;
    std::size_t m_size = 0;
};
} // namespace detail

/** A vector of elements: of tensor elements inside an edge, of edges, or of state values. */
template <class T, VectorLayout L = VectorLayout::SPAN, unsigned Align = alignof(T), bool Interleaved = false>
class Vector : public detail::Span<T>
{
};

/** A list of vectors (DeltaN layouts on the IPU): size() vectors, each of its own size. */
template <class T, VectorListLayout L = VectorListLayout::DELTANELEMENTS, unsigned Align = alignof(T), bool Interleaved = false>
class VectorList : public detail::Span<detail::Span<T>>
{
};

/** Read-only edge: a scalar (`*in`, or the value itself) or a Vector or VectorList of const elements. */
template <class T>
class Input
{
public:
    operator const T&() const { return *m_p; }
    const T& operator*() const { return *m_p; }
    const T* m_p = nullptr;
};
template <class T, VectorLayout L, unsigned A, bool I>
class Input<Vector<T, L, A, I>> : public detail::Span<const T>
{
};
template <class T, VectorListLayout L, unsigned A, bool I>
class Input<VectorList<T, L, A, I>> : public detail::Span<detail::Span<const T>>
{
};

/** Write-only edge: a scalar (`*out = v`) or a Vector or VectorList. */
template <class T>
class Output
{
public:
    operator T&() const { return *m_p; }
    T& operator*() const { return *m_p; }
    Output& operator=(const T& v)
    {
        *m_p = v;
        return *this;
    }
    T* m_p = nullptr;
};
template <class T, VectorLayout L, unsigned A, bool I>
class Output<Vector<T, L, A, I>> : public detail::Span<T>
{
};
template <class T, VectorListLayout L, unsigned A, bool I>
class Output<VectorList<T, L, A, I>> : public detail::Span<detail::Span<T>>
{
};

/** Read-write edge. */
template <class T>
class InOut : public Output<T>
{
public:
    using Output<T>::operator=;
};
template <class T, VectorLayout L, unsigned A, bool I>
class InOut<Vector<T, L, A, I>> : public detail::Span<T>
{
};
template <class T, VectorListLayout L, unsigned A, bool I>
class InOut<VectorList<T, L, A, I>> : public detail::Span<detail::Span<T>>
{
};

} // namespace poplar
