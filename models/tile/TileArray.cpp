// SPDX-License-Identifier: MIT
#include "models/tile/TileArray.hpp"

#include <algorithm>

namespace ipusim {

TileRuns<uint64_t> addRuns(const TileRuns<uint64_t>& a, const TileRuns<uint64_t>& b)
{
    if (a.empty())
        return b;
    if (b.empty())
        return a;
    // Sweep the union of run boundaries.
    std::vector<uint32_t> cuts;
    for (const auto* rs : {&a, &b})
        for (const auto& r : rs->runs()) {
            cuts.push_back(r.first);
            cuts.push_back(r.end());
        }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    TileRuns<uint64_t> out;
    std::size_t ia = 0, ib = 0;
    const auto& ra = a.runs();
    const auto& rb = b.runs();
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        const uint32_t lo = cuts[i], hi = cuts[i + 1];
        while (ia < ra.size() && ra[ia].end() <= lo)
            ++ia;
        while (ib < rb.size() && rb[ib].end() <= lo)
            ++ib;
        uint64_t v = 0;
        if (ia < ra.size() && ra[ia].first <= lo)
            v += ra[ia].value;
        if (ib < rb.size() && rb[ib].first <= lo)
            v += rb[ib].value;
        if (v)
            out.add(lo, hi - lo, v);
    }
    return out;
}

TileArray::TileArray(sc_core::sc_module_name name, const IpuParams& hw, const Program& program,
                     std::shared_ptr<const TileMemory> memory)
    : sc_module(name), m_hw(hw), m_program(program),
      m_memory(memory ? std::move(memory) : std::make_shared<const TileMemory>(program, hw))
{
    m_stats.resize(program.numComputeSets);
    forEachProgramStep(program, [&](const Step& s) {
        if (auto* c = std::get_if<ComputeStep>(&s.op)) {
            ComputeSetStats& st = m_stats.at(c->id);
            st.name = c->name;
            st.flops = c->flops;
            uint64_t total = 0;
            for (const auto& r : c->cycles.runs()) {
                if (r.first >= hw.tiles)
                    continue;
                const uint32_t n = std::min(r.end(), hw.tiles) - r.first;
                st.busiestTileCycles = std::max(st.busiestTileCycles, r.value);
                total += r.value * n;
                st.tilesUsed += r.value ? n : 0;
            }
            st.meanTileCycles = double(total) / hw.tiles;
        }
    });
}

uint64_t TileArray::compute(const ComputeStep& step, uint32_t ipu, IPhaseObserver* observer)
{
    uint32_t first = 0, last = 0;
    uint64_t from = 0, to = 0;
    if (observer && observer->tileWindow(ipu, first, last, from, to)) {
        for (const auto& r : step.cycles.runs()) {
            const uint32_t lo = std::max(r.first, first), hi = std::min(r.end(), last + 1);
            for (uint32_t t = lo; t < hi && r.value; ++t) {
                const uint64_t start = m_base + m_extra.at(t);
                if (start >= from && start <= to)
                    observer->tileSpan(ipu, t, step.name, start, start + r.value);
            }
        }
    }
    m_extra = addRuns(m_extra, step.cycles);
    m_extraMax = 0;
    for (const auto& r : m_extra.runs())
        m_extraMax = std::max(m_extraMax, r.value);
    ++m_stats[step.id].executions;
    return lastReady();
}

void TileArray::align(uint64_t cycle)
{
    m_base = cycle;
    m_extra = {};
    m_extraMax = 0;
}

void TileArray::counters(std::vector<uint64_t*>& out)
{
    for (auto& st : m_stats) {
        out.push_back(&st.executions);
        out.push_back(&st.phaseCycles);
    }
}

void TileArray::shape(uint64_t cycle, std::vector<int64_t>& out) const
{
    out.push_back(int64_t(m_base) - int64_t(cycle));
    for (const auto& r : m_extra.runs()) {
        out.push_back(r.first);
        out.push_back(r.count);
        out.push_back(int64_t(r.value));
    }
}

std::vector<uint64_t> TileArray::busyCycles() const
{
    std::vector<uint64_t> busy(m_hw.tiles, 0);
    forEachProgramStep(m_program, [&](const Step& s) {
        if (auto* c = std::get_if<ComputeStep>(&s.op)) {
            const uint64_t n = m_stats[c->id].executions;
            for (const auto& r : c->cycles.runs())
                for (uint32_t t = r.first; t < std::min(r.end(), m_hw.tiles); ++t)
                    busy[t] += n * r.value;
        }
    });
    return busy;
}

} // namespace ipusim
