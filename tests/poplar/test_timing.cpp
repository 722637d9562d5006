// SPDX-License-Identifier: MIT
// A Poplar program's cycles against a hand derivation from the costs it gave and the Mk2's
// figures (configs/hardware/mk2.json): internal sync 126 cycles; exchange latency
// 52 + 2 x (92 rows - 1) = 234 cycles, 4 bytes a cycle each way; 6 worker contexts.
#include "PoplarTest.hpp"

#include <poplar/Program.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

using namespace poplar;
using namespace poplar::program;
using poplar_test::codelet;
using poplar_test::summaryFigure;

namespace {

constexpr std::uint64_t kSync = 126;
constexpr std::uint64_t kExchangeLatency = 52 + 2 * (92 - 1);

/** `n` SumVertex vertices on tile 0, each priced `cycles` (a worker's), reading x[i] of tile `xTile`. */
struct SumsOnOneTile
{
    Device device = poplar_test::device();
    Graph graph{device.getTarget()};
    ComputeSet cs;
    Tensor x, y;
    SumsOnOneTile(const std::vector<std::uint64_t>& cycles, unsigned xTile)
    {
        graph.addCodelets(codelet("tutorial.cpp"));
        x = graph.addVariable(FLOAT, {cycles.size(), 4}, "x");
        y = graph.addVariable(FLOAT, {cycles.size()}, "y");
        graph.setTileMapping(x, xTile);
        graph.setTileMapping(y, 0);
        cs = graph.addComputeSet("sums");
        for (unsigned i = 0; i < cycles.size(); ++i) {
            VertexRef v = graph.addVertex(cs, "SumVertex", {{"in", x[i]}, {"out", y[i]}});
            graph.setTileMapping(v, 0);
            graph.setPerfEstimate(v, cycles[i]);
        }
    }
};

} // namespace

TEST_CASE("Poplar cycles: a compute set is a sync and 6 x the busiest worker's vertices")
{
    // Eight worker vertices on one tile, handed in order to the worker that frees first:
    // 10, 20, 30, 40, 50, 60 on workers 0..5, then 70 to worker 0 (free at 10) and 80 to
    // worker 1 (free at 20): the busiest is worker 1, 100 cycles.
    SumsOnOneTile p({10, 20, 30, 40, 50, 60, 70, 80}, 0);
    Engine engine(p.graph, Execute(p.cs));
    engine.load(p.device);
    engine.run();
    CHECK(summaryFigure(engine, "/breakdown/compute") == 6 * 100);
    CHECK(summaryFigure(engine, "/breakdown/sync") == kSync);
    CHECK(summaryFigure(engine, "/breakdown/exchange") == 0);
    CHECK(engine.ipusimCycles() == kSync + 6 * 100);
}

TEST_CASE("Poplar cycles: inputs on another tile are exchanged before the compute set")
{
    // Two vertices on tile 0 read 4 floats each from tile 1: 32 bytes, 8 cycles each way.
    SumsOnOneTile p({20, 20}, 1);
    Engine engine(p.graph, Execute(p.cs));
    engine.load(p.device);
    engine.run();
    CHECK(summaryFigure(engine, "/breakdown/exchange") == 32 / 4 + kExchangeLatency);
    CHECK(engine.ipusimCycles() == kSync + 32 / 4 + kExchangeLatency + 6 * 20);
}

TEST_CASE("Poplar cycles: a MultiVertex's estimate is the whole tile's, and setPerfEstimate beats a registered estimator")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    graph.addCodelets(codelet("tutorial.cpp"));
    Tensor x = graph.addVariable(FLOAT, {60}, "x");
    graph.setTileMapping(x, 0);
    ComputeSet cs = graph.addComputeSet("scale");
    // The registered estimator: 3 cycles an element, from the field's size as Poplar gives it.
    graph.registerPerfEstimator("ScaleInPlace", [](const VertexIntrospector& v, const Target&) {
        return VertexPerfEstimate(3 * v.getFieldInfo("x").size());
    });
    for (unsigned i = 0; i < 3; ++i) {
        VertexRef v = graph.addVertex(cs, "ScaleInPlace", {{"x", x.slice(20 * i, 20 * i + 20)}});
        graph.setInitialValue(v["scale"], 2.0f);
        graph.setTileMapping(v, 0);
        if (i == 2)
            graph.setPerfEstimate(v, 7);
    }
    Engine engine(graph, Execute(cs));
    engine.load(device);
    engine.run();
    CHECK(summaryFigure(engine, "/breakdown/compute") == 3 * 20 + 3 * 20 + 7);
}

