// SPDX-License-Identifier: MIT
// The Schedule's invariants: a well-formed schedule passes, and each broken invariant is named.
#include "models/program/ScheduleCheck.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/ExperimentSpec.hpp"
#include "sim/engine/Experiment.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;

namespace {

const std::string kRoot = IPUSIM_SOURCE_DIR;

std::string firstProblem(const Schedule& s, const SystemParams& system)
{
    const auto problems = checkSchedule(s, system);
    return problems.empty() ? "" : problems.front();
}

} // namespace

TEST_CASE("Schedule check: shipped schedules and compiled models hold every invariant", "[schedule]")
{
    for (const char* config : {"configs/schedules/two_ipu_copy.json", "configs/schedules/superstep_loop.json",
                               "configs/mnist/pipelined.json", "configs/mnist/phased_parallel.json", "configs/mnist/pipelined_pod16.json"}) {
        INFO(config);
        const Experiment e = buildExperiment(kRoot + "/" + config);
        CHECK(checkSchedule(e.schedule, e.system).empty());
    }
}

TEST_CASE("Schedule check: each broken invariant is named with its IPU and step", "[schedule]")
{
    const Experiment e = buildExperiment(kRoot + "/configs/schedules/two_ipu_copy.json");
    const SystemParams& sys = e.system;
    REQUIRE(e.schedule.programs.size() == 2);
    auto broken = [&](auto&& mutate) {
        Schedule s = e.schedule;
        mutate(s);
        return firstProblem(s, sys);
    };
    auto firstOf = [](Program& p, auto tag) -> decltype(tag)* {
        decltype(tag)* found = nullptr;
        forEachProgramStep(p, [&](Step& st) {
            if (!found)
                found = std::get_if<decltype(tag)>(&st.op);
        });
        return found;
    };
    CHECK(broken([](Schedule& s) { s.programs[1].ipu = 0; }) == "IPU 0: has more than one program");
    CHECK(broken([](Schedule& s) { s.programs[0].ipu = 9; }).find("IPU 9: its IPU is not one of the system's 4") == 0);
    CHECK(broken([&](Schedule& s) { firstOf(s.programs[0], ComputeStep{})->cycles.add(sys.ipu.tiles, 1, 5); })
              == "IPU 0: compute \"produce\": tiles up to 1473, the IPU has 1472");
    CHECK(broken([&](Schedule& s) { firstOf(s.programs[0], ComputeStep{})->vertices.add(sys.ipu.tiles, 1, 2); })
              .find("IPU 0: compute \"produce\" vertices: tiles up to 1473, the IPU has 1472") == 0);
    CHECK(broken([&](Schedule& s) {
              ComputeStep& c = *firstOf(s.programs[0], ComputeStep{});
              c.cycles = TileRuns<uint64_t>({{10, 5, 1}, {12, 5, 1}});
          }) == "IPU 0: compute \"produce\": tile runs overlap or are out of tile order");
    CHECK(broken([&](Schedule& s) {
              ComputeStep& c = *firstOf(s.programs[0], ComputeStep{});
              c.cycles = TileRuns<uint64_t>({{0, 10, 1}});
              c.vertices = TileRuns<uint32_t>({{5, 10, 2}}); // tiles 10 to 14 have vertices but no cycles
          }).find("compute \"produce\": vertices on tiles it gives no cycles") != std::string::npos);
    CHECK(broken([&](Schedule& s) {
              ComputeStep& c = *firstOf(s.programs[0], ComputeStep{});
              c.cycles = TileRuns<uint64_t>({{0, 10, 1}});
              c.vertices = TileRuns<uint32_t>({{0, 10, 3}, {10, 4, 0}}); // no vertices beyond: allowed
          }).empty());
    CHECK(broken([&](Schedule& s) { firstOf(s.programs[0], IpuCopyStep{})->send.at(0).peer = 0; })
              .find("\" names IPU 0: expected another IPU of the system") != std::string::npos);
    CHECK(broken([&](Schedule& s) { firstOf(s.programs[0], IpuCopyStep{})->send.at(0).peer = 0; }).find("IPU 0: IPU copy \"") == 0);
    CHECK(broken([&](Schedule& s) { firstOf(s.programs[0], ComputeStep{})->point = 7; })
              .find("is program point 7, expected 0 (program order)") != std::string::npos);
    CHECK(broken([](Schedule& s) { s.programs[0].steps.push_back({CallStep{3}}); }) == "IPU 0: a call names fragment 3, the program has 0");
    CHECK(broken([](Schedule& s) {
              TensorAlloc t;
              t.name = "late";
              t.from = 0;
              t.to = 99;
              s.programs[0].tensors.push_back(t);
          }).find("tensor \"late\" lives from point 0 to 99") != std::string::npos);
    CHECK(broken([](Schedule& s) {
              CollectiveStep c;
              c.name = "ring";
              c.ring = {1, 2};
              c.point = s.programs[0].numPoints++;
              s.programs[0].steps.push_back({c});
          }) == "IPU 0: collective \"ring\": its ring must hold IPU 0 and each IPU once");
}

