// SPDX-License-Identifier: MIT
#include "workloads/lowering/OpPlan.hpp"

#include <algorithm>
#include <type_traits>

namespace ipusim {

void TileCalls::add(uint32_t tile, VertexCall call, uint64_t times)
{
    if (times == 0)
        return;
    m_lastAdded = nullptr;
    m_addingFrom = nullptr;
    if (tile != m_open) {
        close();
        // A tile given calls again later (a conv's fills after its AMP vertices) goes on from
        // a copy of the list it had.
        const Span had = on(tile);
        m_adding.assign(had.begin(), had.end());
        m_open = tile;
    }
    m_adding.push_back({std::move(call), times});
}

template <class Call>
void TileCalls::addList(uint32_t tile, const std::vector<Call>& calls)
{
    const bool fresh = m_listOf.at(tile) == kNone && m_open != tile;
    for (const Call& call : calls) {
        if constexpr (std::is_same_v<Call, TileCall>)
            add(tile, call.call, call.times);
        else
            add(tile, call);
    }
    const bool whole = fresh && !calls.empty(); // nothing before them
    m_addingFrom = whole ? &calls : nullptr;
    close();
    m_lastAdded = whole ? &calls : nullptr;
    m_lastAddedTile = tile;
}

template void TileCalls::addList(uint32_t, const std::vector<VertexCall>&);
template void TileCalls::addList(uint32_t, const std::vector<TileCall>&);

void TileCalls::close() const
{
    if (m_open == kNone)
        return;
    const uint32_t before = m_open > 0 ? m_listOf[m_open - 1] : kNone;
    // Lists given from two of the lowering's lists differ (it keeps one per distinct share).
    const bool bothGiven = before != kNone && m_sourceOf[before] && m_addingFrom;
    auto equalToBefore = [&] {
        const auto [first, count] = m_lists[before];
        return count == m_adding.size() && std::equal(m_adding.begin(), m_adding.end(), m_pool.begin() + first);
    };
    if (before != kNone && (bothGiven ? m_sourceOf[before] == m_addingFrom : equalToBefore()))
        m_listOf[m_open] = before;
    else {
        m_lists.emplace_back(uint32_t(m_pool.size()), uint32_t(m_adding.size()));
        m_pool.insert(m_pool.end(), m_adding.begin(), m_adding.end());
        m_sourceOf.push_back(m_addingFrom);
        m_listOf[m_open] = uint32_t(m_lists.size() - 1);
    }
    m_open = kNone;
    m_addingFrom = nullptr;
}

TileCalls::Span TileCalls::on(uint32_t tile) const
{
    const uint32_t list = listOf(tile);
    if (list == kNone)
        return {};
    const TileCall* first = m_pool.data() + m_lists[list].first;
    return {first, first + m_lists[list].second};
}

TileVector pricedCycles(const IpuParams& hw, const TileCalls& calls, std::vector<Codelet>& codelets)
{
    // Each list of calls is priced once, however many tiles share it, and lists given from one
    // of the lowering's lists (a conv's position slices, repeating every few tiles) once for all.
    std::vector<std::pair<const void*, uint64_t>> bySource;
    auto priceOf = [&](TileCalls::Span list, const void* source) {
        if (source)
            for (const auto& [s, cycles] : bySource)
                if (s == source)
                    return cycles;
        uint64_t cycles = 0;
        for (const TileCall& c : list) {
            cycles += c.times * cyclesOf(hw, c.call);
            if (std::find(codelets.begin(), codelets.end(), c.call.codelet) == codelets.end())
                codelets.push_back(c.call.codelet);
        }
        if (source)
            bySource.emplace_back(source, cycles);
        return cycles;
    };
    TileVector cycles(calls.tiles(), 0);
    uint32_t previous = TileCalls::kNone;
    for (uint32_t t = 0; t < calls.tiles(); ++t) {
        const uint32_t list = calls.listOf(t);
        if (list == TileCalls::kNone)
            continue;
        cycles[t] = list == previous ? cycles[t - 1] : priceOf(calls.on(t), calls.sourceOf(list));
        previous = list;
    }
    return cycles;
}

} // namespace ipusim
