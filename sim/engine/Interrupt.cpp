// SPDX-License-Identifier: MIT
#include "sim/engine/Interrupt.hpp"

#include <atomic>

namespace ipusim {
namespace {

std::atomic<bool> g_requested{false};

extern "C" void onInterrupt(int) { g_requested = true; }

} // namespace

InterruptGuard::InterruptGuard()
{
    g_requested = false;
    struct sigaction action = {};
    action.sa_handler = onInterrupt;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &m_previousInt);
    sigaction(SIGTERM, &action, &m_previousTerm);
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
