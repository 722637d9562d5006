// SPDX-License-Identifier: MIT
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
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
    friend bool operator==(const TileRun& a, const TileRun& b) { return a.first == b.first && a.count == b.count && a.value == b.value; }
};

/** Per-tile values stored as sorted, non-overlapping runs of equal tiles; tiles outside every
 *  run hold T{}. Most compute sets give thousands of tiles a handful of distinct values.
 *  Copies share their runs until one of them adds a run (copy on write), so a schedule's
 *  identical layers, and the copies a compile cache or tile-memory account keeps, can hold
 *  one set of runs between them. */
template <class T>
class TileRuns
{
public:
    using Runs = std::vector<TileRun<T>>;

    TileRuns() = default;
    explicit TileRuns(Runs runs) : m_runs(runs.empty() ? nullptr : std::make_shared<Runs>(std::move(runs))) {}

    void reserve(std::size_t runs) { own().reserve(runs); }
    /** Appends a run; callers add runs in tile order without overlap. */
    void add(uint32_t first, uint32_t count, const T& value)
    {
        if (count == 0)
            return;
        Runs& runs = own();
        if (!runs.empty() && runs.back().end() == first && runs.back().value == value)
            runs.back().count += count;
        else
            runs.push_back({first, count, value});
    }
    [[nodiscard]] const Runs& runs() const { return m_runs ? *m_runs : none(); }
    [[nodiscard]] bool empty() const { return runs().empty(); }
    [[nodiscard]] uint32_t end() const { return empty() ? 0 : runs().back().end(); }
    [[nodiscard]] uint64_t tilesCovered() const
    {
        uint64_t n = 0;
        for (const auto& r : runs())
            n += r.count;
        return n;
    }
    /** Value of one tile (binary search). */
    [[nodiscard]] T at(uint32_t tile) const
    {
        auto it = std::upper_bound(runs().begin(), runs().end(), tile,
                                   [](uint32_t t, const TileRun<T>& r) { return t < r.first; });
        if (it == runs().begin())
            return T{};
        --it;
        return tile < it->end() ? it->value : T{};
    }
    /** Same runs: the same per-tile values when both were built with add() from values
     *  that skip T{} (add() merges equal neighbours, so such runs are unique). */
    friend bool operator==(const TileRuns& a, const TileRuns& b) { return a.m_runs == b.m_runs || a.runs() == b.runs(); }
    friend bool operator!=(const TileRuns& a, const TileRuns& b) { return !(a == b); }

private:
    /** The runs, unshared first: a copy sharing them keeps its values. (One owner changes a
     *  TileRuns at a time; a count above one that drops meanwhile only costs a copy.) */
    Runs& own()
    {
        if (!m_runs)
            m_runs = std::make_shared<Runs>();
        else if (m_runs.use_count() > 1)
            m_runs = std::make_shared<Runs>(*m_runs);
        return *m_runs;
    }
    static const Runs& none()
    {
        static const Runs empty;
        return empty;
    }

    std::shared_ptr<Runs> m_runs;
};

} // namespace ipusim
