// SPDX-License-Identifier: MIT
// Tile memory accounting: always-live plus the peak of overlapping not-always-live tensors.
#include "models/memory/TileMemory.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace ipusim;

namespace {
TensorAlloc tensor(const char* name, uint32_t first, uint32_t count, uint64_t bytes, bool always, uint32_t from = 0, uint32_t to = 0)
{
    TensorAlloc t;
    t.name = name;
    t.kind = always ? "weight" : "activation";
    t.bytes.add(first, count, bytes);
    t.alwaysLive = always;
    t.from = from;
    t.to = to;
    return t;
}
} // namespace

TEST_CASE("Memory: liveness decides what overlaps", "[memory]")
{
    IpuParams hw;
    hw.tiles = 10;
    hw.tileMemoryBytes = 175;
    hw.codeBytesPerVertexType = hw.vertexStateBytes = hw.controlCodeBytesPerStep = hw.exchangeCodeBytesPerPhase = 0;
    Program p;
    p.tensors.push_back(tensor("A", 0, 10, 100, true));
    p.tensors.push_back(tensor("B", 0, 5, 50, false, 0, 0));
    p.tensors.push_back(tensor("C", 3, 5, 70, false, 1, 1)); // starts after B ends: no overlap
    p.tensors.push_back(tensor("D", 4, 1, 10, false, 0, 1)); // overlaps both on tile 4
    TileMemory m(p, hw);
    CHECK(m.tiles()[0].peak() == 150);
    CHECK(m.tiles()[3].peak() == 170);
    CHECK(m.tiles()[4].peak() == 180);
    CHECK(m.tiles()[4].alwaysLive == 100);
    CHECK(m.tiles()[4].peakPoint == 1);
    CHECK(m.tiles()[8].peak() == 100);
    CHECK(m.tiles()[9].peak() == 100);
    CHECK_FALSE(m.fits()); // tile 4 needs 180 of 175
    CHECK(m.worstTiles(1).at(0) == 4);
    auto live = m.liveAtPeak(4);
    REQUIRE(live.size() == 3);
    CHECK(live[0].name == "A");
    CHECK(live[1].name == "C");
    CHECK(live[2].name == "D");
    // First over: tile 4 at point 0 already (A 100 + B 50 + D 10 = 160 > 155); tiles 3 and
    // 5-7 only at point 1 (A + C = 170).
    hw.tileMemoryBytes = 155;
    const TileMemory tight(p, hw);
    CHECK(tight.tiles()[4].firstOverPoint == 0);
    CHECK(tight.tiles()[4].firstOverBytes == 160);
    CHECK(tight.tiles()[3].firstOverPoint == 1);
    CHECK(tight.tiles()[3].firstOverBytes == 170);
    CHECK(tight.tiles()[0].firstOverPoint == TileMemoryUse::kNever); // 150 at most
    CHECK(tight.firstOver() == 4u);
    auto first = tight.liveAt(4, 0);
    REQUIRE(first.size() == 3);
    CHECK(first[1].name == "B");
    hw.tileMemoryBytes = 180;
    CHECK(TileMemory(p, hw).fits());
    CHECK_FALSE(TileMemory(p, hw).firstOver());
}

TEST_CASE("Memory: bytes live at each program point, on a tile and on the whole IPU", "[memory][liveness]")
{
    IpuParams hw;
    hw.tiles = 10;
    hw.codeBytesPerVertexType = hw.vertexStateBytes = hw.controlCodeBytesPerStep = hw.exchangeCodeBytesPerPhase = 0;
    Program p;
    p.tensors.push_back(tensor("A", 0, 10, 100, true));
    p.tensors.push_back(tensor("B", 0, 5, 50, false, 0, 0));
    p.tensors.push_back(tensor("C", 3, 5, 70, false, 1, 2));
    p.tensors.push_back(tensor("D", 4, 1, 10, false, 0, 1));
    const TileMemory m(p, hw);
    // Tile 4 holds A always, B at point 0, C at 1-2, D at 0-1: 100+50+10, 100+70+10, 100+70, 100.
    CHECK(m.liveBytesByPoint(4u, 4) == std::vector<uint64_t>{160, 180, 170, 100});
    // Tile 9 holds only A.
    CHECK(m.liveBytesByPoint(9u, 4) == std::vector<uint64_t>{100, 100, 100, 100});
    // The IPU: A on 10 tiles (1,000), B on 5 (250), C on 5 (350), D on 1 (10).
    CHECK(m.liveBytesByPoint(std::nullopt, 4) == std::vector<uint64_t>{1260, 1360, 1350, 1000});
    // The peak tile's curve peaks at its peak.
    CHECK(m.tiles()[4].peak() == 180);
}

