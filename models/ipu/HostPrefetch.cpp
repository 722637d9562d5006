// SPDX-License-Identifier: MIT
#include "models/ipu/HostPrefetch.hpp"

#include "models/system/ClockPeriod.hpp"

#include <algorithm>

namespace ipusim {

HostPrefetch::HostPrefetch(const Program& program, const IpuLinks* links, sc_core::sc_time period)
    : m_links(links), m_period(period), m_runs(prefetchRunsPerCall(program))
{
}

void HostPrefetch::startCall()
{
    m_ahead.clear();
    m_left = m_runs;
}

bool HostPrefetch::ahead(const HostTransferStep& h) const
{
    const auto it = m_ahead.find(&h);
    return it != m_ahead.end() && !it->second.empty();
}

std::optional<TransferKey> HostPrefetch::take(const HostTransferStep& h)
{
    if (!ahead(h))
        return std::nullopt;
    auto& fetches = m_ahead.at(&h);
    const TransferKey key = fetches.front();
    fetches.pop_front();
    return key;
}

void HostPrefetch::started(const HostTransferStep& h)
{
    if (h.prefetch && m_left[&h] > 0)
        --m_left[&h];
}

void HostPrefetch::consumed(const HostTransferStep& h)
{
    if (h.prefetch)
        m_consumed.push_back(&h);
}

void HostPrefetch::refill(const std::function<TransferKey(const HostTransferStep&)>& start)
{
    for (const HostTransferStep* h : m_consumed)
        for (auto& ahead = m_ahead[h]; ahead.size() < h->prefetchDepth && m_left[h] > 0;) {
            started(*h);
            ahead.push_back(start(*h));
        }
    m_consumed.clear();
}

void HostPrefetch::counters(std::vector<uint64_t*>& out)
{
    // Counting down: a skip subtracts (modulo 2^64) what each iteration fetched.
    for (auto& [step, left] : m_left)
        out.push_back(&left);
}

bool HostPrefetch::settled() const
{
    const uint64_t now = presentCycle(m_period);
    return std::all_of(m_ahead.begin(), m_ahead.end(), [&](const auto& fetches) {
        return std::all_of(fetches.second.begin(), fetches.second.end(),
                           [&](const TransferKey& key) { return m_links->transferEndedBy(key, now); });
    });
}

uint64_t HostPrefetch::room(const uint64_t* growth, uint64_t iterations) const
{
    std::size_t i = 0;
    for (const auto& [step, left] : m_left) {
        const uint64_t used = uint64_t(0) - growth[i++]; // per iteration (a count down, modulo 2^64)
        if (used > 0)
            iterations = std::min(iterations, left / used);
    }
    return iterations;
}

} // namespace ipusim
