// SPDX-License-Identifier: MIT
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

namespace ipusim {

/** Progress of a long run on stderr: a bar with an ETA when stderr is a terminal, a plain line
 *  every `plainEverySeconds` otherwise; silent for runs shorter than `quietSeconds`. */
class Progress
{
public:
    /** `unit` names what `done` and `total` count ("program steps", "points"). */
    Progress(std::string what, std::string unit, double quietSeconds = 1.0, double plainEverySeconds = 10.0);
    void update(uint64_t done, uint64_t total, uint64_t failures = 0);
    void finish();

private:
    std::string m_what, m_unit;
    double m_quiet, m_plainEvery;
    bool m_tty;
    bool m_shown = false;
    std::chrono::steady_clock::time_point m_start, m_lastPrint;
};

} // namespace ipusim
