// SPDX-License-Identifier: MIT
#include "models/memory/TileMemory.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <numeric>
#include <tuple>

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

TileMemory::TileMemory(const Program& program, const IpuParams& hw) : TileMemory(program, hw, nullptr) {}

TileMemory::TileMemory(const Program& program, const IpuParams& hw, const TileMemory* same) : m_capacity(hw.tileMemoryBytes)
{
    m_tensors = program.tensors;
    for (auto& a : programOverheads(program, hw))
        m_tensors.push_back(std::move(a));
    if (!same || !takePeaksOf(*same, hw.tiles))
        sweep(hw.tiles);
}

bool TileMemory::takePeaksOf(const TileMemory& other, uint32_t T)
{
    // Where each tile peaks, and by how much over its always-live bytes, follows from the
    // not-always-live tensors alone: the same ones in the same order, the same peaks.
    auto nextLive = [](const std::vector<TensorAlloc>& v, std::size_t i) {
        while (i < v.size() && v[i].alwaysLive)
            ++i;
        return i;
    };
    std::size_t i = nextLive(m_tensors, 0), j = nextLive(other.m_tensors, 0);
    for (; i < m_tensors.size() && j < other.m_tensors.size(); i = nextLive(m_tensors, i + 1), j = nextLive(other.m_tensors, j + 1)) {
        const TensorAlloc &a = m_tensors[i], &b = other.m_tensors[j];
        if (a.from != b.from || a.to != b.to || a.bytes != b.bytes)
            return false;
    }
    if (i != m_tensors.size() || j != other.m_tensors.size() || other.m_tiles.size() != T)
        return false;
    std::vector<int64_t> always(std::size_t(T) + 1, 0); // a difference array over tiles
    for (const auto& t : m_tensors)
        if (t.alwaysLive)
            for (const auto& r : t.bytes.runs())
                if (r.first < T) {
                    always[r.first] += int64_t(r.value);
                    always[std::min(r.end(), T)] -= int64_t(r.value);
                }
    m_tiles.assign(T, {});
    int64_t running = 0;
    for (uint32_t t = 0; t < T; ++t) {
        const TileMemoryUse& o = other.m_tiles[t];
        m_tiles[t] = {uint64_t(running += always[t]), o.notAlwaysLivePeak, o.peakPoint};
        if (m_tiles[t].peak() > m_capacity) { // where it first runs over takes the sweep
            m_tiles.clear();
            return false;
        }
    }
    return true;
}

void TileMemory::sweep(uint32_t T)
{
    // Split the tiles into segments on which every tensor is uniform, then sweep the program
    // points once for all segments: cost follows runs, not tiles, and nothing is sorted per tile.
    std::vector<bool> cut(std::size_t(T) + 1, false); // marked, not sorted: runs far outnumber tiles
    cut[0] = cut[T] = true;
    for (const auto& t : m_tensors)
        for (const auto& r : t.bytes.runs()) {
            cut[std::min(r.first, T)] = true;
            cut[std::min(r.end(), T)] = true;
        }
    std::vector<uint32_t> cuts;
    std::vector<uint32_t> segmentFrom(std::size_t(T) + 1, 0); // at each cut, the segment it starts
    for (uint32_t t = 0; t <= T; ++t)
        if (cut[t]) {
            segmentFrom[t] = uint32_t(cuts.size());
            cuts.push_back(t);
        }
    const std::size_t segments = cuts.size() - 1;
    auto segmentsOf = [&](const TileRun<uint64_t>& r) { // the segments [s0, s1) a run covers: its ends are cuts
        return std::pair{std::size_t(segmentFrom[std::min(r.first, T)]), std::size_t(segmentFrom[std::min(r.end(), T)])};
    };
    std::vector<TileMemoryUse> uses(segments);
    struct Event
    {
        uint32_t point;
        bool frees;
        uint32_t tensor;
    };
    std::vector<Event> events;
    for (uint32_t i = 0; i < m_tensors.size(); ++i) {
        const auto& t = m_tensors[i];
        if (!t.alwaysLive) {
            events.push_back({t.from, false, i});
            events.push_back({t.to + 1, true, i});
            continue;
        }
        for (const auto& r : t.bytes.runs())
            if (r.first < T) {
                const auto [s0, s1] = segmentsOf(r);
                for (std::size_t seg = s0; seg < s1; ++seg)
                    uses[seg].alwaysLive += r.value;
            }
    }
    for (auto& use : uses)
        if (use.alwaysLive > m_capacity)
            use = {use.alwaysLive, 0, 0, 0, use.alwaysLive};
    // Each segment keeps its own live bytes. At a point frees come first, so back-to-back
    // lifetimes do not overlap; the point's figure is taken once all its changes are in. A
    // point's changes go into a difference array over segments, summed once over the segments
    // they reach: a run costs two additions however many segments it covers.
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
        return std::tie(a.point, b.frees, a.tensor) < std::tie(b.point, a.frees, b.tensor);
    });
    std::vector<int64_t> live(segments, 0), change(segments + 1, 0);
    for (std::size_t i = 0; i < events.size();) {
        const uint32_t point = events[i].point;
        std::size_t lo = segments, hi = 0;
        for (; i < events.size() && events[i].point == point; ++i)
            for (const auto& r : m_tensors[events[i].tensor].bytes.runs()) {
                if (r.value == 0 || r.first >= T)
                    continue;
                const auto [s0, s1] = segmentsOf(r);
                const int64_t bytes = events[i].frees ? -int64_t(r.value) : int64_t(r.value);
                change[s0] += bytes;
                change[s1] -= bytes;
                lo = std::min(lo, s0);
                hi = std::max(hi, s1);
            }
        int64_t running = 0;
        for (std::size_t seg = lo; seg < hi; ++seg) {
            running += change[seg];
            change[seg] = 0;
            if (running == 0) // unchanged here: no new peak, and not newly over
                continue;
            live[seg] += running;
            TileMemoryUse& use = uses[seg];
            if (live[seg] > int64_t(use.notAlwaysLivePeak)) {
                use.notAlwaysLivePeak = uint64_t(live[seg]);
                use.peakPoint = point;
            }
            if (use.firstOverPoint == TileMemoryUse::kNever && use.alwaysLive + uint64_t(live[seg]) > m_capacity) {
                use.firstOverPoint = point;
                use.firstOverBytes = use.alwaysLive + uint64_t(live[seg]);
            }
        }
        if (hi > lo)
            change[hi] = 0;
    }
    m_tiles.assign(T, {});
    for (std::size_t seg = 0; seg < segments; ++seg)
        for (uint32_t t = cuts[seg]; t < cuts[seg + 1]; ++t)
            m_tiles[t] = uses[seg];
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
