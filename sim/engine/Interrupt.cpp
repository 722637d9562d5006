// SPDX-License-Identifier: MIT
#include "sim/engine/Interrupt.hpp"

#include <atomic>
#include <utility>

namespace ipusim {
namespace {

std::atomic<bool> g_requested{false};

extern "C" void onInterrupt(int) { g_requested = true; }

} // namespace

InterruptGuard::InterruptGuard()
{
    g_requested = false;
    // Reads and waits carry on after the signal (SA_RESTART: the next check stops the work); a
    // second Ctrl-C acts as it normally does (SA_RESETHAND), for work between checks (compiling,
    // the reference engine). A signal the caller ignores (a background job's SIGINT) stays ignored.
    struct sigaction action = {};
    action.sa_handler = onInterrupt;
    action.sa_flags = SA_RESTART | SA_RESETHAND;
    sigemptyset(&action.sa_mask);
    for (auto [signal, previous] : {std::pair{SIGINT, &m_previousInt}, std::pair{SIGTERM, &m_previousTerm}}) {
        sigaction(signal, nullptr, previous);
        if (previous->sa_handler != SIG_IGN)
            sigaction(signal, &action, nullptr);
    }
}

InterruptGuard::~InterruptGuard()
{
    sigaction(SIGINT, &m_previousInt, nullptr);
    sigaction(SIGTERM, &m_previousTerm, nullptr);
}

bool InterruptGuard::requested() { return g_requested; }

void InterruptGuard::check(const char* what)
{
    if (g_requested)
        throw Interrupted(what);
}

} // namespace ipusim
