// SPDX-License-Identifier: MIT
#pragma once
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/Experiment.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ipusim {

enum class EngineKind
{
    Fast,     // event-driven
    Reference // every cycle ticked first, then the fast engine must see the very same phases
};

/** How to run an experiment: which engine, what to write where. */
struct RunOptions
{
    EngineKind engine = EngineKind::Fast;
    /** Where summary.json, trace.json, waves.vcd or oom_report.json go (the inference phase's
     *  in its inference/ subfolder); empty: nothing is written (sweep points, tests). */
    std::filesystem::path outDir;
    bool trace = false;
    bool vcd = false;
    bool inferencePhase = true; // run the config's "inference" phase after training
    bool everyIteration = false; // never skip identical loop iterations (tests, benchmark)
    /** Replace results in outDir that another run (another config or other overrides) wrote. */
    bool force = false;
    /** Out of memory: compile variants of the config to find what fits (searchFit), for the
     *  report's "fits_with" (a command-line or Python run; not sweep points, to keep them fast,
     *  nor an inference phase, whose config the user did not write as it is). */
    bool searchFit = false;
};

/** One experiment to run: a loaded config and how to run it. */
struct RunRequest
{
    config::LoadedConfig config;
    RunOptions options;
    /** Schedules compiled ahead (a sweep worker's): the run and its inference phase take
     *  theirs from here when it holds them. */
    CompileCache* compiled = nullptr;
};

/** What a run produced. */
struct RunOutcome
{
    /** Ok: `summary` is summary.json, with the inference phase's figures under "inference" and
     *  "run_total". OutOfMemory: `oomReport` says which IPU, which tiles, what is live. */
    enum class Status { Ok, OutOfMemory } status = Status::Ok;
    nlohmann::json summary;
    nlohmann::json oomReport;
    std::string oomPhase;            // "" (the run itself) or "inference"
    nlohmann::json inferenceSummary; // null when the config has no inference phase
    std::vector<std::string> files;  // what was written, in order
    double buildSeconds = 0;         // loading, decoding and compiling the config (checked, memory accounted)
    double elaborateSeconds = 0;     // building the SystemC model (out of memory: the report)
};

/** Runs one experiment: the memory check (out of memory is an outcome, not an error), the
 *  simulation on the chosen engine (with the reference engine, the fast engine's phases are
 *  checked against it), the inference phase (in a child process, alongside), the summary and
 *  the trace. Bad input throws config::ConfigError; an internal failure std::exception. The
 *  CLI, sweeps, validation, the benchmark and the tests all run experiments through here. */
RunOutcome run(RunRequest request);
/** The same for an experiment already built (tests that make schedules in code, sweep points);
 *  its inference phase takes its schedule from `compiled` when that holds it. */
RunOutcome run(const Experiment& experiment, const RunOptions& options, CompileCache* compiled = nullptr);

/** The events a trace of `experiment` holds, about: one per program step each IPU runs
 *  (tracing simulates every loop iteration). A run prints it before a large unwindowed trace. */
uint64_t traceEventsEstimate(const Experiment& experiment);

/** A one-line description of an out-of-memory outcome (sweep rows, validation). */
std::string oomSummaryLine(const nlohmann::json& oomReport);

} // namespace ipusim
