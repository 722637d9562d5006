// SPDX-License-Identifier: MIT
// Tile runs share their storage between copies and between identical steps of a program; a
// recorded op is emitted again at a later point.
#include "workloads/lowering/ProgramBuilder.hpp"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace ipusim;

TEST_CASE("A copy of tile runs keeps its values when the original grows", "[tiles]")
{
    TileRuns<uint64_t> a;
    a.add(0, 4, 9);
    TileRuns<uint64_t> b = a;
    CHECK(&a.runs() == &b.runs()); // shared until one changes
    a.add(4, 2, 3);
    CHECK(&a.runs() != &b.runs());
    CHECK(b.runs().size() == 1);
    CHECK(b.at(4) == 0);
    CHECK(a.at(4) == 3);
    CHECK(a != b);
    b.add(4, 2, 3);
    CHECK(a == b); // equal values, separate storage
}

TEST_CASE("Empty tile runs hold no value anywhere and equal each other", "[tiles]")
{
    const TileRuns<uint32_t> none, alsoNone(std::vector<TileRun<uint32_t>>{});
    CHECK(none.empty());
    CHECK(none.end() == 0);
    CHECK(none.at(7) == 0);
    CHECK(none == alsoNone);
}

TEST_CASE("A pool gives equal tile runs one storage and leaves different ones alone", "[tiles]")
{
    TileRunsPool<ExchangeBytes> pool;
    TileRuns<ExchangeBytes> a, b, c;
    a.add(0, 8, {64, 0, 0});
    a.add(8, 8, {0, 64, 0});
    b.add(0, 8, {64, 0, 0});
    b.add(8, 8, {0, 64, 0});
    c.add(0, 8, {64, 0, 0});
    c.add(8, 8, {0, 0, 64}); // same sizes, received another way
    pool.share(a);
    pool.share(b);
    pool.share(c);
    CHECK(&a.runs() == &b.runs());
    CHECK(&a.runs() != &c.runs());
    CHECK(c.at(9).recvShared == 64);
}

TEST_CASE("A linear mapping: equal shares of whole grains, the rest on the tile after", "[tiles]")
{
    // 1,000 B in 64 B grains over 16 tiles: 16 grains, one a tile; 15 full tiles and 40 B.
    CHECK(linearMappingRuns(16, 1000, 64).runs() == TileRuns<uint64_t>::Runs{{0, 15, 64}, {15, 1, 40}});
    // 1,000 B over tiles 4-7: 4 grains a tile (256 B); three full tiles and 232 B.
    CHECK(linearMappingRuns(16, 1000, 64, 4, 4).runs() == TileRuns<uint64_t>::Runs{{4, 3, 256}, {7, 1, 232}});
    CHECK(linearMappingRuns(16, 1024, 64, 4, 4).runs() == TileRuns<uint64_t>::Runs{{4, 4, 256}});
    CHECK(linearMappingRuns(16, 0, 64).empty());
    // Against filling tile after tile with a share each, as the mapping is defined.
    for (uint32_t tiles : {1u, 3u, 16u})
        for (uint64_t bytes : {1ull, 63ull, 64ull, 65ull, 999ull, 4096ull, 100000ull})
            for (uint64_t grain : {0ull, 1ull, 4ull, 64ull}) {
                const uint64_t g = std::max<uint64_t>(grain, 1), perTile = ((bytes + g - 1) / g + tiles - 1) / tiles * g;
                TileVector dense(20, 0);
                uint64_t left = bytes;
                for (uint32_t t = 2; t < 2 + tiles && left; ++t)
                    left -= dense[t] = std::min(perTile, left);
                INFO(tiles << " tiles, " << bytes << " B, grain " << grain);
                CHECK(toDense(linearMappingRuns(20, bytes, grain, 2, tiles), 20) == dense);
                CHECK(linearMapping(20, bytes, grain, 2, tiles) == dense);
            }
}

