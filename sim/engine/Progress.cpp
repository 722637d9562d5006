// SPDX-License-Identifier: MIT
#include "sim/engine/Progress.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <unistd.h>

namespace ipusim {

Progress::Progress(std::string what, std::string unit, double quietSeconds, double plainEverySeconds)
    : m_what(std::move(what)),
      m_unit(std::move(unit)),
      m_quiet(quietSeconds),
      m_plainEvery(plainEverySeconds),
      m_tty(isatty(STDERR_FILENO) != 0),
      m_start(std::chrono::steady_clock::now()),
      m_lastPrint(m_start)
{
}

void Progress::update(uint64_t done, uint64_t total, uint64_t failures)
{
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - m_start).count();
    const double sincePrint = std::chrono::duration<double>(now - m_lastPrint).count();
    if (elapsed < m_quiet || (m_tty ? sincePrint < 0.2 : sincePrint < m_plainEvery))
        return;
    m_lastPrint = now;
    const double share = total ? double(done) / double(total) : 0.0;
    const double eta = share > 0 ? elapsed * (1 - share) / share : 0.0;
    const std::string failed = failures ? fmt::format(" ({} failed)", failures) : std::string();
    if (m_tty) {
        const int width = 30, filled = int(share * width);
        fmt::print(stderr, "\r{} [{}{}] {}/{} {}{}  {:.0f} s, ETA {:.0f} s ", m_what, std::string(filled, '#'),
                   std::string(width - filled, '.'), done, total, m_unit, failed, elapsed, eta);
    } else {
        fmt::print(stderr, "{}: {} of {} {} done{} after {:.0f} s, ETA {:.0f} s\n", m_what, done, total, m_unit, failed, elapsed, eta);
    }
    std::fflush(stderr);
    m_shown = true;
}

void Progress::finish()
{
    if (m_shown && m_tty)
        fmt::print(stderr, "\r{}\r", std::string(m_what.size() + m_unit.size() + 70, ' '));
}

} // namespace ipusim
