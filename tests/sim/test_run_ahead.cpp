// SPDX-License-Identifier: MIT
// The fast engine's IPUs run ahead of SystemC's time through steps that meet nothing outside
// the IPU (compute sets, exchanges, internal syncs, calls) and let it catch up before anything
// else. With a VCD they step with SystemC's time instead (its signals change as time passes):
// both must simulate the same figures.
#include "Simulate.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

#include <unistd.h>

using namespace ipusim;
namespace fs = std::filesystem;

namespace {

/** The summary of `file` with `sets`, the simulator's own block (wall time, skips) left out:
 *  stepping with SystemC's time (a VCD written) or running ahead of it. */
nlohmann::json figures(const std::string& file, const std::vector<std::string>& sets, bool steppingWithTime)
{
    RunOptions o;
    if (steppingWithTime) {
        o.outDir = fs::temp_directory_path() / ("ipusim-run-ahead-" + std::to_string(::getpid()));
        o.vcd = true;
        o.force = true;
    }
    nlohmann::json summary = test::simulate(config::loadConfig(test::kRoot + "/" + file, sets), o);
    if (steppingWithTime) {
        CHECK(fs::file_size(o.outDir / "waves.vcd") > 0);
        fs::remove_all(o.outDir);
    }
    summary.erase("simulator");
    return summary;
}

} // namespace

TEST_CASE("IPUs running ahead of SystemC's time simulate what stepping with it does", "[sim][engine]")
{
    const std::vector<std::string> oneCall{"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1"};
    std::vector<std::string> pipelinedCall = oneCall;
    pipelinedCall.push_back("/run/gradient_accumulation=8");
    std::vector<std::string> loggedCall = oneCall;
    loggedCall.push_back("/run/gradient_accumulation=8");
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
        {"configs/schedules/two_ipu_copy.json", {}},               // copies over IPU-Links, an external sync
        {"configs/mnist/train.json", {"/run/gradient_accumulation=4", "/run/device_iterations=2"}}, // host transfers in loops
        {"configs/mnist/pipelined_pod16.json", pipelinedCall},   // a 4-IPU pipeline, replicated, all-reduced
        {"configs/mnist/pipelined_logged.json", loggedCall},     // host syncs, a slow host, loader workers
    };
    for (const auto& [file, sets] : cases) {
        INFO(file);
        const nlohmann::json ahead = figures(file, sets, false), stepping = figures(file, sets, true);
        CHECK(ahead.at("total_cycles").get<uint64_t>() > 0);
        CHECK(test::firstDifference(ahead, stepping) == "");
    }
}
