// SPDX-License-Identifier: MIT
#include "models/sync/ExternalSync.hpp"

#include "models/common/WaitingSlots.hpp"
#include "models/timing/SyncTiming.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ipusim {

ExternalSync::ExternalSync(sc_core::sc_module_name name, uint32_t participants, uint32_t extent, double hopSeconds,
                           double clockHz)
    : sc_module(name), m_participants(participants), m_latency(externalSyncCycles(extent, hopSeconds, clockHz)),
      m_waiting(participants), m_offers(participants)
{
}

void ExternalSync::arrive(uint32_t participant, uint64_t cycle, Release release, const SkipOffer* offer)
{
    if (m_waiting.at(participant))
        throw std::logic_error("participant arrived twice at one barrier");
    m_waiting[participant] = std::move(release);
    m_offers[participant] = offer ? std::optional<SkipOffer>(*offer) : std::nullopt;
    m_lastArrival = std::max(m_lastArrival, cycle);
    if (std::any_of(m_waiting.begin(), m_waiting.end(), [](const Release& r) { return !r; }))
        return;
    ++m_barriers;
    const uint64_t at = m_lastArrival + m_latency;
    uint64_t grant = 0;
    const auto& first = m_offers.front();
    if (first && at == first->iterationStart + first->period &&
        std::all_of(m_offers.begin(), m_offers.end(), [&](const auto& o) { return o && o->sameLoop(*first); })) {
        // Each IPU offers as many iterations as it may skip (an IPU prefetching its inputs no
        // more than it has left to fetch in the call): all skip the fewest.
        grant = first->iterations;
        for (const auto& o : m_offers)
            grant = std::min(grant, o->iterations);
        m_barriers += grant * first->barriers;
    }
    std::vector<Release> go;
    go.swap(m_waiting);
    m_waiting.resize(m_participants);
    m_offers.assign(m_participants, std::nullopt);
    for (auto& r : go)
        r(at, m_lastArrival, grant);
}

std::vector<uint32_t> ExternalSync::waiting() const { return waitingSlots(m_waiting); }

} // namespace ipusim