TEST_CASE("Poplar cycles: a Repeat runs its body each time, simulated once and skipped")
{
    // Copy between tiles 0 and 1 (16 bytes: 4 cycles + latency) and back, in a loop.
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    Tensor a = graph.addVariable(INT, {4}, "a"), b = graph.addVariable(INT, {4}, "b");
    graph.setTileMapping(a, 0);
    graph.setTileMapping(b, 1);
    graph.createHostWrite("a", a);
    graph.createHostRead("b", b);
    const std::uint64_t copy = kSync + 16 / 4 + kExchangeLatency;
    for (unsigned count : {1u, 1000u}) {
        Engine engine(graph, Repeat(count, Sequence{Copy(a, b), Copy(b, a)}));
        engine.load(device);
        const std::vector<int> in{1, 2, 3, 4};
        engine.writeTensor("a", in.data(), in.data() + 4);
        engine.run();
        std::vector<int> out(4);
        engine.readTensor("b", out.data(), out.data() + 4);
        CHECK(out == in);
        CHECK(engine.ipusimCycles() == count * 2 * copy);
    }
}

TEST_CASE("Poplar cycles: IPUSIM_FUNCTIONAL=0 times the program without running its codelets")
{
    SumsOnOneTile p({10, 20}, 1);
    p.graph.createHostWrite("x", p.x);
    p.graph.createHostRead("y", p.y);
    std::uint64_t cycles[2] = {0, 0};
    for (int functional : {1, 0}) {
        poplar_test::ScopedEnv mode("IPUSIM_FUNCTIONAL", std::to_string(functional));
        Engine engine(p.graph, Execute(p.cs));
        engine.load(p.device);
        const std::vector<float> ones(8, 1.0f);
        engine.writeTensor("x", ones.data(), ones.data() + 8);
        engine.run();
        std::vector<float> y(2);
        engine.readTensor("y", y.data(), y.data() + 2);
        CHECK(y == std::vector<float>(2, functional ? 4.0f : 0.0f)); // not computed: as it was
        cycles[functional] = engine.ipusimCycles();
    }
    CHECK(cycles[0] == cycles[1]);
    CHECK(cycles[0] == kSync + 32 / 4 + kExchangeLatency + 6 * 20);
}

TEST_CASE("Poplar cycles: the reference engine agrees with the fast engine on a Poplar program")
{
    SumsOnOneTile p({10, 20, 30, 40, 50, 60, 70, 80}, 1);
    Engine fast(p.graph, Repeat(3, Execute(p.cs)));
    fast.load(p.device);
    fast.run();
    poplar_test::ScopedEnv reference("IPUSIM_ENGINE", "reference");
    Engine checked(p.graph, Repeat(3, Execute(p.cs)));
    checked.load(p.device);
    checked.run(); // throws where the two engines' phases differ
    CHECK(checked.ipusimCycles() == fast.ipusimCycles());
    CHECK(nlohmann::json::parse(checked.ipusimSummary()).at("simulator").at("engine") == "reference");
}

TEST_CASE("Poplar reports: IPUSIM_REPORT writes each run's summary, and the profile lists each step's cycles")
{
    SumsOnOneTile p({30}, 0);
    const auto dir = std::filesystem::current_path() / "poplar-report";
    std::filesystem::remove_all(dir);
    poplar_test::ScopedEnv report("IPUSIM_REPORT", dir.string());
    Engine engine(p.graph, Execute(p.cs));
    engine.load(p.device);
    engine.run();
    engine.run();
    // Named by the process's count of runs: two runs, two files, numbered one after the other.
    std::vector<unsigned> numbers;
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_directory()) { // the run's folder: its summary and trace
            CHECK(std::filesystem::exists(entry.path() / "summary.json"));
            CHECK(std::filesystem::exists(entry.path() / "trace.json"));
            continue;
        }
        CHECK_THAT(name, Catch::Matchers::Matches("run-[0-9]+\\.summary\\.json"));
        numbers.push_back(unsigned(std::stoul(name.substr(4))));
        names.push_back(name);
    }
    std::sort(numbers.begin(), numbers.end());
    REQUIRE(numbers.size() == 2);
    CHECK(numbers[1] == numbers[0] + 1);
    for (const auto& name : names) {
        std::ifstream in(dir / name);
        REQUIRE(in);
        const auto summary = nlohmann::json::parse(in);
        CHECK(summary.at("total_cycles") == kSync + 6 * 30);
        CHECK(summary.at("seconds").get<double>() == Approx((kSync + 6 * 30) / 1.33e9));
    }
    std::ostringstream profile;
    engine.printProfileSummary(profile);
    INFO(profile.str());
    CHECK(profile.str().find("Total cycles:           306") != std::string::npos);
    CHECK(profile.str().find("compute              1             180           180  sums") != std::string::npos);
}
