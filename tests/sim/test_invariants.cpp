// SPDX-License-Identifier: MIT
// Invariants over every shipped experiment config (each file under configs/ but the hardware
// descriptions, schemas, sweeps and validation suites), and over its inference phase: what the
// compiler emits must hold whatever the model.
#include "Simulate.hpp"

#include "models/memory/TileMemory.hpp"
#include "sim/engine/Experiment.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

using namespace ipusim;
namespace fs = std::filesystem;

namespace {

using test::kRoot;
using test::shippedExperiments;

/** Each compute set of the steps (and of the loops and fragments they hold). */
template <class Visit>
void forEachComputeSet(const std::vector<Step>& steps, const Visit& visit)
{
    for (const Step& step : steps) {
        if (const auto* c = std::get_if<ComputeStep>(&step.op))
            visit(*c);
        else if (const auto* r = std::get_if<RepeatStep>(&step.op))
            forEachComputeSet(r->body, visit);
    }
}

/** Every compute set is work for at least one tile: a compute set is emitted for an op with
 *  work, so one that no tile runs, or that costs nothing, lost its work on the way. */
void checkComputeSetsHaveWork(const Experiment& e, const std::string& what)
{
    for (const Program& program : e.schedule.programs) {
        auto check = [&](const ComputeStep& c) {
            uint64_t tiles = 0, busiest = 0;
            for (const auto& run : c.cycles.runs()) {
                if (run.value > 0)
                    tiles += run.count;
                busiest = std::max(busiest, run.value);
            }
            INFO(what << ", IPU " << program.ipu << ", compute set " << c.name);
            CHECK(tiles >= 1);
            CHECK(busiest > 0);
        };
        forEachComputeSet(program.steps, check);
        for (const auto& fragment : program.fragments)
            forEachComputeSet(fragment, check);
    }
}

/** The liveness view agrees with the memory accounting: the peak tile's curve reaches exactly
 *  its peak, and no step has more live on one tile than on the whole IPU. */
void checkLiveness(const Experiment& e, const std::string& what)
{
    for (const Program& program : e.schedule.programs) {
        const TileMemory memory(program, e.system.ipu);
        const uint32_t tile = memory.worstTiles(1).front();
        const auto onTile = memory.liveBytesByPoint(tile, program.numPoints);
        const auto onIpu = memory.liveBytesByPoint(std::nullopt, program.numPoints);
        INFO(what << ", IPU " << program.ipu);
        REQUIRE(onTile.size() == program.numPoints);
        CHECK(*std::max_element(onTile.begin(), onTile.end()) == memory.tiles()[tile].peak());
        for (std::size_t p = 0; p < onTile.size(); ++p)
            CHECK(onTile[p] <= onIpu[p]);
    }
}

/** The invariants above hold for a shipped config and its inference phase. */
void checkInvariants(const std::string& config)
{
    const config::LoadedConfig loaded = config::loadConfig(kRoot + "/" + config);
    const Experiment e = buildExperiment(loaded);
    checkComputeSetsHaveWork(e, config);
    checkLiveness(e, config);
    if (auto inference = inferencePhase(loaded)) {
        const Experiment i = buildExperiment(std::move(*inference));
        checkComputeSetsHaveWork(i, config + " (inference)");
        checkLiveness(i, config + " (inference)");
    }
}

} // namespace

TEST_CASE("Every compute set of every shipped config runs on a tile and costs cycles, liveness meets the peaks", "[sim][invariants]")
{
    const auto configs = shippedExperiments(test::Shipped::WithoutBundledModel);
    REQUIRE(configs.size() >= 28);
    for (const std::string& config : configs)
        checkInvariants(config);
}

TEST_CASE("Every compute set of every shipped config on a bundled model runs on a tile and costs cycles, liveness meets the peaks",
          "[sim][invariants][resnet]")
{
    SKIP_WITHOUT_BUNDLED_MODELS();
    const auto configs = shippedExperiments(test::Shipped::OnBundledModel);
    REQUIRE(configs.size() >= 5);
    for (const std::string& config : configs)
        checkInvariants(config);
}
