// SPDX-License-Identifier: MIT
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace ipusim {

/** `count` consecutive tiles from `first` sharing one value. */
template <class T>
struct TileRun
{
    uint32_t first = 0;
    uint32_t count = 0;
    T value{};
    [[nodiscard]] uint32_t end() const { return first + count; }
};

/** Per-tile values stored as sorted, non-overlapping runs of equal tiles; tiles outside every
 *  run hold T{}. Most compute sets give thousands of tiles a handful of distinct values. */
template <class T>
class TileRuns
{
public:
    TileRuns() = default;
    explicit TileRuns(std::vector<TileRun<T>> runs) : m_runs(std::move(runs)) {}

    void reserve(std::size_t runs) { m_runs.reserve(runs); }
    /** Appends a run; callers add runs in tile order without overlap. */
    void add(uint32_t first, uint32_t count, const T& value)
    {
        if (count == 0)
            return;
        if (!m_runs.empty() && m_runs.back().end() == first && m_runs.back().value == value)
            m_runs.back().count += count;
        else
            m_runs.push_back({first, count, value});
    }
    [[nodiscard]] const std::vector<TileRun<T>>& runs() const { return m_runs; }
    [[nodiscard]] bool empty() const { return m_runs.empty(); }
    [[nodiscard]] uint32_t end() const { return m_runs.empty() ? 0 : m_runs.back().end(); }
    [[nodiscard]] uint64_t tilesCovered() const
    {
        uint64_t n = 0;
        for (const auto& r : m_runs)
            n += r.count;
        return n;
    }
    /** Value of one tile (binary search). */
    [[nodiscard]] T at(uint32_t tile) const
    {
        auto it = std::upper_bound(m_runs.begin(), m_runs.end(), tile,
                                   [](uint32_t t, const TileRun<T>& r) { return t < r.first; });
        if (it == m_runs.begin())
            return T{};
        --it;
        return tile < it->end() ? it->value : T{};
    }

private:
    std::vector<TileRun<T>> m_runs;
};

} // namespace ipusim
