// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: a half-open interval [begin, end) of element indices.
#include <cstddef>
#include <ostream>

namespace poplar {

template <class T>
struct GenericInterval
{
    GenericInterval() = default;
    GenericInterval(T begin, T end) : m_begin(begin), m_end(end) {}
    [[nodiscard]] T begin() const { return m_begin; }
    [[nodiscard]] T end() const { return m_end; }
    [[nodiscard]] T lower() const { return m_begin; }
    [[nodiscard]] T upper() const { return m_end; }
    [[nodiscard]] T size() const { return m_end - m_begin; }
    friend bool operator==(const GenericInterval& a, const GenericInterval& b) { return a.m_begin == b.m_begin && a.m_end == b.m_end; }
    friend bool operator!=(const GenericInterval& a, const GenericInterval& b) { return !(a == b); }
    friend bool operator<(const GenericInterval& a, const GenericInterval& b)
    {
        return a.m_begin < b.m_begin || (a.m_begin == b.m_begin && a.m_end < b.m_end);
    }
    friend std::ostream& operator<<(std::ostream& os, const GenericInterval& i) { return os << '[' << i.m_begin << ", " << i.m_end << ')'; }

private:
    T m_begin{};
    T m_end{};
};

using Interval = GenericInterval<std::size_t>;

} // namespace poplar