TEST_CASE("Identical layers' steps and tensors share their runs, and the program reads the same", "[tiles]")
{
    IpuParams hw;
    hw.tiles = 16;
    ProgramBuilder b(hw);
    const TileVector cycles{5, 5, 7, 7, 0, 0, 3, 3, 3, 0, 0, 0, 0, 0, 0, 1};
    std::vector<ExchangeBytes> x(16);
    x[2] = {128, 0, 0};
    x[9] = {0, 128, 0};
    for (int layer = 0; layer < 2; ++layer) {
        b.allocate("activations " + std::to_string(layer), "activation", linearMapping(16, 1000, 64));
        b.exchange("layer.in", x);
        b.compute("layer", cycles, {Vertex::Copy});
    }
    const Program p = b.finish(0);
    REQUIRE(p.steps.size() == 4);
    const auto& x0 = std::get<ExchangeStep>(p.steps[0].op);
    const auto& x1 = std::get<ExchangeStep>(p.steps[2].op);
    const auto& c0 = std::get<ComputeStep>(p.steps[1].op);
    const auto& c1 = std::get<ComputeStep>(p.steps[3].op);
    CHECK(&x0.bytes.runs() == &x1.bytes.runs());
    CHECK(&c0.cycles.runs() == &c1.cycles.runs());
    CHECK(&c0.vertices.runs() == &c1.vertices.runs());
    CHECK(&p.tensors[0].bytes.runs() == &p.tensors[1].bytes.runs());
    // The values are the ones given: 4 cycle runs, 3 groups of active tiles with one vertex each.
    CHECK(c1.cycles.runs().size() == 4);
    CHECK(c1.cycles.at(3) == 7);
    CHECK(c1.vertices.runs().size() == 3);
    CHECK(c1.vertices.at(8) == 1);
    CHECK(c1.vertices.at(9) == 0);
    CHECK(x1.bytes.at(9).recv == 128);
    CHECK(toDense(p.tensors[1].bytes, 16) == linearMapping(16, 1000, 64));
}

TEST_CASE("A recorded op is emitted again from a later point, its liveness and touches moved with it", "[tiles][reuse]")
{
    IpuParams hw;
    hw.tiles = 4;
    ProgramBuilder b(hw);
    b.setOutlineRule([](const std::string& name) { return name.substr(0, 3) == "op2" ? "second" : ""; });
    const TileVector one{1, 1, 0, 0};
    const int input = b.allocate("input", "activation", one); // from point 0
    b.compute("warm-up", one, {Vertex::Copy});                // point 0
    // The op: a temporary live over its two points, and a touch of the input at its second.
    (void)b.startRecording();
    const int temp = b.allocate("op1 temp", "temporary", one);
    b.compute("op1", TileVector{4, 4, 4, 0}, {Vertex::Copy}); // point 1
    b.touch(temp);
    b.compute("op1.more", one, {Vertex::Copy}); // point 2
    b.touch(temp);
    b.touch(input);
    EmittedSteps e = b.stopRecording();
    CHECK(e.points == 2);
    REQUIRE(e.tensors.size() == 1);
    CHECK(e.tensors[0].from == 0); // counted from the op's first point
    CHECK(e.tensors[0].to == 1);
    REQUIRE(e.touches.size() == 1); // only the input: the temporary is the op's own
    CHECK(e.touches[0].handle == input);
    CHECK(e.touches[0].points == 2);

    b.compute("between", one, {Vertex::Copy}); // point 3
    const int later = b.allocate("later input", "activation", one);
    std::get<ComputeStep>(e.steps[0].op).name = "op2";
    std::get<ComputeStep>(e.steps[1].op).name = "op2.more";
    const int first = b.replay(e, {later}); // points 4 and 5
    CHECK(first == temp + 2);
    b.compute("after", one, {Vertex::Copy}); // point 6
    const Program p = b.finish(0);
    REQUIRE(p.steps.size() == 7);
    const auto& op2 = std::get<ComputeStep>(p.steps[4].op);
    CHECK(op2.point == 4);
    CHECK(op2.outline == "second"); // the rule applied to the new name
    CHECK(op2.cycles.at(1) == 4);
    CHECK(std::get<ComputeStep>(p.steps[5].op).point == 5);
    CHECK(p.tensors.at(std::size_t(first)).from == 4);
    CHECK(p.tensors.at(std::size_t(first)).to == 5);
    CHECK(p.tensors.at(std::size_t(later)).to == 5); // touched in place of the input
    CHECK(p.tensors.at(std::size_t(input)).to == 2); // the first op's touch only
}
