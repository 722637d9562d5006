// SPDX-License-Identifier: MIT
// Simulator speed benchmark (not a test): runs each case in a child process (SystemC elaborates
// once per process), several times, and prints median wall time and rates.
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/Simulation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

struct Case
{
    std::string name, config;
    std::vector<std::string> sets;
    bool inferencePhase = false; // simulate the config's inference phase instead
};

struct Figures
{
    double buildSeconds = 0, simSeconds = 0;
    uint64_t cycles = 0, tileSupersteps = 0;
};

Figures runOnce(const Case& c)
{
    int fds[2];
    if (pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        Figures f;
        auto t0 = std::chrono::steady_clock::now();
        ipusim::config::LoadedConfig cfg = ipusim::config::loadConfig(c.config, c.sets);
        if (c.inferencePhase)
            cfg = *ipusim::inferencePhase(cfg);
        ipusim::Experiment e = ipusim::buildExperiment(cfg);
        ipusim::Simulation sim(e);
        auto t1 = std::chrono::steady_clock::now();
        ipusim::SimResult r = sim.run();
        f.buildSeconds = std::chrono::duration<double>(t1 - t0).count();
        f.simSeconds = r.wallSeconds;
        f.cycles = r.totalCycles;
        f.tileSupersteps = r.tileSupersteps;
        if (write(fds[1], &f, sizeof f) != ssize_t(sizeof f))
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    Figures f;
    const bool ok = read(fds[0], &f, sizeof f) == ssize_t(sizeof f);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!ok || status != 0)
        throw std::runtime_error("case " + c.name + " failed");
    return f;
}

} // namespace

int main(int argc, char* argv[])
{
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[])
{
    const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
    const std::vector<std::string> oneCall{"/run/dataset_samples=0", "/run/epochs=1", "/run/host_calls=1"};
    auto pod64 = [&](int replicas) {
        std::vector<std::string> sets(oneCall);
        for (const char* s : {"/system/num_ipus=64", "/system/topology/wrap=true"})
            sets.push_back(s);
        sets.push_back("/workload/strategy/replicas=" + std::to_string(replicas));
        return sets;
    };
    std::vector<Case> cases = {
        {"superstep_loop (10,000 supersteps x 1,472 tiles)", "configs/schedules/superstep_loop.json", {}},
        {"mnist training step (batch 40, fp32)", "configs/default.json", {}},
        {"mnist training host call (40 x GA 10 x DI 10)", "configs/mnist/train.json", {}},
        {"mnist inference host call (8 x DI 100)", "configs/mnist/infer.json", {}},
        {"tutorial: pipelined training, 3 epochs, 4 IPUs", "configs/mnist/pipelined.json", {}},
        {"tutorial: pipelined inference, 10,000 images", "configs/mnist/pipelined.json", {}, true},
    };
    for (int r : {1, 4, 16})
        cases.push_back({"pipelined host call, POD64, " + std::to_string(r) + " replica(s)", "configs/mnist/pipelined_pod16.json", pod64(r)});
    fmt::print("{:<52} {:>10} {:>10} {:>14} {:>16} {:>16}\n", "case (median of " + std::to_string(repeats) + ")",
               "build s", "sim s", "cycles", "cycles/s", "tile-steps/s");
    for (const auto& c : cases) {
        std::vector<Figures> runs;
        for (int i = 0; i < repeats; ++i)
            runs.push_back(runOnce(c));
        auto median = [&](auto key) {
            std::vector<double> v;
            for (const auto& f : runs)
                v.push_back(key(f));
            std::sort(v.begin(), v.end());
            return v[v.size() / 2];
        };
        const double build = median([](const Figures& f) { return f.buildSeconds; });
        const double sim = median([](const Figures& f) { return f.simSeconds; });
        fmt::print("{:<52} {:>10.4f} {:>10.4f} {:>14} {:>16.3e} {:>16.3e}\n", c.name, build, sim, runs[0].cycles,
                   runs[0].cycles / sim, runs[0].tileSupersteps / sim);
    }

    // Sweeps run points in parallel processes: 16 points of the tutorial at -j 1 and -j 2.
    const std::string cli = (std::filesystem::path(argv[0]).parent_path() / "ipusim").string();
    auto sweepSeconds = [&](int jobs) {
        std::vector<double> v;
        for (int i = 0; i < std::max(1, repeats / 2); ++i) {
            const auto t0 = std::chrono::steady_clock::now();
            const std::string cmd = fmt::format("{} sweep configs/sweeps/tutorial16.json -j {} --out /tmp/ipusim-bench-sweep > /dev/null", cli, jobs);
            if (std::system(cmd.c_str()) != 0)
                throw std::runtime_error("sweep failed: " + cmd);
            v.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    const double one = sweepSeconds(1), two = sweepSeconds(2);
    fmt::print("\nsweep of 16 tutorial points: -j 1 {:.2f} s, -j 2 {:.2f} s wall: -j 2 takes {:.0f} % of -j 1\n", one, two,
               100 * two / one);
    std::filesystem::remove_all("/tmp/ipusim-bench-sweep");
    return 0;
}
