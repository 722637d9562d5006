// SPDX-License-Identifier: MIT
// ipusim-popc: popc's command line for codelets run on the host. Compiles a C++ codelet source
// into an object (".gp") that Graph::addCodelets loads:
//   ipusim-popc [-O3] [-I dir] [-D macro] [-target ipu2] codelets.cpp -o codelets.gp
#include "sim/poplar/CodeletCompiler.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>

int main(int argc, char** argv)
{
    CLI::App app{"Compiles a Poplar codelet for ipusim (run on the host, as Poplar's IPUModel runs codelets)", "ipusim-popc"};
    std::string source, output, optimisation, target;
    std::vector<std::string> includes, defines, warnings;
    bool debug = false;
    app.add_option("source", source, "the codelet's C++ source")->required()->check(CLI::ExistingFile);
    app.add_option("-o", output, "the object to write (.gp)")->required();
    app.add_option("-O", optimisation, "optimisation level (-O0 ... -O3, -Os)");
    app.add_option("-I", includes, "a folder of headers");
    app.add_option("-D", defines, "a macro (NAME or NAME=VALUE)");
    app.add_option("-W", warnings, "a warning option of the host compiler (-Wall, -Werror, ...)");
    app.add_flag("-g", debug, "debug information");
    app.add_option("--target", target, "the IPU architecture (ipu2 or ipu21; both run as a Mk2)");
    // popc writes -target with one dash; CLI11 reads long options with two.
    std::vector<std::string> args;
    for (int i = argc - 1; i > 0; --i)
        args.push_back(std::string(argv[i]) == "-target" ? "--target" : argv[i]);
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    std::vector<std::string> flags;
    if (!optimisation.empty())
        flags.push_back("-O" + optimisation);
    for (const auto& i : includes)
        flags.push_back("-I" + i);
    for (const auto& d : defines)
        flags.push_back("-D" + d);
    for (const auto& w : warnings)
        flags.push_back("-W" + w);
    if (debug)
        flags.push_back("-g");
    if (!target.empty())
        flags.insert(flags.end(), {"-target", target});
    try {
        const auto hostFlags = poplar::detail::hostCompilerFlags(flags);
        const std::string partial = output + ".partial";
        poplar::detail::compileCodelet(source, hostFlags, partial);
        std::filesystem::rename(partial, output);
    } catch (const std::exception& e) {
        const std::string what = e.what();
        fmt::print(stderr, "{}{}ipusim-popc: {} not written\n", what, !what.empty() && what.back() == '\n' ? "" : "\n", output);
        return 1;
    }
    return 0;
}
