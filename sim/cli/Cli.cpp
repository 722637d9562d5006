// SPDX-License-Identifier: MIT
#include "sim/cli/Cli.hpp"

#include "models/reference/ReferenceEngine.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/Schema.hpp"
#include "sim/engine/Simulation.hpp"
#include "sim/trace/ChromeTrace.hpp"
#include "sim/report/Summary.hpp"
#include "sim/cli/MpiSweep.hpp"
#include "sim/sweep/Sweep.hpp"
#include "sim/sweep/Validate.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <sys/wait.h>
#include <unistd.h>
#include <iostream>

namespace ipusim::cli {
namespace {

namespace fs = std::filesystem;

struct RunOptions
{
    std::string config;
    std::string out;
    std::vector<std::string> sets;
    bool trace = false;
    bool vcd = false;
    std::string engine = "fast";
};

/** Sends every phase to two observers (the trace and the reference check). */
class TeeObserver : public IPhaseObserver
{
public:
    TeeObserver(IPhaseObserver* a, IPhaseObserver* b) : m_a(a), m_b(b) {}
    void phase(uint32_t ipu, PhaseKind kind, const std::string& name, uint64_t start, uint64_t end, uint64_t it) override
    {
        for (auto* o : {m_a, m_b})
            if (o)
                o->phase(ipu, kind, name, start, end, it);
    }
    [[nodiscard]] bool tileWindow(uint32_t ipu, uint32_t& first, uint32_t& last, uint64_t& from, uint64_t& to) const override
    {
        return m_a && m_a->tileWindow(ipu, first, last, from, to);
    }
    void tileSpan(uint32_t ipu, uint32_t tile, const std::string& name, uint64_t start, uint64_t end) override
    {
        if (m_a)
            m_a->tileSpan(ipu, tile, name, start, end);
    }
    void fragmentSpan(uint32_t ipu, const std::string& fragment, uint64_t start, uint64_t end, int64_t mb) override
    {
        if (m_a)
            m_a->fragmentSpan(ipu, fragment, start, end, mb);
    }
    void linkSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end, uint64_t bytes) override
    {
        if (m_a)
            m_a->linkSpan(track, name, start, end, bytes);
    }

private:
    IPhaseObserver* m_a;
    IPhaseObserver* m_b;
};

// Maps every failure to its exit code with a one-line message.
template <class F>
int guarded(F&& body)
{
    try {
        return body();
    } catch (const config::ConfigError& e) {
        fmt::print(std::cerr, "error: {}\n", e.what());
        return kBadInput;
    } catch (const fs::filesystem_error& e) {
        fmt::print(std::cerr, "error: {}\n", e.what());
        return kBadInput;
    } catch (const Interrupted& e) {
        fmt::print(std::cerr, "{}\n", e.what());
        return 130;
    } catch (const std::exception& e) {
        fmt::print(std::cerr, "internal error: {}\n", e.what());
        return kInternal;
    }
}

struct PhaseResult
{
    int code = kOk;
    nlohmann::json summary;
    std::unique_ptr<ChromeTrace> trace;
};

// Simulates one experiment; on success the summary is returned, not yet written.
PhaseResult runPhase(const Experiment& e, const fs::path& dir, bool withTrace, bool withVcd, const std::string& engine = "fast")
{
    fs::create_directories(dir);
    // The folder describes this run only: outputs of an earlier run go first.
    for (const char* f : {"summary.json", "trace.json", "oom_report.json", "waves.vcd"})
        fs::remove(dir / f);
    PhaseResult r;
    if (withTrace)
        r.trace = std::make_unique<ChromeTrace>((dir / "trace.json").string(), e.run.trace, e.system.ipu.clockHz,
                                                uint32_t(e.schedule.programs.size()));
    // The reference engine counts every cycle first; the event-driven bookkeeping then runs
    // under an observer that must see the very same phases, and reports them.
    std::optional<ReferenceResult> reference;
    PhaseRecorder recorder;
    if (engine == "reference")
        reference = runReference(e.schedule, e.system, e.run.hostCalls);
    TeeObserver tee(r.trace.get(), reference ? &recorder : nullptr);
    Simulation sim(e, reference || r.trace ? &tee : nullptr, withVcd ? (dir / "waves.vcd").string() : std::string());
    if (!sim.fits()) {
        const auto report = report::oomReport(e, sim);
        report::writeFileAtomically((dir / "oom_report.json").string(), report.dump(1) + "\n");
        report::printOomReport(std::cerr, report);
        fmt::print(std::cerr, "out-of-memory report: {}\n", (dir / "oom_report.json").string());
        r.code = kOutOfMemory;
        return r;
    }
    const SimResult result = sim.run();
    r.summary = report::summary(e, sim, result);
    r.summary["simulator"]["engine"] = engine;
    if (reference) {
        if (reference->deadlocked)
            throw std::logic_error("the reference engine deadlocked where the fast engine did not");
        if (const std::string diff = firstDifference(recorder.byIpu(), reference->phases); !diff.empty())
            throw std::logic_error("the engines disagree: " + diff);
        r.summary["simulator"]["reference_wall_seconds"] = reference->wallSeconds;
        r.summary["simulator"]["reference_cycles_ticked"] = reference->cyclesTicked;
        // The run's speed is both engines' time together.
        auto& s = r.summary["simulator"];
        const double wall = s["wall_seconds"].get<double>() + reference->wallSeconds;
        s["wall_seconds"] = wall;
        s["simulated_cycles_per_wall_second"] = wall > 0 ? double(result.totalCycles) / wall : 0.0;
        s["tile_supersteps_per_wall_second"] = wall > 0 ? double(result.tileSupersteps) / wall : 0.0;
    }
    if (r.trace && !r.summary.at("pipeline").is_null() && r.summary.at("pipeline").contains("ipu_work"))
        for (const auto& w : r.summary.at("pipeline").at("ipu_work")) {
            // Stage balance beside each IPU's name, where the pipeline track shows it.
            std::string stages;
            for (const auto& st : r.summary.at("pipeline").at("stages"))
                if (st.at("ipu") == w.at("ipu"))
                    stages += fmt::format("{}{}", stages.empty() ? "" : "+", st.at("stage").get<int>());
            r.trace->label(w.at("ipu").get<uint32_t>(),
                           fmt::format("stage {}: {:.0f} cycles per micro-batch, {:.0f} % of the slowest IPU", stages,
                                       w.at("cycles_per_micro_batch").get<double>(), 100 * w.at("share_of_slowest").get<double>()));
        }
    return r;
}

int runCommand(const RunOptions& o)
{
    Experiment e = buildExperiment(o.config, o.sets);
    const fs::path dir = o.out.empty() ? fs::path("out") / e.config.name : fs::path(o.out);
    fs::create_directories(dir);

    // An inference phase after training runs in a child process started before anything is
    // elaborated (SystemC elaborates once per process); both phases use the two cores.
    const auto inference = inferencePhase(e.config);
    const fs::path infDir = dir / "inference";
    pid_t child = -1;
    if (inference) {
        Experiment ie = buildExperiment(*inference); // bad input is reported here, in the parent
        std::cout.flush();
        std::fflush(stderr);
        child = fork();
        if (child == 0) {
            const int code = guarded([&] {
                PhaseResult r = runPhase(ie, infDir, o.trace, o.vcd, o.engine);
                if (r.code != kOk)
                    return r.code;
                report::writeFileAtomically((infDir / "summary.json").string(), r.summary.dump(1) + "\n");
                if (r.trace)
                    r.trace->commit();
                return int(kOk);
            });
            std::fflush(nullptr);
            _exit(code);
        }
        if (child < 0)
            throw std::runtime_error("fork failed for the inference phase");
    }
    PhaseResult r = runPhase(e, dir, o.trace, o.vcd, o.engine);
    nlohmann::json inferenceSummary;
    if (child > 0) {
        int status = 0;
        waitpid(child, &status, 0);
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : kInternal;
        if (code != kOk && r.code == kOk) {
            fmt::print(std::cerr, "error: the inference phase failed (exit {}); see {}\n", code, infDir.string());
            return code;
        }
        if (code == kOk)
            inferenceSummary = config::readJsonFile((infDir / "summary.json").string());
    }
    if (r.code != kOk)
        return r.code;
    if (!inferenceSummary.is_null()) {
        r.summary["inference"] = {{"summary", (infDir / "summary.json").string()},
                                  {"total_cycles", inferenceSummary.at("total_cycles")},
                                  {"seconds", inferenceSummary.at("seconds")},
                                  {"samples", inferenceSummary.at("samples")},
                                  {"samples_per_second", inferenceSummary.at("samples_per_second")}};
        r.summary["run_total"] = {{"cycles", r.summary.at("total_cycles").get<uint64_t>() + inferenceSummary.at("total_cycles").get<uint64_t>()},
                                  {"seconds", r.summary.at("seconds").get<double>() + inferenceSummary.at("seconds").get<double>()}};
    }
    report::writeFileAtomically((dir / "summary.json").string(), r.summary.dump(1) + "\n");
    if (r.trace)
        r.trace->commit();
    report::printSummary(std::cout, r.summary);
    fmt::print(std::cout, "  wrote        {}{}{}\n", (dir / "summary.json").string(),
               r.trace ? ", " + (dir / "trace.json").string() : std::string(), o.vcd ? ", " + (dir / "waves.vcd").string() : std::string());
    if (!inferenceSummary.is_null()) {
        fmt::print(std::cout, "\nthen inference:\n");
        report::printSummary(std::cout, inferenceSummary);
        fmt::print(std::cout, "  wrote        {}\n", (infDir / "summary.json").string());
    }
    return kOk;
}

int paramsCommand()
{
    const auto params = config::Schema::instance().params();
    std::size_t w = 0;
    for (const auto& p : params)
        w = std::max(w, p.pointer.size());
    fmt::print("{:<{}}  {:>12}  {:<12}  {}\n", "parameter", w, "default", "unit", "description [source]");
    for (const auto& p : params)
        fmt::print("{:<{}}  {:>12}  {:<12}  {}{}\n", p.pointer, w, p.defaultValue, p.unit, p.description,
                   p.source.empty() ? "" : " [" + p.source + "]");
    return kOk;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"ipusim: cycle-accurate simulator of Graphcore Mk2 IPU systems"};
    app.require_subcommand(1);
    RunOptions run;
    auto* runCmd = app.add_subcommand("run", "simulate one experiment config; prints a summary, writes DIR/summary.json");
    runCmd->add_option("config", run.config, "experiment JSON (see configs/)")->required();
    runCmd->add_option("--out", run.out, "output folder (default out/<config name>)");
    runCmd->add_option("--set", run.sets, "override a value: /json/pointer=value (repeatable)");
    runCmd->add_flag("--trace", run.trace, "also write DIR/trace.json (Chrome/Perfetto trace)");
    runCmd->add_flag("--vcd", run.vcd, "also write DIR/waves.vcd: each IPU's activity and IPU-Link bytes (waveform viewers)");
    runCmd->add_option("--engine", run.engine,
                       "fast (event-driven, default) or reference (every cycle ticked; small systems and short schedules: "
                       "the same outputs, checked phase by phase)")
        ->check(CLI::IsMember({"fast", "reference"}));
    auto* paramsCmd = app.add_subcommand("params", "list every parameter with default, unit and description");
    std::string sweepFile;
    SweepOptions sweepOptions;
    auto* sweepCmd = app.add_subcommand("sweep", "run every point of a sweep (one process each); rows go to DIR/results.csv and .jsonl");
    sweepCmd->add_option("sweep", sweepFile, "sweep JSON (see configs/sweeps/)")->required();
    sweepCmd->add_option("-j,--jobs", sweepOptions.jobs, "points simulated at once")->check(CLI::Range(1u, 256u));
    sweepCmd->add_option("--out", sweepOptions.out, "output folder (default out/sweeps/<sweep name>)");
    sweepCmd->add_flag("--resume", sweepOptions.resume, "run only the points missing from DIR/results.jsonl");
    std::string validateFile;
    unsigned validateJobs = 1;
    auto* validateCmd = app.add_subcommand("validate", "compare simulated metrics with expected values; exit 6 if any is off");
    validateCmd->add_option("file", validateFile, "validation JSON (see configs/validation/)")->required();
    validateCmd->add_option("-j,--jobs", validateJobs, "cases simulated at once")->check(CLI::Range(1u, 256u));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? kOk : kUsage;
    }
    return guarded([&] {
        if (paramsCmd->parsed())
            return paramsCommand();
        if (sweepCmd->parsed()) {
            const Sweep sweep = Sweep::load(sweepFile);
            if (launchedByMpi()) {
                const std::size_t failed = runSweepMpi(argc, argv, sweep, sweepOptions);
                return failed ? int(kSweepFailures) : int(kOk);
            }
            const std::size_t failed = runSweep(sweep, sweepOptions);
            fmt::print("{}: {} points, {} failed; results in {}\n", sweep.name, sweep.points.size(), failed,
                       sweepOptions.out.empty() ? "out/sweeps/" + sweep.name : sweepOptions.out);
            return failed ? int(kSweepFailures) : int(kOk);
        }
        if (validateCmd->parsed())
            return runValidation(validateFile, validateJobs, std::cout) ? int(kOk) : int(kValidationFailed);
        return runCommand(run);
    });
}

} // namespace ipusim::cli
