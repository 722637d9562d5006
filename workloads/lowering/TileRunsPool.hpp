// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/Schedule.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_set>

namespace ipusim {

/** Identical per-tile values keep one copy of their runs. A model's identical layers lower to
 *  identical compute sets, exchanges and tensor layouts (the repetition Poplar's outlining
 *  shares code for): the seven encoder layers a BERT-Large pipeline stage holds then keep one
 *  copy of their thousands of steps' runs instead of seven. */
template <class T>
class TileRunsPool
{
public:
    /** `runs` shares the storage of an equal set seen before, or becomes the one kept. */
    void share(TileRuns<T>& runs)
    {
        if (runs.empty())
            return;
        if (auto [kept, added] = m_kept.insert(runs); !added)
            runs = *kept;
    }

private:
    static std::size_t mix(std::size_t h, uint64_t v) { return h ^ (std::hash<uint64_t>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }
    static std::size_t mixValue(std::size_t h, uint64_t v) { return mix(h, v); }
    static std::size_t mixValue(std::size_t h, const ExchangeBytes& b) { return mix(mix(mix(h, b.send), b.recv), b.recvShared); }
    struct Hash
    {
        std::size_t operator()(const TileRuns<T>& r) const
        {
            std::size_t h = r.runs().size();
            for (const auto& run : r.runs())
                h = mixValue(mix(h, (uint64_t(run.first) << 32) | run.count), run.value);
            return h;
        }
    };
    std::unordered_set<TileRuns<T>, Hash> m_kept;
};

} // namespace ipusim
