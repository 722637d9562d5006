// SPDX-License-Identifier: MIT
#include "models/memory/TileMemory.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <numeric>

namespace ipusim {

std::vector<TensorAlloc> programOverheads(const Program& program, const IpuParams& hw)
{
    const uint32_t T = hw.tiles;
    std::map<std::string, std::vector<bool>> typeTiles; // which tiles run each codelet
    std::vector<uint64_t> state(T, 0), control(T, 0);
    auto overRuns = [&](const auto& runs, auto&& f) {
        for (const auto& r : runs.runs())
            for (uint32_t t = r.first; t < std::min(r.end(), T); ++t)
                f(t, r.value);
    };
    std::set<std::string> outlined; // keys whose code is already counted
    auto firstOf = [&](const std::string& key) { return key.empty() || outlined.insert(key).second; };
    forEachProgramStep(program, [&](const Step& s) {
        if (auto* c = std::get_if<ComputeStep>(&s.op)) {
            if (!firstOf(c->outline))
                return;
            overRuns(c->vertices, [&](uint32_t t, uint32_t n) { state[t] += uint64_t(n) * hw.vertexStateBytes; });
            overRuns(c->cycles, [&](uint32_t t, uint64_t cyc) {
                if (cyc)
                    control[t] += hw.controlCodeBytesPerStep;
            });
            for (const auto& type : c->vertexTypes) {
                auto& v = typeTiles[type];
                v.resize(T, false);
                overRuns(c->vertices, [&](uint32_t t, uint32_t n) {
                    if (n)
                        v[t] = true;
                });
            }
        } else if (auto* x = std::get_if<ExchangeStep>(&s.op)) {
            if (!firstOf(x->outline))
                return;
            overRuns(x->bytes, [&](uint32_t t, const ExchangeBytes& b) {
                if (b.send || b.recv || b.recvShared)
                    control[t] += hw.exchangeCodeBytesPerPhase;
            });
        }
    });
    std::vector<uint64_t> code(T, 0);
    for (const auto& [type, tiles] : typeTiles)
        for (uint32_t t = 0; t < T; ++t)
            code[t] += tiles[t] ? hw.codeBytesPerVertexType : 0;

    auto toAlloc = [&](const char* name, const std::vector<uint64_t>& perTile) {
        TensorAlloc a;
        a.name = name;
        a.kind = "code";
        a.alwaysLive = true;
        for (uint32_t t = 0; t < T; ++t)
            a.bytes.add(t, 1, perTile[t]);
        return a;
    };
    std::vector<TensorAlloc> out;
    out.push_back(toAlloc("vertex code", code));
    out.push_back(toAlloc("vertex state", state));
    out.push_back(toAlloc("control and exchange code", control));
    return out;
}

TileMemory::TileMemory(const Program& program, const IpuParams& hw) : m_capacity(hw.tileMemoryBytes)
{
    m_tensors = program.tensors;
    for (auto& a : programOverheads(program, hw))
        m_tensors.push_back(std::move(a));

    // Split the tiles into segments on which every tensor is uniform, then sweep program
    // points within each segment: cost follows runs, not tiles.
    const uint32_t T = hw.tiles;
    std::vector<uint32_t> cuts{0, T};
    for (const auto& t : m_tensors)
        for (const auto& r : t.bytes.runs()) {
            cuts.push_back(std::min(r.first, T));
            cuts.push_back(std::min(r.end(), T));
        }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    const std::size_t segments = cuts.size() - 1;
    std::vector<uint64_t> always(segments, 0);
    std::vector<std::vector<std::pair<uint32_t, int64_t>>> events(segments);
    for (const auto& t : m_tensors)
        for (const auto& r : t.bytes.runs()) {
            if (r.value == 0 || r.first >= T)
                continue;
            std::size_t s0 = std::lower_bound(cuts.begin(), cuts.end(), r.first) - cuts.begin();
            std::size_t s1 = std::lower_bound(cuts.begin(), cuts.end(), std::min(r.end(), T)) - cuts.begin();
            for (std::size_t s = s0; s < s1; ++s) {
                if (t.alwaysLive)
                    always[s] += r.value;
                else {
                    events[s].push_back({t.from, int64_t(r.value)});
                    events[s].push_back({t.to + 1, -int64_t(r.value)});
                }
            }
        }
    m_tiles.assign(T, {});
    for (std::size_t s = 0; s < segments; ++s) {
        auto& ev = events[s];
        // At equal points, frees (negative) come first so back-to-back lifetimes do not overlap.
        std::sort(ev.begin(), ev.end());
        TileMemoryUse use;
        use.alwaysLive = always[s];
        if (use.alwaysLive > m_capacity)
            use = {use.alwaysLive, 0, 0, 0, use.alwaysLive};
        int64_t live = 0;
        for (std::size_t i = 0; i < ev.size(); ++i) {
            const auto& [point, delta] = ev[i];
            live += delta;
            if (live > int64_t(use.notAlwaysLivePeak)) {
                use.notAlwaysLivePeak = uint64_t(live);
                use.peakPoint = point;
            }
            const bool settled = i + 1 == ev.size() || ev[i + 1].first != point; // every change at this point applied
            if (settled && use.firstOverPoint == TileMemoryUse::kNever && use.alwaysLive + uint64_t(live) > m_capacity) {
                use.firstOverPoint = point;
                use.firstOverBytes = use.alwaysLive + uint64_t(live);
            }
        }
        for (uint32_t t = cuts[s]; t < cuts[s + 1]; ++t)
            m_tiles[t] = use;
    }
}

bool TileMemory::fits() const
{
    return std::all_of(m_tiles.begin(), m_tiles.end(), [&](const TileMemoryUse& u) { return u.peak() <= m_capacity; });
}

std::vector<uint32_t> TileMemory::worstTiles(std::size_t n) const
{
    std::vector<uint32_t> order(m_tiles.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return m_tiles[a].peak() > m_tiles[b].peak(); });
    order.resize(std::min(n, order.size()));
    return order;
}

