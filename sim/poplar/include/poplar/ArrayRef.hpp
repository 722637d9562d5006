// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: a read-only view of a contiguous array, as Poplar's ArrayRef: built from
// a vector, an initializer list (valid for the call it is passed to), or a pointer and a size.
#include <cstddef>
#include <initializer_list>
#include <vector>

namespace poplar {

template <class T>
class ArrayRef
{
public:
    using value_type = T;
    using const_iterator = const T*;
    constexpr ArrayRef() = default;
    constexpr ArrayRef(const T* data, std::size_t size) : m_data(data), m_size(size) {}
    ArrayRef(const T& one) : m_data(&one), m_size(1) {}
    template <class A>
    ArrayRef(const std::vector<T, A>& v) : m_data(v.data()), m_size(v.size()) {}
    // The list lives as long as the full expression that builds it: the call it is passed to.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
    constexpr ArrayRef(std::initializer_list<T> list) : m_data(list.begin()), m_size(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    [[nodiscard]] constexpr bool empty() const { return m_size == 0; }
    [[nodiscard]] constexpr std::size_t size() const { return m_size; }
    [[nodiscard]] constexpr const T* data() const { return m_data; }
    [[nodiscard]] constexpr const T* begin() const { return m_data; }
    [[nodiscard]] constexpr const T* end() const { return m_data + m_size; }
    [[nodiscard]] constexpr const T& front() const { return m_data[0]; }
    [[nodiscard]] constexpr const T& back() const { return m_data[m_size - 1]; }
    constexpr const T& operator[](std::size_t i) const { return m_data[i]; }
    [[nodiscard]] std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
    operator std::vector<T>() const { return vec(); }

private:
    const T* m_data = nullptr;
    std::size_t m_size = 0;
};

} // namespace poplar
