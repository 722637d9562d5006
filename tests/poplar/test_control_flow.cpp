// SPDX-License-Identifier: MIT
// Control flow that depends on data (If, RepeatWhileTrue): the host run decides, and the simulated
// run takes the same branches and iterations; cycles by hand (a sync 126, a vertex 6 x its
// estimate).
#include "PoplarTest.hpp"

#include <poplar/Program.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

using namespace poplar;
using namespace poplar::program;
using Catch::Matchers::Contains;
using poplar_test::codelet;

namespace {

constexpr std::uint64_t kSync = 126;

/** A counter and its predicate on tile 0, and compute sets of one priced vertex each. */
struct Fixture
{
    Device device = poplar_test::device();
    Graph graph{device.getTarget()};
    Tensor n = graph.addVariable(UNSIGNED_INT, {}, "n");
    Tensor more = graph.addVariable(BOOL, {}, "more");
    Tensor x = graph.addVariable(FLOAT, {4}, "x");
    Tensor y = graph.addVariable(FLOAT, {}, "y");

    Fixture()
    {
        graph.addCodelets(codelet("tutorial.cpp"));
        for (const Tensor& t : {n, more, x, y})
            graph.setTileMapping(t, 0);
        graph.createHostWrite("n", n);
        graph.createHostRead("n", n);
        graph.createHostWrite("more", more);
        graph.createHostRead("y", y);
    }
    /** Counts n down (priced 10: 60 cycles). */
    ComputeSet countdown()
    {
        ComputeSet cs = graph.addComputeSet("countdown");
        VertexRef v = graph.addVertex(cs, "Countdown", {{"n", n}, {"more", more}});
        graph.setTileMapping(v, 0);
        graph.setPerfEstimate(v, 10);
        return cs;
    }
    /** y = the sum of x, priced `cycles` (6 x that a tile). */
    ComputeSet sum(const std::string& name, std::uint64_t cycles)
    {
        ComputeSet cs = graph.addComputeSet(name);
        VertexRef v = graph.addVertex(cs, "SumVertex", {{"in", x}, {"out", y}});
        graph.setTileMapping(v, 0);
        graph.setPerfEstimate(v, cycles);
        return cs;
    }
};

} // namespace

TEST_CASE("Poplar control flow: If takes the branch its predicate says, on the host and in the simulated run")
{
    Fixture f;
    const ComputeSet heavy = f.sum("heavy", 100), light = f.sum("light", 5);
    Engine engine(f.graph, If(f.more, Execute(heavy), Execute(light)));
    engine.load(f.device);
    for (bool more : {true, false, true}) {
        engine.writeTensor("more", &more, &more + 1);
        engine.run();
        // The If's sync, then the branch's compute set: its sync and 6 x its vertex.
        CHECK(engine.ipusimCycles() == kSync + kSync + 6 * (more ? 100 : 5));
    }
}

TEST_CASE("Poplar control flow: RepeatWhileTrue runs as many iterations as its data says")
{
    Fixture f;
    const ComputeSet count = f.countdown(), body = f.sum("body", 20);
    Engine engine(f.graph, RepeatWhileTrue(Execute(count), f.more, Execute(body)));
    engine.load(f.device);
    const unsigned start = 5;
    engine.writeTensor("n", &start, &start + 1);
    engine.run();
    unsigned n = 99;
    engine.readTensor("n", &n, &n + 1);
    CHECK(n == 0);
    // The condition 5 times (n 5 -> 4 ... 1 -> 0), a sync after each to read the predicate, and the
    // body 4 times.
    CHECK(engine.ipusimCycles() == 5 * (kSync + 6 * 10) + 5 * kSync + 4 * (kSync + 6 * 20));
}

TEST_CASE("Poplar control flow: an If in a Repeat takes its branch each iteration, iterations deciding alike simulated once")
{
    Fixture f;
    const ComputeSet count = f.countdown(), heavy = f.sum("heavy", 100), light = f.sum("light", 5);
    Engine engine(f.graph, Repeat(6, Sequence{Execute(count), If(f.more, Execute(heavy), Execute(light))}));
    engine.load(f.device);
    const unsigned start = 3; // more after the countdown in iterations 1 and 2 (n 2, 1), not in 3 to 6
    engine.writeTensor("n", &start, &start + 1);
    engine.run();
    const std::uint64_t iteration = (kSync + 6 * 10) + kSync + kSync;
    CHECK(engine.ipusimCycles() == 6 * iteration + 2 * 6 * 100 + 4 * 6 * 5);
}

TEST_CASE("Poplar control flow: a program that decides on its data cannot run timing only, and a predicate must be one integer")
{
    Fixture f;
    const ComputeSet light = f.sum("light", 5);
    poplar_test::ScopedEnv timingOnly("IPUSIM_FUNCTIONAL", "0");
    Engine engine(f.graph, If(f.more, Execute(light), Sequence{}, "choose"));
    engine.load(f.device);
    CHECK_THROWS_WITH(engine.run(), Contains("If 'choose': the simulated run follows the branches the host run took, and it recorded "
                                             "none: a program whose control flow depends on its data cannot run timing only"));
    CHECK_THROWS_AS(If(f.x, Execute(light)), invalid_program);
    CHECK_THROWS_WITH(If(f.y, Execute(light)), "If: the predicate is a tensor of 1 float elements: expected one element of an integer or "
                                               "bool type");
}
