// SPDX-License-Identifier: MIT
#include "models/host/HostProcess.hpp"

#include "models/common/WaitingSlots.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ipusim {

HostProcess::HostProcess(uint32_t participants, HostCallClock clock, uint64_t syncCycles)
    : m_clock(std::move(clock)), m_syncCycles(syncCycles), m_waiting(participants)
{
}

void HostProcess::arrive(uint32_t ipu, uint64_t cycle, Start start)
{
    if (ipu >= m_waiting.size() || m_waiting[ipu])
        throw std::logic_error("host call: participant " + std::to_string(ipu) + " unknown or already waiting");
    m_waiting[ipu] = std::move(start);
    m_lastArrival = m_arrived == 0 ? cycle : std::max(m_lastArrival, cycle);
    if (++m_arrived < m_waiting.size())
        return;
    const HostCallClock::Call call = m_clock.next(m_lastArrival);
    m_loaderWait += call.loaderWait;
    m_dispatch += call.dispatch;
    ++m_calls;
    trace(call, m_calls);
    m_arrived = 0;
    std::vector<Start> starts;
    starts.swap(m_waiting);
    m_waiting.resize(starts.size());
    for (auto& s : starts)
        s(call);
}

void HostProcess::trace(const HostCallClock::Call& call, uint64_t number)
{
    if (!m_observer)
        return;
    const std::string n = std::to_string(number);
    if (call.batchBuilt > call.batchBegin) // worker k mod W builds batch k; without workers, one process
        m_observer->hostSpan(m_clock.builders() > 1 ? "loader worker " + std::to_string(call.builder) : "data loader", "batch " + n,
                             call.batchBegin, call.batchBuilt);
    if (call.dispatch > 0)
        m_observer->hostSpan("dispatch", "host call " + n, call.start - call.dispatch, call.start);
}

std::vector<uint32_t> HostProcess::waiting() const { return waitingSlots(m_waiting); }

} // namespace ipusim
