// SPDX-License-Identifier: MIT
#include "sim/cli/Cli.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/config/Schema.hpp"
#include "sim/engine/Simulation.hpp"
#include "sim/report/Summary.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <filesystem>
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
};

int runCommand(const RunOptions& o)
{
    Experiment e = buildExperiment(o.config, o.sets);
    const fs::path dir = o.out.empty() ? fs::path("out") / e.config.name : fs::path(o.out);
    fs::create_directories(dir);
    // The folder describes this run only: outputs of an earlier run go first.
    for (const char* f : {"summary.json", "trace.json", "oom_report.json"})
        fs::remove(dir / f);

    std::unique_ptr<ChromeTrace> trace;
    if (o.trace)
        trace = std::make_unique<ChromeTrace>((dir / "trace.json").string(), e.run.trace, e.system.ipu.clockHz,
                                              e.system.numIpus);
    Simulation sim(e, trace.get());
    if (!sim.fits()) {
        const auto report = report::oomReport(e, sim);
        report::writeFileAtomically((dir / "oom_report.json").string(), report.dump(1) + "\n");
        report::printOomReport(std::cerr, report);
        fmt::print(std::cerr, "out-of-memory report: {}\n", (dir / "oom_report.json").string());
        return kOutOfMemory;
    }
    const SimResult result = sim.run();
    const auto summary = report::summary(e, sim, result);
    report::writeFileAtomically((dir / "summary.json").string(), summary.dump(1) + "\n");
    if (trace)
        trace->commit();
    report::printSummary(std::cout, summary);
    fmt::print(std::cout, "  wrote        {}{}\n", (dir / "summary.json").string(),
               trace ? ", " + (dir / "trace.json").string() : std::string());
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
    auto* paramsCmd = app.add_subcommand("params", "list every parameter with default, unit and description");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) == 0 ? kOk : kUsage;
    }
    try {
        if (paramsCmd->parsed())
            return paramsCommand();
        return runCommand(run);
    } catch (const config::ConfigError& e) {
        fmt::print(std::cerr, "error: {}\n", e.what());
        return kBadInput;
    } catch (const fs::filesystem_error& e) {
        fmt::print(std::cerr, "error: {}\n", e.what());
        return kBadInput;
    } catch (const std::exception& e) {
        fmt::print(std::cerr, "internal error: {}\n", e.what());
        return kInternal;
    }
}

} // namespace ipusim::cli
