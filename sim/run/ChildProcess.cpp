// SPDX-License-Identifier: MIT
#include "sim/run/ChildProcess.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/run/WriteAll.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ipusim {
namespace {

nlohmann::json guardedResult(const std::function<nlohmann::json()>& body)
{
    try {
        return body();
    } catch (const config::ConfigError& e) {
        return {{"status", "invalid"}, {"error", e.what()}};
    } catch (const std::exception& e) {
        return {{"status", "failed"}, {"error", e.what()}};
    }
}

} // namespace

ChildProcess::ChildProcess(const std::function<nlohmann::json()>& body, std::string what) : m_what(std::move(what))
{
    int fds[2];
    if (pipe(fds) != 0)
        throw std::runtime_error("pipe failed");
    std::fflush(nullptr); // the child must not print the parent's buffered output again
    const pid_t parent = getpid();
    m_pid = fork();
    if (m_pid < 0) {
        close(fds[0]);
        close(fds[1]);
        throw std::runtime_error("fork failed");
    }
    if (m_pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive the parent
        if (getppid() != parent)
            _exit(1);
        close(fds[0]);
        if (!writeAll(fds[1], guardedResult(body).dump()))
            _exit(1);
        close(fds[1]);
        std::fflush(nullptr);
        _exit(0);
    }
    close(fds[1]);
    m_fd = fds[0];
}

ChildProcess::~ChildProcess()
{
    if (m_pid > 0) { // never waited for: the parent is unwinding
        ::kill(m_pid, SIGKILL);
        waitpid(m_pid, nullptr, 0);
    }
    if (m_fd >= 0)
        close(m_fd);
}

std::string ChildProcess::waitForText()
{
    std::string text;
    char buffer[65536];
    for (ssize_t n; (n = ::read(m_fd, buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0)
            text.append(buffer, std::size_t(n));
    }
    close(m_fd);
    m_fd = -1;
    int status = 0;
    struct rusage usage = {};
    wait4(m_pid, &status, 0, &usage);
    m_pid = -1;
    m_maxRssKb = usage.ru_maxrss;
    m_killedBy = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !text.empty())
        return text;
    return nlohmann::json{{"status", "failed"},
                          {"error", WIFSIGNALED(status) ? fmt::format("{} died of signal {}", m_what, WTERMSIG(status))
                                                        : m_what + " ended without a result"}}
        .dump();
}

nlohmann::json ChildProcess::wait()
{
    const nlohmann::json result = nlohmann::json::parse(waitForText(), nullptr, false);
    if (result.is_discarded())
        return {{"status", "failed"}, {"error", m_what + " ended without a whole result"}};
    return result;
}

} // namespace ipusim