std::optional<uint32_t> TileMemory::firstOver() const
{
    std::optional<uint32_t> first;
    for (uint32_t t = 0; t < m_tiles.size(); ++t) {
        const TileMemoryUse& u = m_tiles[t];
        if (u.firstOverPoint == TileMemoryUse::kNever)
            continue;
        const TileMemoryUse* f = first ? &m_tiles[*first] : nullptr;
        if (!f || u.firstOverPoint < f->firstOverPoint || (u.firstOverPoint == f->firstOverPoint && u.firstOverBytes > f->firstOverBytes))
            first = t;
    }
    return first;
}

std::vector<uint64_t> TileMemory::liveBytesByPoint(std::optional<uint32_t> tile, uint32_t points) const
{
    // A difference array over points: each tensor adds its bytes where it starts living and
    // takes them back after its last point.
    std::vector<int64_t> change(std::size_t(points) + 1, 0);
    uint64_t always = 0;
    for (const auto& t : m_tensors) {
        uint64_t bytes = 0;
        if (tile)
            bytes = t.bytes.at(*tile);
        else
            for (const auto& r : t.bytes.runs())
                if (r.first < m_tiles.size())
                    bytes += r.value * (std::min<uint64_t>(r.end(), m_tiles.size()) - r.first);
        if (t.alwaysLive)
            always += bytes;
        else if (bytes && t.from < points) {
            change[t.from] += int64_t(bytes);
            change[std::min(t.to, points - 1) + 1] -= int64_t(bytes);
        }
    }
    std::vector<uint64_t> live(points);
    int64_t running = 0;
    for (uint32_t p = 0; p < points; ++p)
        live[p] = always + uint64_t(running += change[p]);
    return live;
}

std::vector<LiveTensor> TileMemory::liveAt(uint32_t tile, uint32_t point) const
{
    std::vector<LiveTensor> out;
    for (const auto& t : m_tensors) {
        uint64_t b = t.bytes.at(tile);
        if (b && (t.alwaysLive || (t.from <= point && point <= t.to)))
            out.push_back({t.name, t.kind, b, t.alwaysLive});
    }
    std::stable_sort(out.begin(), out.end(), [](const LiveTensor& a, const LiveTensor& b) { return a.bytes > b.bytes; });
    return out;
}

} // namespace ipusim
