// SPDX-License-Identifier: MIT
// Loop fast-forward's decisions (LoopSkipper), by hand: a loop of 10 iterations of 100 cycles,
// its figures a registered statistic and a module's counter, driven as the sequencer drives it.
#include "models/ipu/LoopSkipper.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;

namespace {

/** A module as the skipper sees it: a counter, its readiness as the state an iteration leaves
 *  behind and, when `counting`, fetches left that count down and limit a skip (as HostPrefetch's). */
struct Module : Snapshottable
{
    uint64_t grown = 0;
    uint64_t readyAt = 0;
    bool counting = false;
    uint64_t left = 0;
    bool inFlight = false;
    uint64_t skippedGrowth = 0, skippedTimes = 0, skippedCycles = 0;

    void counters(std::vector<uint64_t*>& out) override
    {
        out.push_back(&grown);
        if (counting)
            out.push_back(&left);
    }
    void shape(uint64_t cycle, std::vector<int64_t>& out) const override { out.push_back(int64_t(readyAt) - int64_t(cycle)); }
    [[nodiscard]] bool settled() const override { return !inFlight; }
    [[nodiscard]] uint64_t room(const uint64_t* growth, uint64_t iterations) const override
    {
        const uint64_t used = counting ? uint64_t(0) - growth[1] : 0;
        return used > 0 ? std::min(iterations, left / used) : iterations;
    }
    void skipped(const uint64_t* growth, uint64_t times, uint64_t cycles) override
    {
        skippedGrowth = growth[0];
        skippedTimes = times;
        skippedCycles = cycles;
    }
};

constexpr IPhaseObserver::CycleRange kNothingObserved{1, 0};

struct Fixture
{
    uint64_t stat = 0;
    StatGroup stats;
    Module module;
    Program program;
    uint64_t cycle = 0;

    explicit Fixture(std::vector<Step> body = {Step{ComputeStep{}}})
    {
        stats.add("stat", stat, "things", "grows by 3 an iteration");
        program.steps.push_back({RepeatStep{"loop", 10, std::move(body)}});
    }
    LoopSkipper skipper(IPhaseObserver::CycleRange observed = kNothingObserved, bool sharesLinks = false)
    {
        return LoopSkipper(program, {&stats}, {&module}, observed, sharesLinks);
    }
    const std::vector<Step>& body() const { return std::get<RepeatStep>(program.steps.at(0).op).body; }
    /** An iteration's work: the statistic +3, the module's counter +`grow`, its fetches −2. */
    void work(uint64_t grow = 5)
    {
        stat += 3;
        module.grown += grow;
        module.left -= module.counting ? 2 : 0;
    }
    /** `cycles` pass; the module is ready at their end. */
    void pass(uint64_t cycles = 100)
    {
        cycle += cycles;
        module.readyAt = cycle;
    }
    /** Two iterations from cycle 0: what the skipper decides at the second's end (cycle 200). */
    uint64_t secondIteration(LoopSkipper& s, uint64_t firstReady = 200)
    {
        auto loop = s.enter(body(), 10, cycle);
        REQUIRE(loop);
        work();
        pass();
        REQUIRE(s.atIterationEnd(*loop, 10, cycle, cycle).iterations == 0); // nothing to compare with yet
        work();
        pass();
        return s.atIterationEnd(*loop, 9, cycle, firstReady).iterations;
    }
};

} // namespace

TEST_CASE("Loop skipper: the second of two identical iterations skips all but the last remaining", "[fast-forward]")
{
    Fixture x;
    LoopSkipper s = x.skipper();
    auto loop = s.enter(x.body(), 10, x.cycle);
    REQUIRE(loop);
    x.work();
    x.pass();
    CHECK(s.atIterationEnd(*loop, 10, x.cycle, x.cycle).iterations == 0);
    x.work();
    x.pass();
    const LoopSkipper::Skip skip = s.atIterationEnd(*loop, 9, x.cycle, x.cycle);
    // 9 remain counting the one ended: 7 are skipped, the last is simulated.
    CHECK(skip.iterations == 7);
    CHECK(skip.cycles == 700);
    s.skip(*loop, skip, x.cycle + skip.cycles);
    CHECK(x.stat == 6 + 7 * 3);
    CHECK(x.module.grown == 10 + 7 * 5);
    CHECK(x.module.skippedGrowth == 5); // its own counters' growth, after the statistic's
    CHECK(x.module.skippedTimes == 7);
    CHECK(x.module.skippedCycles == 700);
    CHECK(s.skipped() == 7);
    // Woken past the skipped iterations, at the same iteration end: nothing more to skip.
    CHECK(s.atIterationEnd(*loop, 2, x.cycle + 700, x.cycle + 700).iterations == 0);
}

