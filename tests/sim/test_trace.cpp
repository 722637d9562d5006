// SPDX-License-Identifier: MIT
// Traces: the size estimate a run prints before a large one (about one event per program step
// each IPU runs), and windowed traces that skip loop iterations outside their window.
#include "sim/run/Run.hpp"
#include "Simulate.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <tuple>
#include <unistd.h>

using namespace ipusim;
using json = nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("Trace size: the estimate printed before a large trace is within 5 % of the events written", "[trace]")
{
    const fs::path dir = fs::temp_directory_path() / ("ipusim_trace_size_" + std::to_string(::getpid()));
    for (const char* config : {"configs/mnist/train.json", "configs/mnist/pipelined_2stage.json", "configs/schedules/superstep_loop.json"}) {
        INFO(config);
        const Experiment e = buildExperiment(test::kRoot + "/" + config, {"/run/dataset_samples=0", "/run/epochs=1"});
        RunOptions options;
        options.outDir = dir;
        options.trace = true;
        options.inferencePhase = false;
        run(e, options);
        std::ifstream in(dir / "trace.json");
        const json trace = json::parse(in);
        std::size_t events = 0;
        for (const auto& event : trace.at("traceEvents"))
            events += event.value("ph", std::string()) == "X"; // the phases, not track names
        CHECK(double(traceEventsEstimate(e)) == Approx(double(events)).epsilon(0.05));
    }
    fs::remove_all(dir);
}

namespace {

std::string fileText(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/** A trace windowed to [first, last] with loops skipping outside it against the same trace
 *  simulating every iteration: the same bytes, the same summary, and something skipped. */
void checkWindowedTrace(const std::string& config, std::vector<std::string> sets, uint64_t first, uint64_t last, const fs::path& dir)
{
    sets.push_back(fmt::format("/run/trace/cycles=[{},{}]", first, last));
    const Experiment e = buildExperiment(config, sets);
    auto traced = [&](bool everyIteration) {
        RunOptions options;
        options.outDir = dir;
        options.trace = true;
        options.inferencePhase = false;
        options.everyIteration = everyIteration;
        json summary = run(e, options).summary;
        const uint64_t skipped = summary.at("simulator").at("loop_iterations_skipped");
        summary.erase("simulator");
        return std::tuple{fileText(dir / "trace.json"), summary, skipped};
    };
    const auto [skipTrace, skipSummary, skipped] = traced(false);
    const auto [everyTrace, everySummary, none] = traced(true);
    CHECK(skipped > 0);
    CHECK(none == 0);
    CHECK(skipTrace == everyTrace);
    CHECK(skipSummary == everySummary);
}

} // namespace

TEST_CASE("Trace window: loops skip iterations outside it, and trace and summary stay byte-identical", "[trace][fast-forward]")
{
    const fs::path dir = fs::temp_directory_path() / ("ipusim_trace_window_" + std::to_string(::getpid()));
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases{
        {"configs/mnist/train.json", {}},                                  // loops without external syncs
        {"configs/mnist/pipelined_2stage.json", {"/run/host_calls=2"}},     // skips ExternalSync grants
        {"configs/mnist/pipelined_pod16.json", {"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=2"}},
        {"configs/bert/base_phase1_pod16.json", {"/run/gradient_accumulation=40", "/run/device_iterations=3"}},
    };
    for (const auto& [config, sets] : cases) {
        const uint64_t total = run(buildExperiment(test::kRoot + "/" + config, sets), RunOptions{}).summary.at("total_cycles");
        // A window in the middle, one at the start and one past the end.
        for (const auto& [first, last] : {std::pair{total / 3, total / 3 + total / 50}, std::pair{uint64_t(0), total / 50},
                                          std::pair{total + 1, total + 2}}) {
            INFO(config << ", window [" << first << ", " << last << "] of " << total << " cycles");
            checkWindowedTrace(test::kRoot + "/" + config, sets, first, last, dir);
        }
    }
    fs::remove_all(dir);
}

TEST_CASE("Trace window: tile spans of unaligned tiles just past the window are kept", "[trace][fast-forward]")
{
    // Each iteration: compute A (tile 0 100 cycles, tile 1 10), sync (126), compute B (tile 0 10,
    // tile 1 100): 326 cycles, and tile 0 ends an iteration 90 cycles before the IPU does, so
    // its next A starts before the iteration's end. A window ending just before an iteration's
    // end must not skip the next iteration.
    const fs::path dir = fs::temp_directory_path() / ("ipusim_trace_tiles_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const json doc = {
        {"system", {{"base", test::kRoot + "/configs/hardware/mk2.json"}}},
        {"workload", {{"kind", "schedule"}, {"steps", json::array({{{"op", "repeat"}, {"name", "loop"}, {"count", 50}, {"body", json::array({
            {{"op", "compute"}, {"name", "A"}, {"tiles", json::array({{{"tiles", {0, 0}}, {"cycles", 100}}, {{"tiles", {1, 1}}, {"cycles", 10}}})}},
            {{"op", "sync"}},
            {{"op", "compute"}, {"name", "B"}, {"tiles", json::array({{{"tiles", {0, 0}}, {"cycles", 10}}, {{"tiles", {1, 1}}, {"cycles", 100}}})}},
        })}}})}}}};
    const std::string config = (dir / "tiles.json").string();
    std::ofstream(config) << doc.dump();
    for (const auto& [first, last] : {std::pair{700, 1000}, std::pair{1000, 1180}, std::pair{1100, 1200}, std::pair{5000, 6000}}) {
        INFO("window [" << first << ", " << last << "]");
        checkWindowedTrace(config, {"/run/trace/tiles=[0,1]"}, uint64_t(first), uint64_t(last), dir / "out");
    }
    fs::remove_all(dir);
}
