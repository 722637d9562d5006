// SPDX-License-Identifier: MIT
#include "sim/run/Run.hpp"

#include "models/common/SaturatingCycles.hpp"
#include "models/program/ScheduleCheck.hpp"
#include "models/reference/ReferenceEngine.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/engine/FitSearch.hpp"
#include "sim/engine/Interrupt.hpp"
#include "sim/engine/Simulation.hpp"
#include "sim/report/Summary.hpp"
#include "sim/run/ChildProcess.hpp"
#include "sim/run/TeeObserver.hpp"
#include "sim/trace/ChromeTrace.hpp"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <unistd.h>

namespace ipusim {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

double secondsSince(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/** One simulated phase (a run, or the inference phase after it). */
struct Phase
{
    bool outOfMemory = false;
    json summary;
    json oomReport;
    std::unique_ptr<ChromeTrace> trace; // committed once the whole run has succeeded
    double elaborateSeconds = 0;
};

/** The folder describes this run only: outputs of an earlier run (and of its inference phase)
 *  go before anything can fail, so a run stopped by bad input leaves none to be mistaken for
 *  its own. */
// What a run writes, in its folder and its inference phase's.
constexpr const char* kResultFiles[] = {"summary.json", "trace.json", "oom_report.json", "waves.vcd"};

void removeStaleOutputs(const fs::path& dir)
{
    if (dir.empty())
        return;
    for (const fs::path& d : {dir, dir / "inference"})
        for (const char* f : kResultFiles)
            fs::remove(d / f);
    if (fs::is_directory(dir / "inference") && fs::is_empty(dir / "inference"))
        fs::remove(dir / "inference");
}

/** Which run a folder's results belong to: the config file and its overrides. */
json runIdentity(const config::LoadedConfig& cfg)
{
    json identity = {{"config", fs::absolute(cfg.file).lexically_normal().string()}, {"set", cfg.sets}};
    if (!fs::is_regular_file(cfg.file)) // a document given in memory (a Python dict): its content
        identity["document"] = fmt::format("{:016x}", std::hash<std::string>{}(cfg.doc.dump()));
    return identity;
}

/** Takes `dir` for this run: a run never deletes another run's results (other config or other
 *  overrides, as DIR/run.json records them beside them) unless forced. */
void claimFolder(const fs::path& dir, const config::LoadedConfig& cfg, bool force)
{
    if (dir.empty())
        return;
    const fs::path record = dir / "run.json";
    const json mine = runIdentity(cfg);
    auto hasResults = [&] {
        for (const fs::path& d : {dir, dir / "inference"})
            for (const char* f : kResultFiles)
                if (fs::exists(d / f))
                    return true;
        return false;
    };
    // Results without a record (an older build's) are taken as this run's; a record that
    // cannot be read protects them like another run's.
    if (!force && fs::exists(record) && hasResults()) {
        const json theirs = json::parse(std::ifstream(record), nullptr, false);
        if (theirs != mine) {
            const bool known = theirs.is_object() && theirs.value("config", json()).is_string();
            throw config::ConfigError(
                cfg.file, "",
                fmt::format("{} holds the results of another run ({}): --force replaces them, --out names another folder", dir.string(),
                            !known ? "its run.json is not readable"
                                   : theirs.at("config").get<std::string>() +
                                         (theirs.value("set", json::array()).empty() ? " as it is" : " with " + theirs.at("set").dump())));
        }
    }
    removeStaleOutputs(dir);
    fs::remove(record);
}

// About 150 bytes an event in the JSON (measured: MNIST training, 16,775 events in 2.5 MB; the
// tutorial, 146 MB for the 930,150 estimated). Above half a million events (about 75 MB) a run
// says so before it starts.
constexpr uint64_t kTraceBytesPerEvent = 150, kLargeTraceEvents = 500000;

// The reference engine ticks a SystemC clock every cycle and both engines then record every
// phase: a run it cannot finish in reasonable time and memory is refused up front.
void requireShortEnoughForReference(const Experiment& e)
{
    constexpr uint64_t kMaxReferenceCycles = uint64_t(1) << 32, kMaxReferenceSteps = uint64_t(1) << 24;
    for (const auto& program : e.schedule.programs) {
        const CycleBound b = lowerBoundCycles(program);
        if (const uint64_t cycles = saturatingMul(e.run.hostCalls, b.cycles); cycles > kMaxReferenceCycles)
            throw config::ConfigError(e.config.file, "",
                                      fmt::format("IPU {} runs at least {} cycles (\"{}\"); the reference engine ticks every "
                                                  "cycle and takes runs of at most 2^32 = {}: use the fast engine",
                                                  program.ipu, cycles, b.step, kMaxReferenceCycles));
        if (const uint64_t steps = saturatingMul(e.run.hostCalls, stepsExecuted(program)); steps > kMaxReferenceSteps)
            throw config::ConfigError(e.config.file, "",
                                      fmt::format("IPU {} runs {} program steps; the reference engine records each one and takes runs "
                                                  "of at most 2^24 = {}: use the fast engine", program.ipu, steps, kMaxReferenceSteps));
    }
}

/** The fast engine must have seen exactly the reference engine's phases; the run's speed is
 *  then both engines' time together. */
void crossCheck(json& summary, const ReferenceResult& reference, const PhaseRecorder& fast, const SimResult& result)
{
    if (reference.deadlocked)
        throw std::logic_error("the reference engine deadlocked where the fast engine did not");
    if (const std::string diff = firstDifference(fast.byIpu(), reference.phases); !diff.empty())
        throw std::logic_error("the engines disagree: " + diff);
    auto& s = summary["simulator"];
    s["reference_wall_seconds"] = reference.wallSeconds;
    s["reference_cycles_ticked"] = reference.cyclesTicked;
    const double wall = s["wall_seconds"].get<double>() + reference.wallSeconds;
    s["wall_seconds"] = wall;
    s["simulated_cycles_per_wall_second"] = wall > 0 ? double(result.totalCycles) / wall : 0.0;
    s["tile_supersteps_per_wall_second"] = wall > 0 ? double(result.tileSupersteps) / wall : 0.0;
}

/** Stage balance beside each IPU's name, where the pipeline track shows it. */
void labelStages(ChromeTrace& trace, const json& summary)
{
    const json& pipeline = summary.at("pipeline");
    if (pipeline.is_null() || !pipeline.contains("ipu_work"))
        return;
    for (const auto& w : pipeline.at("ipu_work")) {
        std::string stages;
        for (const auto& st : pipeline.at("stages"))
            if (st.at("ipu") == w.at("ipu"))
                stages += fmt::format("{}{}", stages.empty() ? "" : "+", st.at("stage").get<int>());
        trace.label(w.at("ipu").get<uint32_t>(),
                    fmt::format("stage {}: {:.0f} cycles per micro-batch, {:.0f} % of the slowest IPU", stages,
                                w.at("cycles_per_micro_batch").get<double>(), 100 * w.at("share_of_slowest").get<double>()));
    }
}

/** What fits instead, for the out-of-memory report: a search that fails leaves its reason there,
 *  never the report unwritten (Ctrl-C still ends the run). */
json fitsWith(const Experiment& e)
{
    try {
        return searchFit(e);
    } catch (const Interrupted&) {
        throw;
    } catch (const std::exception& failed) {
        return {{"found", false}, {"checked", json::array()}, {"next", std::string("the search for what fits failed: ") + failed.what()}};
    }
}

Phase simulatePhase(const Experiment& e, const fs::path& dir, const RunOptions& o)
{
    // Elaborating, as timed: building the SystemC model (not the reference engine's run). A
    // compiled schedule was checked and its memory accounted as it was compiled; one built in
    // code is checked and accounted here first, so that a broken one never reaches the engines.
    const auto t0 = std::chrono::steady_clock::now();
    if (e.memory.empty())
        requireScheduleInvariants(e.schedule, e.system);
    if (!dir.empty())
        fs::create_directories(dir);
    Phase p;
    // Memory first: a program that does not fit ends the run before anything is elaborated,
    // traced or run on the reference engine.
    MemoryAccount memory = accountMemory(e);
    if (memory.firstOver) {
        p.outOfMemory = true;
        p.oomReport = report::oomReport(e, memory);
        if (o.searchFit) {
            if (isatty(STDERR_FILENO))
                fmt::print(stderr, "out of memory: compiling smaller variants of the config to find one that fits...\n");
            p.oomReport["fits_with"] = fitsWith(e);
        }
        p.elaborateSeconds = secondsSince(t0); // a run that does not fit elaborates up to its report
        if (!dir.empty())
            report::writeFileAtomically((dir / "oom_report.json").string(), p.oomReport.dump(1) + "\n");
        return p;
    }
    p.elaborateSeconds = secondsSince(t0);
    if (o.trace && !dir.empty() && !e.run.trace.tiles && e.run.trace.fromCycle == 0 && e.run.trace.toCycle == UINT64_MAX)
        if (const uint64_t events = traceEventsEstimate(e); events > kLargeTraceEvents)
            fmt::print(stderr, "note: the trace will hold about {} events (~{} MB; each program step of each IPU is one): narrow it "
                               "with --set /run/trace/cycles=[first,last]\n", events, events * kTraceBytesPerEvent / 1000000);
    if (o.trace && !dir.empty())
        p.trace = std::make_unique<ChromeTrace>((dir / "trace.json").string(), e.run.trace, e.system.ipu.clockHz,
                                                uint32_t(e.schedule.programs.size()));
    // The reference engine counts every cycle first; the event-driven bookkeeping then runs
    // under an observer that must see the very same phases.
    std::optional<ReferenceResult> reference;
    PhaseRecorder recorder;
    if (o.engine == EngineKind::Reference) {
        requireShortEnoughForReference(e);
        reference = runReference(e.schedule, e.system, e.run.hostCalls, e.run.dataLoader);
    }
    TeeObserver tee(p.trace.get(), reference ? &recorder : nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    Simulation sim(e, reference || p.trace ? &tee : nullptr, o.vcd && !dir.empty() ? (dir / "waves.vcd").string() : std::string(),
                   std::move(memory.memory));
    if (o.everyIteration)
        sim.simulateEveryIteration();
    if (e.schedule.inference)
        sim.recordMicroBatchLatency();
    sim.endElaboration();
    p.elaborateSeconds += secondsSince(t1);
    const SimResult result = sim.run();
    p.summary = report::summary(e, sim, result);
    p.summary["simulator"]["engine"] = o.engine == EngineKind::Reference ? "reference" : "fast";
    if (reference)
        crossCheck(p.summary, *reference, recorder, result);
    if (p.trace)
        labelStages(*p.trace, p.summary);
    return p;
}

/** The inference phase as the child process runs it: its own outputs, its result as JSON. */
json inferenceInChild(const Experiment& inference, const fs::path& dir, RunOptions o)
{
    // The inference phase's config is derived from the user's (its micro-batch is theirs under
    // /inference): a variant's --set values would name pointers the user did not write.
    o.searchFit = false;
    Phase p = simulatePhase(inference, dir, o);
    if (p.outOfMemory)
        return {{"status", "out_of_memory"}, {"oom_report", p.oomReport}};
    if (!dir.empty())
        report::writeFileAtomically((dir / "summary.json").string(), p.summary.dump(1) + "\n");
    if (p.trace)
        p.trace->commit();
    return {{"status", "ok"}, {"summary", p.summary}};
}

/** The inference phase's figures beside the run's, and both together. */
void mergeInference(json& summary, const json& inference, const fs::path& inferenceDir)
{
    json brief = {{"total_cycles", inference.at("total_cycles")},
                  {"seconds", inference.at("seconds")},
                  {"samples", inference.at("samples")},
                  {"samples_per_second", inference.at("samples_per_second")}};
    if (!inferenceDir.empty())
        brief["summary"] = (inferenceDir / "summary.json").string();
    summary["inference"] = brief;
    summary["run_total"] = {{"cycles", summary.at("total_cycles").get<uint64_t>() + inference.at("total_cycles").get<uint64_t>()},
                            {"seconds", summary.at("seconds").get<double>() + inference.at("seconds").get<double>()}};
}

/** The child's result: its summary, or an out-of-memory outcome; failures are rethrown. */
void collectInference(const json& result, const fs::path& dir, RunOutcome& out)
{
    const std::string status = result.at("status");
    if (status == "invalid")
        throw config::ConfigError::preformatted(result.at("error").get<std::string>());
    if (status == "failed")
        throw std::runtime_error("the inference phase failed: " + result.at("error").get<std::string>());
    if (status == "out_of_memory" && out.status == RunOutcome::Status::Ok) {
        out.status = RunOutcome::Status::OutOfMemory;
        out.oomReport = result.at("oom_report");
        out.oomPhase = "inference";
        if (!dir.empty())
            out.files.push_back((dir / "oom_report.json").string());
    }
    if (status == "ok")
        out.inferenceSummary = result.at("summary");
}

/** run() once the folder holds no earlier outputs. */
RunOutcome runInCleanFolder(const Experiment& e, const RunOptions& o, CompileCache* compiled)
{
    const fs::path& dir = o.outDir;
    const fs::path inferenceDir = dir.empty() ? fs::path() : dir / "inference";
    // An inference phase after training runs in a child process started before anything is
    // elaborated (SystemC elaborates once per process); both phases use the two cores. Its bad
    // input is reported here, before either runs.
    std::unique_ptr<ChildProcess> child;
    if (const auto inferenceConfig = o.inferencePhase ? inferencePhase(e.config) : std::nullopt) {
        const Experiment inference = buildExperiment(*inferenceConfig, compiled);
        child = std::make_unique<ChildProcess>([&] { return inferenceInChild(inference, inferenceDir, o); });
    }
    Phase main = simulatePhase(e, dir, o);
    RunOutcome out;
    out.elaborateSeconds = main.elaborateSeconds;
    if (main.outOfMemory) {
        out.status = RunOutcome::Status::OutOfMemory;
        out.oomReport = main.oomReport;
        if (!dir.empty())
            out.files.push_back((dir / "oom_report.json").string());
    }
    if (child) {
        json inference = child->wait();
        InterruptGuard::check("interrupted: the run wrote no results"); // the child stopped too
        collectInference(std::move(inference), inferenceDir, out);
    }
    if (out.status != RunOutcome::Status::Ok)
        return out;
    out.summary = std::move(main.summary);
    if (!out.inferenceSummary.is_null())
        mergeInference(out.summary, out.inferenceSummary, inferenceDir);
    if (!dir.empty()) {
        report::writeFileAtomically((dir / "summary.json").string(), out.summary.dump(1) + "\n");
        out.files.push_back((dir / "summary.json").string());
    }
    if (main.trace) {
        main.trace->commit();
        out.files.push_back((dir / "trace.json").string());
    }
    if (o.vcd && !dir.empty())
        out.files.push_back((dir / "waves.vcd").string());
    return out;
}

} // namespace

RunOutcome run(const Experiment& e, const RunOptions& o, CompileCache* compiled)
{
    removeStaleOutputs(o.outDir);
    return runInCleanFolder(e, o, compiled);
}

RunOutcome run(RunRequest request)
{
    // Before building: a config that turns out bad leaves nothing of an earlier run behind.
    claimFolder(request.options.outDir, request.config, request.options.force);
    const auto t0 = std::chrono::steady_clock::now();
    const json identity = runIdentity(request.config);
    const Experiment e = buildExperiment(std::move(request.config), request.compiled);
    const double build = secondsSince(t0);
    RunOutcome out = runInCleanFolder(e, request.options, request.compiled);
    out.buildSeconds = build;
    if (!request.options.outDir.empty()) // beside the results: whose they are
        report::writeFileAtomically((request.options.outDir / "run.json").string(), identity.dump(1) + "\n");
    return out;
}

uint64_t traceEventsEstimate(const Experiment& e)
{
    uint64_t events = 0;
    for (const auto& program : e.schedule.programs)
        events = saturatingAdd(events, saturatingMul(e.run.hostCalls, stepsExecuted(program)));
    return events;
}

std::string oomSummaryLine(const json& report)
{
    const auto& m = report.at("ipus").at(0);
    return fmt::format("out of memory on IPU {}: {} tiles over {} bytes (peak {})", m.at("ipu").get<int>(),
                       m.at("tiles_over").get<uint64_t>(), m.at("tile_capacity_bytes").get<uint64_t>(),
                       m.at("peak").at("max").get<uint64_t>());
}

} // namespace ipusim
