// SPDX-License-Identifier: MIT
#include "workloads/lowering/ProgramBuilder.hpp"

#include <algorithm>
#include <stdexcept>

namespace ipusim {

namespace {

/** Dense per-tile values as runs of equal non-zero values, stored without slack: the
 *  schedule keeps them for the whole run. */
template <class T>
TileRuns<T> runsOf(const std::vector<T>& v)
{
    auto startsRun = [&](std::size_t t) { return !(v[t] == T{}) && (t == 0 || !(v[t] == v[t - 1])); };
    std::size_t count = 0;
    for (std::size_t t = 0; t < v.size(); ++t)
        count += startsRun(t);
    std::vector<TileRun<T>> runs;
    runs.reserve(count);
    for (uint32_t t = 0; t < v.size(); ++t)
        if (startsRun(t))
            runs.push_back({t, 1, v[t]});
        else if (!(v[t] == T{}))
            ++runs.back().count;
    return TileRuns<T>(std::move(runs));
}

/** Room for `more` elements, growing geometrically: a replay appends a whole op at once. */
template <class T>
void growFor(std::vector<T>& v, std::size_t more)
{
    if (v.size() + more > v.capacity())
        v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

} // namespace

TileRuns<uint64_t> toRuns(const TileVector& v) { return runsOf(v); }

TileVector toDense(const TileRuns<uint64_t>& runs, uint32_t tiles)
{
    TileVector v(tiles, 0);
    for (const auto& r : runs.runs())
        std::fill_n(v.begin() + r.first, r.count, r.value);
    return v;
}

TileRuns<uint64_t> linearMappingRuns(uint32_t totalTiles, uint64_t bytes, uint64_t grain, uint32_t first, uint32_t tiles)
{
    if (tiles == 0)
        tiles = totalTiles - first;
    TileRuns<uint64_t> runs;
    if (bytes == 0 || tiles == 0)
        return runs;
    grain = std::max<uint64_t>(grain, 1);
    const uint64_t grains = (bytes + grain - 1) / grain;
    const uint64_t perTile = (grains + tiles - 1) / tiles * grain; // a share of whole grains, rounded up
    const uint64_t full = bytes / perTile;                          // at most `tiles`: the shares cover `bytes`
    runs.add(first, uint32_t(full), perTile);
    if (const uint64_t rest = bytes - full * perTile; rest > 0)
        runs.add(first + uint32_t(full), 1, rest);
    return runs;
}

TileVector linearMapping(uint32_t totalTiles, uint64_t bytes, uint64_t grain, uint32_t first, uint32_t tiles)
{
    return toDense(linearMappingRuns(totalTiles, bytes, grain, first, tiles), totalTiles);
}

ProgramBuilder::ProgramBuilder(const IpuParams& hw, std::shared_ptr<TileRunsPools> pools) : m_hw(hw), m_pools(std::move(pools))
{
    m_bodies.push_back(&m_program.steps);
}

int ProgramBuilder::allocate(const std::string& name, const std::string& kind, const TileVector& bytes, bool alwaysLive)
{
    return allocate(name, kind, toRuns(bytes), alwaysLive);
}

int ProgramBuilder::allocate(const std::string& name, const std::string& kind, TileRuns<uint64_t> bytes, bool alwaysLive)
{
    TensorAlloc t;
    t.name = name;
    t.kind = kind;
    t.bytes = std::move(bytes);
    m_pools->bytesAndCycles.share(t.bytes);
    t.alwaysLive = alwaysLive;
    t.from = m_point;
    t.to = m_point;
    m_program.tensors.push_back(std::move(t));
    return int(m_program.tensors.size()) - 1;
}

void ProgramBuilder::touch(int handle)
{
    auto& t = m_program.tensors.at(std::size_t(handle));
    if (m_recording && std::size_t(handle) < m_recording->tensors)
        m_touchLog.push_back({handle, m_point - m_recording->point});
    if (m_point > 0)
        t.to = std::max(t.to, m_point - 1);
}

void ProgramBuilder::sync() { body().push_back({SyncStep{}}); }

void ProgramBuilder::exchange(const std::string& name, const std::vector<ExchangeBytes>& perTile)
{
    ExchangeStep x;
    x.name = name;
    x.bytes = runsOf(perTile);
    if (x.bytes.empty())
        return;
    m_pools->exchanges.share(x.bytes);
    x.point = m_point++;
    x.outline = outlineOf(name);
    body().push_back({x});
}

void ProgramBuilder::compute(const std::string& name, const TileVector& cycles, const std::vector<Codelet>& codelets,
                             uint32_t verticesPerActiveTile, double flops)
{
    ComputeStep c;
    c.name = name;
    c.flops = flops;
    c.cycles = toRuns(cycles);
    std::size_t gaps = 0; // the active tiles' contiguous groups: one vertex run each
    for (std::size_t i = 0; i < c.cycles.runs().size(); ++i)
        gaps += i == 0 || c.cycles.runs()[i].first != c.cycles.runs()[i - 1].end();
    c.vertices.reserve(gaps);
    for (const auto& r : c.cycles.runs())
        c.vertices.add(r.first, r.count, verticesPerActiveTile);
    m_pools->bytesAndCycles.share(c.cycles);
    m_pools->vertices.share(c.vertices);
    c.vertexTypes = codeletNames(codelets);
    c.point = m_point++;
    c.outline = outlineOf(name);
    body().push_back({c});
}

void ProgramBuilder::compute(const std::string& name, const TileVector& cycles, const std::vector<std::string>& vertexTypes,
                             const TileVector& vertices, double flops)
{
    ComputeStep c;
    c.name = name;
    c.flops = flops;
    c.cycles = toRuns(cycles);
    for (uint32_t t = 0; t < vertices.size(); ++t)
        if (vertices[t])
            c.vertices.add(t, 1, uint32_t(vertices[t]));
    m_pools->bytesAndCycles.share(c.cycles);
    m_pools->vertices.share(c.vertices);
    c.vertexTypes = vertexTypes;
    c.point = m_point++;
    c.outline = outlineOf(name);
    body().push_back({c});
}

void ProgramBuilder::host(const std::string& name, Direction direction, uint64_t bytes, bool prefetch, uint32_t prefetchDepth)
{
    HostTransferStep h{name, direction, bytes, m_point++, prefetch, prefetchDepth};
    body().push_back({h});
}

void ProgramBuilder::beginRepeat(const std::string& name, uint64_t count)
{
    RepeatStep r;
    r.name = name;
    r.count = count;
    body().push_back({r});
    m_bodies.push_back(&std::get<RepeatStep>(body().back().op).body);
}

void ProgramBuilder::endRepeat()
{
    if (m_bodies.size() < 2)
        throw std::logic_error("endRepeat without beginRepeat");
    m_bodies.pop_back();
}

uint32_t ProgramBuilder::beginFragment(const std::string& name)
{
    // Fragments are kept in a list that does not reallocate while one is being filled.
    m_fragments.emplace_back();
    m_program.fragmentNames.push_back(name);
    m_bodies.push_back(&m_fragments.back());
    return uint32_t(m_fragments.size() - 1);
}

void ProgramBuilder::endFragment()
{
    if (m_bodies.size() < 2)
        throw std::logic_error("endFragment without beginFragment");
    m_bodies.pop_back();
}

void ProgramBuilder::ipuCopy(const std::string& name, std::vector<IpuTransfer> send, std::vector<IpuTransfer> recv)
{
    IpuCopyStep c;
    c.name = name;
    c.send = std::move(send);
    c.recv = std::move(recv);
    c.point = m_point++;
    body().push_back({c});
}

void ProgramBuilder::collective(const std::string& name, CollectiveKind kind, uint64_t bytes, std::vector<uint32_t> ring)
{
    if (ring.size() < 2 || bytes == 0)
        return;
    CollectiveStep c;
    c.name = name;
    c.kind = kind;
    c.bytes = bytes;
    c.ring = std::move(ring);
    c.point = m_point++;
    body().push_back({c});
}

void ProgramBuilder::streamingMemory(const std::string& name, Direction direction, uint64_t bytes)
{
    if (bytes == 0)
        return;
    body().push_back({StreamingMemoryStep{name, direction, bytes, m_point++}});
}

ProgramBuilder::Mark ProgramBuilder::startRecording()
{
    if (m_recording)
        throw std::logic_error("one recording at a time");
    m_touchLog.clear();
    m_recording = Mark{m_point, m_program.tensors.size(), body().size(), &body()};
    return *m_recording;
}

EmittedSteps ProgramBuilder::stopRecording()
{
    if (!m_recording)
        throw std::logic_error("stopRecording without startRecording");
    const Mark mark = *m_recording;
    m_recording.reset();
    if (mark.body != &body())
        throw std::logic_error("a recording must end in the body it began in");
    EmittedSteps e;
    e.points = m_point - mark.point;
    e.steps.assign(body().begin() + std::ptrdiff_t(mark.steps), body().end());
    for (auto& s : e.steps)
        std::visit([&](auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (kIsPointStep<T>)
                op.point -= mark.point;
            if constexpr (std::is_same_v<T, RepeatStep> || std::is_same_v<T, CallStep>)
                throw std::logic_error("a recording holds flat steps only");
        }, s.op);
    e.tensors.assign(m_program.tensors.begin() + std::ptrdiff_t(mark.tensors), m_program.tensors.end());
    for (auto& t : e.tensors) {
        t.from -= mark.point;
        t.to -= mark.point;
    }
    e.touches = std::move(m_touchLog);
    m_touchLog.clear();
    return e;
}

int ProgramBuilder::replay(EmittedSteps e, const std::vector<int>& touched)
{
    if (m_recording)
        throw std::logic_error("a replay inside a recording would not be recorded");
    const uint32_t base = m_point;
    const int first = int(m_program.tensors.size());
    growFor(m_program.tensors, e.tensors.size());
    growFor(body(), e.steps.size());
    for (auto& t : e.tensors) {
        t.from += base;
        t.to += base;
        m_program.tensors.push_back(std::move(t));
    }
    for (std::size_t i = 0; i < e.touches.size(); ++i)
        if (const uint32_t at = base + e.touches[i].points; at > 0) {
            auto& t = m_program.tensors.at(std::size_t(touched.at(i)));
            t.to = std::max(t.to, at - 1);
        }
    for (auto& s : e.steps) {
        std::visit([&](auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (kIsPointStep<T>)
                op.point += base;
            if constexpr (kHasOutline<T>)
                op.outline = outlineOf(op.name);
        }, s.op);
        body().push_back(std::move(s));
    }
    m_point = base + e.points;
    return first;
}

Program ProgramBuilder::finish(uint32_t ipu)
{
    Program p = std::move(m_program);
    p.fragments.assign(std::make_move_iterator(m_fragments.begin()), std::make_move_iterator(m_fragments.end()));
    p.ipu = ipu;
    const uint32_t expected = m_point;
    numberPoints(p);
    if (p.numPoints != expected)
        throw std::logic_error("program points out of step with liveness");
    return p;
}

} // namespace ipusim
