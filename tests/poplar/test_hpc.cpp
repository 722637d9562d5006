// SPDX-License-Identifier: MIT
// HPC programs in Poplar: the Jacobi stencil of tools/examples/poplar/jacobi over every tile of 1
// and 4 IPUs, its values against plain C++ and its cycles against a hand derivation.
#include "PoplarTest.hpp"

#include "Jacobi.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace poplar;
using poplar_test::summaryFigure;

namespace {

constexpr unsigned kTileCols = 92; // 1,472 tiles an IPU as 16 rows of 92
constexpr unsigned kBlock = 8;

struct JacobiRun
{
    Device device;
    Graph graph;
    jacobi::Stencil s;
    std::unique_ptr<Engine> engine;
    std::vector<float> result;

    JacobiRun(unsigned ipus, unsigned iterations)
        : device(poplar_test::device(ipus)), graph(device.getTarget())
    {
        graph.addCodelets(poplar_test::exampleCodelets("jacobi"));
        s = jacobi::build(graph, device.getTarget().getNumTiles() / kTileCols, kTileCols, kBlock, kBlock, iterations);
        graph.createHostWrite("a", s.a);
        graph.createHostWrite("b", s.b);
        graph.createHostRead("a", s.a);
        engine = std::make_unique<Engine>(graph, s.program);
        engine->load(device);
        const auto start = jacobi::initialGrid(s.rows(), s.cols());
        engine->writeTensor("a", start.data(), start.data() + start.size());
        engine->writeTensor("b", start.data(), start.data() + start.size());
        engine->run();
        result.resize(start.size());
        engine->readTensor("a", result.data(), result.data() + result.size());
    }
};

/** One iteration on one IPU, by hand: an internal sync (126); the halo exchange, whose busiest
 *  tiles (those inside the grid) send and receive 2w + 2h + 4 floats (rows above and below,
 *  columns left and right, a corner from each diagonal neighbour), one a cycle, after the 234
 *  cycles of latency; the compute phase, one vertex a tile: 6 x its estimate. */
constexpr std::uint64_t kIteration = 126 + (2 * kBlock + 2 * kBlock + 4) + 234 + 6 * (20 + 5 * kBlock * kBlock);

} // namespace

TEST_CASE("Poplar Jacobi stencil on 1,472 tiles: the plain C++ grid, and each iteration's cycles by hand")
{
    JacobiRun run(1, 10);
    CHECK(run.result == jacobi::reference(jacobi::initialGrid(run.s.rows(), run.s.cols()), run.s.rows(), run.s.cols(), 10));
    CHECK(run.engine->ipusimCycles() == 10 * kIteration);
    CHECK(summaryFigure(*run.engine, "/breakdown/compute") == 10 * 6 * (20 + 5 * kBlock * kBlock));
    CHECK(summaryFigure(*run.engine, "/breakdown/exchange") == 10 * ((2 * kBlock + 2 * kBlock + 4) + 234));
}

TEST_CASE("Poplar Jacobi stencil: 1,000 iterations timed alone are 1,000 times one")
{
    poplar_test::ScopedEnv timingOnly("IPUSIM_FUNCTIONAL", "0");
    JacobiRun run(1, 1000);
    CHECK(run.engine->ipusimCycles() == 1000 * kIteration);
}

TEST_CASE("Poplar Jacobi stencil on 4 IPUs: the plain C++ grid, halos over IPU-Links, the reference engine agrees")
{
    poplar_test::ScopedEnv reference("IPUSIM_ENGINE", "reference");
    JacobiRun run(4, 4);
    CHECK(run.result == jacobi::reference(jacobi::initialGrid(run.s.rows(), run.s.cols()), run.s.rows(), run.s.cols(), 4));
    // Across each of the 3 boundaries between IPUs, each way, an iteration: each of the 92 tiles
    // along it takes its whole halo row from the other IPU, w + 2 floats (its neighbour's row
    // and a point of each diagonal neighbour's, or of the grid's boundary column at an edge).
    const auto summary = nlohmann::json::parse(run.engine->ipusimSummary());
    std::uint64_t linkBytes = 0;
    for (const auto& link : summary.at("links"))
        if (link.at("kind") == "ipu_link")
            linkBytes += link.at("bytes").get<std::uint64_t>();
    CHECK(linkBytes == 4 * 3 * 2 * 92 * (kBlock + 2) * 4);
    CHECK(summaryFigure(*run.engine, "/breakdown/ipu_copy") > 0);
}
