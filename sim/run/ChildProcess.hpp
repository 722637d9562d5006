// SPDX-License-Identifier: MIT
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <sys/types.h>

namespace ipusim {

/** A function run in a forked child process, its JSON result sent back over a pipe. SystemC
 *  elaborates once per process, so a second simulation that should run alongside this one (an
 *  inference phase, a benchmark case) runs in a child; a crash stays in the child. */
class ChildProcess
{
public:
    /** Forks and runs `body` in the child. An exception in the child becomes
     *  {"status": "invalid" (bad input) | "failed", "error": message}. */
    explicit ChildProcess(const std::function<nlohmann::json()>& body);
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    /** Reads the result and reaps the child; a child that died without a result gives
     *  {"status": "failed", "error": how it ended}. */
    nlohmann::json wait();
    /** The child's resource use, once waited for (peak RSS in KiB). */
    [[nodiscard]] long maxRssKb() const { return m_maxRssKb; }

private:
    pid_t m_pid = -1;
    int m_fd = -1;
    long m_maxRssKb = 0;
};

} // namespace ipusim
