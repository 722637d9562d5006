// SPDX-License-Identifier: MIT
#include "sim/sweep/PointRunner.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/engine/Interrupt.hpp"
#include "sim/run/Run.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ipusim {

nlohmann::json simulatePoint(config::LoadedConfig cfg)
{
    try {
        const RunOutcome r = run(RunRequest{std::move(cfg), {}});
        if (r.status == RunOutcome::Status::OutOfMemory)
            return {{"status", "out_of_memory"},
                    {"error", (r.oomPhase.empty() ? "" : r.oomPhase + " phase: ") + oomSummaryLine(r.oomReport)}};
        return {{"status", "ok"}, {"summary", r.summary}};
    } catch (const config::ConfigError& e) {
        return {{"status", "invalid"}, {"error", e.what()}};
    } catch (const std::exception& e) {
        return {{"status", "failed"}, {"error", e.what()}};
    }
}

nlohmann::json simulatePoint(const std::string& config, const std::vector<std::string>& sets, const std::string& setsOrigin)
{
    try {
        return simulatePoint(config::loadConfig(config, sets, setsOrigin));
    } catch (const config::ConfigError& e) {
        return {{"status", "invalid"}, {"error", e.what()}};
    }
}

PointRunner::PointRunner(std::filesystem::path scratch, unsigned jobs) : m_scratch(std::move(scratch)), m_jobs(std::max(1u, jobs))
{
    std::filesystem::create_directories(m_scratch);
}

PointRunner::~PointRunner() { kill(); }

void PointRunner::start(std::size_t index, const std::function<nlohmann::json()>& job,
                        const std::function<void(std::size_t, nlohmann::json)>& done)
{
    while (m_running.size() >= m_jobs)
        reapOne(done);
    std::fflush(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0) {
        // The point dies with its coordinator (no orphans after a SIGKILL), and takes Ctrl-C
        // and SIGTERM as a process normally does (the coordinator's handlers are not its own).
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        const nlohmann::json result = job();
        const auto path = m_scratch / fmt::format("point-{}.json", index);
        {
            std::ofstream out(path.string() + ".tmp");
            out << result.dump();
        }
        std::rename((path.string() + ".tmp").c_str(), path.c_str());
        std::fflush(nullptr);
        _exit(0);
    }
    m_running[pid] = index;
}

void PointRunner::reapOne(const std::function<void(std::size_t, nlohmann::json)>& done)
{
    // Polls, so that a Ctrl-C or SIGTERM sent to this process alone stops the points in flight
    // at once (they leave no result) instead of after they finish.
    int status = 0;
    pid_t pid = 0;
    while ((pid = waitpid(-1, &status, WNOHANG)) == 0) {
        if (InterruptGuard::requested()) {
            kill();
            m_interrupted = true;
            return;
        }
        usleep(2000); // 2 ms: a point takes tens of milliseconds at least
    }
    auto it = m_running.find(pid);
    if (pid < 0 || it == m_running.end())
        return;
    const std::size_t index = it->second;
    m_running.erase(it);
    const auto path = m_scratch / fmt::format("point-{}.json", index);
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGHUP)) {
        m_interrupted = true; // stopped from outside, not failed: no result, so --resume runs it again
        std::filesystem::remove(path);
        return;
    }
    nlohmann::json result;
    std::ifstream in(path);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && in)
        result = nlohmann::json::parse(in, nullptr, false);
    if (result.is_discarded() || result.is_null())
        result = {{"status", "failed"},
                  {"error", WIFSIGNALED(status) ? fmt::format("the point's process died of signal {}", WTERMSIG(status))
                                                : std::string("the point's process ended without a result")}};
    std::filesystem::remove(path);
    done(index, std::move(result));
}

void PointRunner::finish(const std::function<void(std::size_t, nlohmann::json)>& done)
{
    while (!m_running.empty())
        reapOne(done);
}

void PointRunner::kill()
{
    for (const auto& [pid, index] : m_running) {
        ::kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
    }
    m_running.clear();
}

} // namespace ipusim
