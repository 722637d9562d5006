// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/Schedule.hpp"

#include <boost/container_hash/hash.hpp>

#include <cstddef>
#include <cstdint>
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
    static void combine(std::size_t& h, uint64_t v) { boost::hash_combine(h, v); }
    static void combine(std::size_t& h, const ExchangeBytes& b)
    {
        boost::hash_combine(h, b.send);
        boost::hash_combine(h, b.recv);
        boost::hash_combine(h, b.recvShared);
    }
    struct Hash
    {
        std::size_t operator()(const TileRuns<T>& r) const
        {
            std::size_t h = 0;
            for (const auto& run : r.runs()) {
                boost::hash_combine(h, run.first);
                boost::hash_combine(h, run.count);
                combine(h, run.value);
            }
            return h;
        }
    };
    std::unordered_set<TileRuns<T>, Hash> m_kept;
};

/** The pools a program builder keeps its runs in. Builders of equivalent IPUs share one, so
 *  an op placed alike on two IPUs has its tensors' runs at one address (GraphLowering keys a
 *  placement by it). */
struct TileRunsPools
{
    TileRunsPool<uint64_t> bytesAndCycles;
    TileRunsPool<uint32_t> vertices;
    TileRunsPool<ExchangeBytes> exchanges;
};

} // namespace ipusim
