// SPDX-License-Identifier: MIT
// The trace-size estimate a run prints before a large trace: about one event per program step
// each IPU runs.
#include "sim/run/Run.hpp"
#include "Simulate.hpp"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
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