TEST_CASE("Memory: code and vertex state follow the compute sets", "[memory]")
{
    IpuParams hw;
    hw.tiles = 4;
    Program p;
    ComputeStep c;
    c.name = "cs";
    c.cycles.add(0, 2, 100);
    c.vertices.add(0, 2, 3);
    c.vertexTypes = {"A", "B"};
    p.steps.push_back({c});
    numberPoints(p);
    TileMemory m(p, hw);
    // 2 vertex types x 1024 + 3 vertices x 48 + 16 control bytes
    CHECK(m.tiles()[0].alwaysLive == 2048 + 144 + 16);
    CHECK(m.tiles()[2].alwaysLive == 0);
}

TEST_CASE("Memory: the sweep over runs agrees with counting every tile at every point", "[memory]")
{
    // Random programs of fragmented tensors (runs of every width, gaps, zero-byte runs), each
    // accounted by TileMemory and by brute force: per tile, the bytes live at each point.
    std::mt19937 rng(2026);
    auto uniform = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    for (int round = 0; round < 40; ++round) {
        IpuParams hw;
        hw.tiles = uniform(1, 40);
        hw.tileMemoryBytes = uniform(0, 1) ? uniform(50, 400) : 100000; // tight, or room for all
        hw.codeBytesPerVertexType = hw.vertexStateBytes = hw.controlCodeBytesPerStep = hw.exchangeCodeBytesPerPhase = 0;
        const uint32_t points = uniform(1, 12);
        Program p;
        for (uint32_t n = uniform(1, 25); n-- > 0;) {
            TensorAlloc t;
            t.name = "t";
            t.alwaysLive = uniform(0, 4) == 0;
            t.from = uniform(0, points - 1);
            t.to = uniform(t.from, points - 1);
            for (uint32_t tile = uniform(0, 3); tile < hw.tiles + 2; tile += uniform(1, 4)) {
                const uint32_t count = uniform(1, 6);
                t.bytes.add(tile, count, uniform(0, 3) * 20);
                tile += count;
            }
            p.tensors.push_back(t);
        }
        const TileMemory m(p, hw);
        for (uint32_t tile = 0; tile < hw.tiles; ++tile) {
            uint64_t always = 0;
            std::vector<uint64_t> live(points, 0);
            for (const auto& t : p.tensors)
                for (uint32_t q = 0; q < points; ++q)
                    if (t.alwaysLive)
                        always += q == 0 ? t.bytes.at(tile) : 0;
                    else if (t.from <= q && q <= t.to)
                        live[q] += t.bytes.at(tile);
            const uint64_t peak = *std::max_element(live.begin(), live.end());
            TileMemoryUse want;
            want.alwaysLive = always;
            want.notAlwaysLivePeak = peak;
            want.peakPoint = peak ? uint32_t(std::find(live.begin(), live.end(), peak) - live.begin()) : 0;
            for (uint32_t q = 0; q < points && want.firstOverPoint == TileMemoryUse::kNever; ++q)
                if (always + (always > hw.tileMemoryBytes ? 0 : live[q]) > hw.tileMemoryBytes) {
                    want.firstOverPoint = q;
                    want.firstOverBytes = always + (always > hw.tileMemoryBytes ? 0 : live[q]);
                }
            const TileMemoryUse& got = m.tiles()[tile];
            INFO("round " << round << ", tile " << tile);
            CHECK(got.alwaysLive == want.alwaysLive);
            CHECK(got.notAlwaysLivePeak == want.notAlwaysLivePeak);
            CHECK(got.peakPoint == want.peakPoint);
            CHECK(got.firstOverPoint == want.firstOverPoint);
            CHECK(got.firstOverBytes == want.firstOverBytes);
        }
        // Another IPU's program with other always-live bytes (a stash of another depth), or one
        // not-always-live tensor living longer: accounted from this one, the same figures as
        // accounted alone, whether or not every tile fits.
        Program other = p;
        for (auto& t : other.tensors)
            if (t.alwaysLive && uniform(0, 1)) {
                t.bytes = {};
                t.bytes.add(uniform(0, hw.tiles - 1), uniform(1, 8), uniform(1, 6) * 20);
            }
        if (uniform(0, 2) == 0)
            other.tensors.front().to += 1;
        const TileMemory alone(other, hw), taken(other, hw, &m);
        for (uint32_t tile = 0; tile < hw.tiles; ++tile) {
            const TileMemoryUse &a = alone.tiles()[tile], &b = taken.tiles()[tile];
            INFO("round " << round << ", tile " << tile << ", the other program");
            CHECK(std::tie(a.alwaysLive, a.notAlwaysLivePeak, a.peakPoint, a.firstOverPoint, a.firstOverBytes) ==
                  std::tie(b.alwaysLive, b.notAlwaysLivePeak, b.peakPoint, b.firstOverPoint, b.firstOverBytes));
        }
    }
}