TEST_CASE("Loop skipper: an iteration that grew, lasted or ended otherwise than the last skips nothing", "[fast-forward]")
{
    Fixture x;
    LoopSkipper s = x.skipper();
    auto loop = s.enter(x.body(), 10, x.cycle);
    x.work();
    x.pass();
    REQUIRE(s.atIterationEnd(*loop, 10, x.cycle, x.cycle).iterations == 0);
    SECTION("grew otherwise, then as the one before")
    {
        x.work(6);
        x.pass();
        CHECK(s.atIterationEnd(*loop, 9, x.cycle, x.cycle).iterations == 0);
        x.work(6);
        x.pass();
        CHECK(s.atIterationEnd(*loop, 8, x.cycle, x.cycle).iterations == 6);
    }
    SECTION("lasted otherwise")
    {
        x.work();
        x.pass(101);
        CHECK(s.atIterationEnd(*loop, 9, x.cycle, x.cycle).iterations == 0);
    }
    SECTION("left the module in another state")
    {
        x.work();
        x.pass();
        x.module.readyAt = x.cycle + 1;
        CHECK(s.atIterationEnd(*loop, 9, x.cycle, x.cycle).iterations == 0);
    }
    SECTION("the module has work under way")
    {
        x.work();
        x.pass();
        x.module.inFlight = true;
        CHECK(s.atIterationEnd(*loop, 9, x.cycle, x.cycle).iterations == 0);
    }
}

TEST_CASE("Loop skipper: a module's state limits the skip by its own counters' growth", "[fast-forward]")
{
    // 12 fetches left, 2 an iteration: 8 are left after two iterations, enough for 4 more.
    Fixture x;
    x.module.counting = true;
    x.module.left = 12;
    LoopSkipper s = x.skipper();
    auto loop = s.enter(x.body(), 10, x.cycle);
    x.work();
    x.pass();
    s.atIterationEnd(*loop, 10, x.cycle, x.cycle);
    x.work();
    x.pass();
    const LoopSkipper::Skip skip = s.atIterationEnd(*loop, 9, x.cycle, x.cycle);
    CHECK(skip.iterations == 4);
    s.skip(*loop, skip, x.cycle + skip.cycles);
    CHECK(x.module.left == 0); // 8 − 4 × 2, counted down modulo 2^64
}

TEST_CASE("Loop skipper: a loop over links other IPUs share skips only at a barrier", "[fast-forward]")
{
    Fixture alone({Step{HostTransferStep{}}}), shared({Step{HostTransferStep{}}});
    LoopSkipper a = alone.skipper(kNothingObserved, false), s = shared.skipper(kNothingObserved, true);
    CHECK(alone.secondIteration(a) == 7);
    CHECK(shared.secondIteration(s) == 0);
}

TEST_CASE("Loop skipper: only iterations wholly outside the observed cycles are skipped", "[fast-forward]")
{
    // The second iteration ends at cycle 200; skipped ones would cover [200, 900).
    auto skipFrom200 = [](IPhaseObserver::CycleRange observed, uint64_t firstReady) {
        Fixture x;
        LoopSkipper s = x.skipper(observed);
        return x.secondIteration(s, firstReady);
    };
    CHECK(skipFrom200({450, 1000}, 200) == 2); // [200, 400) ends before 450
    CHECK(skipFrom200({150, 1000}, 200) == 0); // already inside
    CHECK(skipFrom200({10, 180}, 200) == 7);   // all after it
    CHECK(skipFrom200({10, 180}, 150) == 0);   // a tile ready at 150 starts its next compute inside it
    Fixture x;
    CHECK_FALSE(x.skipper({0, UINT64_MAX}).enter(x.body(), 10, 0)); // every cycle observed
}

TEST_CASE("Loop skipper: loops too short or with a call every N-th time are never followed", "[fast-forward]")
{
    Fixture x;
    CHECK_FALSE(x.skipper().enter(x.body(), 2, 0));
    CHECK(x.skipper().enter(x.body(), 3, 0));
    CallStep everySecond;
    everySecond.period = 2;
    Fixture periodic({Step{everySecond}});
    periodic.program.fragments.push_back({Step{ComputeStep{}}});
    CHECK_FALSE(periodic.skipper().enter(periodic.body(), 10, 0));
    Fixture everyTime({Step{CallStep{}}});
    everyTime.program.fragments.push_back({Step{ComputeStep{}}});
    CHECK(everyTime.skipper().enter(everyTime.body(), 10, 0));
}

TEST_CASE("Loop skipper: a loop ending at an external sync offers a skip and takes what the barrier grants", "[fast-forward]")
{
    // Each iteration: its work, arrival at the barrier 90 cycles in, release at 100.
    Fixture x({Step{ComputeStep{}}, Step{SyncStep{SyncKind::External}}});
    LoopSkipper s = x.skipper();
    auto loop = s.enter(x.body(), 10, x.cycle);
    x.work();
    CHECK_FALSE(s.offer(*loop, 10, 90, 90)); // nothing to compare with yet
    x.pass();
    CHECK(s.atIterationEnd(*loop, 10, x.cycle, x.cycle).iterations == 0); // an external sync inside: only a grant skips
    x.work();
    const auto offer = s.offer(*loop, 9, 190, 190);
    REQUIRE(offer);
    CHECK(offer->iterations == 7);
    CHECK(offer->period == 100);
    CHECK(offer->iterationStart == 100);
    CHECK(offer->barriers == 1);
    x.pass();
    SECTION("granted")
    {
        s.granted(7);
        CHECK(s.atIterationEnd(*loop, 9, x.cycle, x.cycle).iterations == 7);
    }
    SECTION("not granted")
    {
        s.granted(0);
        CHECK(s.atIterationEnd(*loop, 9, x.cycle, x.cycle).iterations == 0);
    }
    SECTION("arriving later than in the last iteration offers nothing")
    {
        s.granted(0);
        s.atIterationEnd(*loop, 9, x.cycle, x.cycle);
        x.work();
        CHECK_FALSE(s.offer(*loop, 8, x.cycle + 91, x.cycle + 91)); // 91 cycles in, not 90
    }
}