TEST_CASE("Schedule check: a program at a time, then the copies between them", "[schedule]")
{
    const Experiment e = buildExperiment(kRoot + "/configs/schedules/two_ipu_copy.json");
    REQUIRE(e.schedule.programs.size() == 2);
    ProgramChecker checker(e.system);
    CHECK(checker.check(e.schedule.programs[0]).empty()); // its copy's peer is yet to come: not checked here
    Program again = e.schedule.programs[0];
    CHECK(checker.check(again) == std::vector<std::string>{"IPU 0: has more than one program"});
    CHECK_THROWS_WITH(checker.require(again),
                      "the Schedule breaks an invariant the engines rely on: IPU 0: has more than one program");
    CHECK(checker.check(e.schedule.programs[1]).empty());
    CHECK(checkCopyPairs(e.schedule).empty());
    Schedule first;
    first.programs = {e.schedule.programs[0]};
    const auto unpaired = checkCopyPairs(first);
    REQUIRE(unpaired.size() == 1);
    CHECK(unpaired[0].find("IPU 0: IPU copy \"") == 0);
    CHECK(unpaired[0].find("sends to IPU 1, whose program receives nothing from IPU 0") != std::string::npos);
}

TEST_CASE("Schedule check: steps sharing tile runs (identical layers) are each checked", "[schedule]")
{
    SystemParams sys;
    sys.numIpus = 1;
    Program p;
    ComputeStep a;
    a.name = "layer0";
    a.cycles.add(0, 4, 10);
    a.vertices.add(0, 4, 1);
    ComputeStep b = a; // shares a's runs, as a replayed layer does
    b.name = "layer1";
    b.point = 1;
    p.steps = {Step{a}, Step{b}};
    p.numPoints = 2;
    auto check = [&] {
        Schedule schedule;
        schedule.programs = {p};
        return checkSchedule(schedule, sys);
    };
    CHECK(check().empty());
    // Runs that break an invariant: each step sharing them is named.
    a.cycles = TileRuns<uint64_t>({{0, 4, 10}, {2, 4, 10}});
    b.cycles = a.cycles;
    b.vertices = TileRuns<uint32_t>({{0, 8, 1}});
    p.steps = {Step{a}, Step{b}};
    const auto problems = check();
    REQUIRE(problems.size() == 3);
    CHECK(problems[0] == "IPU 0: compute \"layer0\": tile runs overlap or are out of tile order");
    CHECK(problems[1] == "IPU 0: compute \"layer1\": tile runs overlap or are out of tile order");
    CHECK(problems[2] == "IPU 0: compute \"layer1\": vertices on tiles it gives no cycles");
}

TEST_CASE("Schedule: a program's lower bound is its longest compute step, loops multiplied, calls followed", "[schedule]")
{
    auto compute = [](const char* name, uint64_t cycles) {
        ComputeStep c;
        c.name = name;
        c.cycles.add(0, 4, cycles / 2);
        c.cycles.add(4, 1, cycles); // the busiest tile's
        return Step{c};
    };
    Program p;
    p.fragments.push_back({compute("stage.fwd", 700), compute("stage.bwd", 900)});
    p.fragments.push_back({compute("update", 5000)});
    RepeatStep loop;
    loop.name = "gradient accumulation";
    loop.count = 3;
    loop.body = {Step{CallStep{0}}, Step{CallStep{0}}}; // one fragment from two call sites: 900 a call
    p.steps = {compute("first", 2000), Step{loop}, Step{CallStep{1, -1, false, 2}}};
    // The loop: 3 x 900 = 2,700 cycles, over "first"'s 2,000; the update fragment runs every
    // second call only, so it is no bound (a call that may not run).
    const CycleBound b = lowerBoundCycles(p);
    CHECK(b.cycles == 2700);
    CHECK(b.step == "gradient accumulation");
    p.steps.push_back(Step{CallStep{1}});
    CHECK(lowerBoundCycles(p).cycles == 5000);
    CHECK(lowerBoundCycles(p).step == "update");
}
