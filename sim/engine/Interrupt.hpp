// SPDX-License-Identifier: MIT
#pragma once
#include <csignal>
#include <stdexcept>

namespace ipusim {

/** Ctrl-C (SIGINT) or SIGTERM stopped a run or a sweep: what finished is kept, nothing is
 *  half-written, and no temporary file stays behind. */
struct Interrupted : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

/** While one is alive, SIGINT and SIGTERM only raise a flag, so a long run stops at its next
 *  check (between simulation slices, between sweep points) and unwinds, removing its temporary
 *  files; the signals' previous handlers come back when it goes. */
class InterruptGuard
{
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

    /** True once a signal arrived while a guard was alive (reset when the next guard starts). */
    static bool requested();
    /** Throws Interrupted with `what` if a signal arrived. */
    static void check(const char* what);

private:
    struct sigaction m_previousInt = {}, m_previousTerm = {};
};

} // namespace ipusim
