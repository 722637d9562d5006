// SPDX-License-Identifier: MIT
#pragma once
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <sys/types.h>

namespace ipusim {

/** A function run in a forked child process, its JSON result sent back over a pipe. SystemC
 *  elaborates once per process, so a second simulation that should run alongside this one (an
 *  inference phase, a benchmark case) runs in a child; a crash stays in the child. */
class ChildProcess
{
public:
    /** Forks and runs `body` in the child. An exception in the child becomes
     *  {"status": "invalid" (bad input) | "failed", "error": message}. `what` names the child
     *  in the message of a child that died. */
    explicit ChildProcess(const std::function<nlohmann::json()>& body, std::string what = "the child process");
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    /** Reads the result and reaps the child; a child that died without a result gives
     *  {"status": "failed", "error": how it ended}. */
    nlohmann::json wait();
    /** The same as the JSON text the child wrote, unparsed (a result passed on as it is). */
    std::string waitForText();
    /** The child's resource use, once waited for (peak RSS in KiB). */
    [[nodiscard]] long maxRssKb() const { return m_maxRssKb; }
    /** The signal that ended the child, once waited for; 0 if it exited. */
    [[nodiscard]] int killedBy() const { return m_killedBy; }

private:
    pid_t m_pid = -1;
    int m_fd = -1;
    long m_maxRssKb = 0;
    int m_killedBy = 0;
    std::string m_what;
};

} // namespace ipusim
