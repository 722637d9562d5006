// SPDX-License-Identifier: MIT
#include "sim/cli/Cli.hpp"

#include "sim/cli/MpiSweep.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/Schema.hpp"
#include "sim/engine/CompiledConfig.hpp"
#include "sim/engine/Interrupt.hpp"
#include "sim/report/OpTable.hpp"
#include "sim/report/Summary.hpp"
#include "sim/run/Run.hpp"
#include "sim/sweep/Sweep.hpp"
#include "sim/sweep/Validate.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>
#include <iostream>

namespace ipusim::cli {
namespace {

namespace fs = std::filesystem;

struct RunCommandOptions
{
    std::string config;
    std::string out;
    std::vector<std::string> sets;
    bool trace = false;
    bool vcd = false;
    bool force = false;
    std::string engine = "fast";
};

/** out/<name> for a config as it is, out/<name>-<8 hex digits of its overrides> for a variant,
 *  so a --set run never replaces the baseline's results. FNV-1a: the same name on every machine. */
fs::path defaultOutDir(const config::LoadedConfig& cfg)
{
    if (cfg.sets.empty())
        return fs::path("out") / cfg.name;
    uint64_t h = 1469598103934665603ull;
    for (const auto& s : cfg.sets)
        for (unsigned char c : s + '\n')
            h = (h ^ c) * 1099511628211ull;
    return fs::path("out") / fmt::format("{}-{:08x}", cfg.name, uint32_t(h ^ (h >> 32)));
}

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

void printOutOfMemory(const RunOutcome& r)
{
    report::printOomReport(std::cerr, r.oomReport);
    if (!r.files.empty())
        fmt::print(std::cerr, "out-of-memory report: {}\n", r.files.back());
    if (r.oomPhase == "inference")
        fmt::print(std::cerr, "error: the inference phase does not fit\n");
}

int runCommand(const RunCommandOptions& o)
{
    const InterruptGuard guard; // Ctrl-C unwinds: no temporary trace or waveform stays behind
    RunRequest request{config::loadConfig(o.config, o.sets), {}};
    for (const auto& note : config::deprecationNotes(request.config))
        fmt::print(std::cerr, "note: {}\n", note);
    RunOptions& options = request.options;
    options.outDir = o.out.empty() ? defaultOutDir(request.config) : fs::path(o.out);
    options.force = o.force;
    options.searchFit = true;
    options.trace = o.trace;
    options.vcd = o.vcd;
    options.engine = o.engine == "reference" ? EngineKind::Reference : EngineKind::Fast;
    const RunOutcome r = run(std::move(request));
    if (r.status == RunOutcome::Status::OutOfMemory) {
        printOutOfMemory(r);
        return kOutOfMemory;
    }
    report::printSummary(std::cout, r.summary);
    fmt::print(std::cout, "  wrote        {}\n", fmt::join(r.files, ", "));
    if (!r.inferenceSummary.is_null()) {
        fmt::print(std::cout, "\nthen inference:\n");
        report::printSummary(std::cout, r.inferenceSummary);
        fmt::print(std::cout, "  wrote        {}\n", r.summary.at("inference").at("summary").get<std::string>());
    }
    return kOk;
}

struct CompileCommandOptions
{
    std::string config;
    std::string out;
    std::vector<std::string> sets;
};

// Steps and tensors of a compiled Schedule, loop bodies and fragments once, for the report line.
std::pair<std::size_t, std::size_t> countStepsAndTensors(const Schedule& schedule)
{
    std::size_t steps = 0, tensors = 0;
    for (const auto& p : schedule.programs) {
        forEachProgramStep(p, [&](const Step&) { ++steps; });
        tensors += p.tensors.size();
    }
    return {steps, tensors};
}

int compileCommand(const CompileCommandOptions& o)
{
    config::LoadedConfig cfg = config::loadConfig(o.config, o.sets);
    for (const auto& note : config::deprecationNotes(cfg))
        fmt::print(std::cerr, "note: {}\n", note);
    // Every IPU, even after one that does not fit: the Schedule is written whole (running it
    // reports the first that does not fit). Compiling checked every program and the copies
    // between them, so what is written reads back.
    const Experiment e = buildExperiment(std::move(cfg), nullptr, false);
    if (const MemoryAccount memory = accountMemory(e); memory.firstOver)
        fmt::print(std::cerr, "note: {}: running it ends with the out-of-memory report\n",
                   oomSummaryLine(report::oomReport(e, memory)));
    const fs::path out = o.out.empty() ? defaultOutDir(e.config) / "compiled.json" : fs::path(o.out);
    if (out.has_parent_path())
        fs::create_directories(out.parent_path());
    report::writeFileAtomically(out.string(), compiledConfigText(compiledConfig(e)));
    const auto [steps, tensors] = countStepsAndTensors(e.schedule);
    const std::size_t ipus = e.schedule.programs.size();
    fmt::print("{}: compiled for {} IPU{}: {} steps, {} tensors\n", e.config.name, ipus, ipus == 1 ? "" : "s", steps, tensors);
    fmt::print("  wrote        {}  (simulate it with: ipusim run {})\n", out.string(), out.string());
    return kOk;
}

int paramsCommand(const std::string& filter)
{
    std::vector<config::Schema::Param> params;
    for (auto& p : config::Schema::instance().params())
        if (p.pointer.find(filter) != std::string::npos)
            params.push_back(std::move(p));
    if (params.empty())
        throw config::ConfigError("params", filter, "no parameter's pointer contains this (try /system, /run or /workload(bert))");
    std::size_t w = 0;
    for (const auto& p : params)
        w = std::max(w, p.pointer.size());
    fmt::print("{:<{}}  {:>12}  {:<12}  {}\n", "parameter", w, "default", "unit", "description (accepted values) [source]");
    for (const auto& p : params) {
        const std::string range = p.range.size() > 80 ? p.range.substr(0, 77) + "..." : p.range;
        std::string text = p.description;
        if (!range.empty())
            text += (text.empty() ? "(" : " (") + range + ")";
        fmt::print("{:<{}}  {:>12}  {:<12}  {}{}\n", p.pointer, w, p.defaultValue, p.unit, text, p.source.empty() ? "" : " [" + p.source + "]");
    }
    fmt::print("\n[ipu-facts.md §n]: configs/hardware/ipu-facts.md, section n, gives the value's public source and evidence.\n");
    return kOk;
}

} // namespace

int main(int argc, char** argv)
{
    CLI::App app{"ipusim: cycle-accurate simulator of Graphcore Mk2 IPU systems"};
    app.require_subcommand(1);
    RunCommandOptions run;
    auto* runCmd = app.add_subcommand("run", "simulate one experiment config; prints a summary, writes DIR/summary.json");
    runCmd->add_option("config", run.config, "experiment JSON (see configs/)")->required();
    runCmd->add_option("--out", run.out, "output folder (default out/<config name>, or out/<config name>-<hash of the --set values>)");
    runCmd->add_flag("--force", run.force, "replace results in the output folder that another config or other --set values wrote");
    runCmd->add_option("--set", run.sets, "override a value: /json/pointer=value (repeatable)");
    runCmd->add_flag("--trace", run.trace, "also write DIR/trace.json (Chrome/Perfetto trace)");
    runCmd->add_flag("--vcd", run.vcd, "also write DIR/waves.vcd: each IPU's activity and IPU-Link bytes (waveform viewers)");
    runCmd->add_option("--engine", run.engine,
                       "fast (event-driven, default) or reference (every cycle ticked; small systems and short schedules: "
                       "the same outputs, checked phase by phase)")
        ->check(CLI::IsMember({"fast", "reference"}));
    CompileCommandOptions compile;
    auto* compileCmd = app.add_subcommand("compile", "compile a config's workload; writes a config that simulates its Schedule as a "
                                                     "\"schedule\" workload (default out/<config name>/compiled.json)");
    compileCmd->add_option("config", compile.config, "experiment JSON (see configs/)")->required();
    compileCmd->add_option("-o,--out", compile.out, "the file to write");
    compileCmd->add_option("--set", compile.sets, "override a value: /json/pointer=value (repeatable)");
    auto* paramsCmd = app.add_subcommand("params", "list every key a config takes, with default, unit, accepted values and description");
    std::string paramsFilter;
    paramsCmd->add_option("filter", paramsFilter, "only keys whose pointer contains this (e.g. /run/trace, /workload(bert))");
    auto* opsCmd = app.add_subcommand("ops", "print the op table as Markdown: each ONNX op imported, the graph ops it becomes, the "
                                             "vertices they compile to (each compiled in a probe) and where their cycles come from");
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
            return paramsCommand(paramsFilter);
        if (compileCmd->parsed())
            return compileCommand(compile);
        if (opsCmd->parsed()) {
            fmt::print("{}", opTableMarkdown());
            return int(kOk);
        }
        if (sweepCmd->parsed()) {
            const Sweep sweep = Sweep::load(sweepFile);
            const std::optional<SweepTally> tally =
                launchedByMpi() ? runSweepMpi(argc, argv, sweep, sweepOptions) : runSweep(sweep, sweepOptions);
            if (!tally) // an MPI worker rank: rank 0 prints the summary and gives the exit code
                return int(kOk);
            fmt::print("{}: {} points, {} failed, {} schedule{} compiled; results in {}\n", sweep.name, sweep.points.size(),
                       tally->failed, tally->compiled, tally->compiled == 1 ? "" : "s", resultsDir(sweep, sweepOptions));
            return tally->failed ? int(kSweepFailures) : int(kOk);
        }
        if (validateCmd->parsed())
            return runValidation(validateFile, validateJobs, std::cout) ? int(kOk) : int(kValidationFailed);
        return runCommand(run);
    });
}

} // namespace ipusim::cli
