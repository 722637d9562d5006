// SPDX-License-Identifier: MIT
#include "models/timing/HostCallClock.hpp"

#include "models/common/SaturatingCycles.hpp"
#include "models/timing/HostCallTiming.hpp"

#include <algorithm>

namespace ipusim {

namespace {

uint64_t batchCyclesOf(const HostParams& host, const DataLoaderParams& loader, uint64_t samples, double clockHz)
{
    const long double instances = std::max<uint32_t>(loader.instances, 1);
    const long double cores = static_cast<long double>(std::max<uint32_t>(host.cores, 1)) * std::max<uint32_t>(host.servers, 1) / instances;
    const long double workers = std::max<uint32_t>(loader.workers, 1);
    const long double slowdown = workers / std::min(workers, cores);
    return secondsToCycles(static_cast<long double>(samples) / instances * loader.sampleSeconds * slowdown, clockHz);
}

} // namespace

HostCallClock::HostCallClock(const HostParams& host, const DataLoaderParams& loader, uint64_t samplesPerCall, double clockHz)
    : m_dispatch(hostCallOverheadCycles(host, clockHz)),
      m_batch(batchCyclesOf(host, loader, samplesPerCall, clockHz)),
      m_ahead(loader.async || loader.workers > 0),
      m_depth(std::size_t(2) * loader.workers + (loader.async ? loader.buffer : 0)),
      m_builderFree(std::max<uint32_t>(loader.workers, 1), 0)
{
}

HostCallClock::Call HostCallClock::next(uint64_t devicesFree)
{
    const uint64_t k = m_calls++;
    uint64_t begin = 0, built = 0;
    if (m_batch > 0 && !m_ahead) {
        begin = devicesFree;
        built = saturatingAdd(devicesFree, m_batch);
    } else if (m_batch > 0) {
        uint64_t& builder = m_builderFree[k % m_builderFree.size()];
        begin = builder;
        if (m_taken.size() == m_depth && m_depth > 0) // room for batch k once batch k - D is taken
            begin = std::max(begin, m_taken.front());
        builder = built = saturatingAdd(begin, m_batch);
    }
    const uint64_t taken = std::max(devicesFree, built);
    if (m_depth > 0) {
        m_taken.push_back(taken);
        if (m_taken.size() > m_depth)
            m_taken.pop_front();
    }
    return {saturatingAdd(taken, m_dispatch), taken - devicesFree, m_dispatch, begin, built, uint32_t(k % m_builderFree.size())};
}

std::array<HostCallClock::Wait, 3> HostCallClock::waitsBefore(const Call& call, uint64_t number)
{
    const std::string n = std::to_string(number);
    const uint64_t allBack = call.start - call.dispatch - call.loaderWait;
    return {Wait{PhaseKind::Sync, "host call " + n + " wait", allBack},
            Wait{PhaseKind::HostWait, "data loader, call " + n, allBack + call.loaderWait},
            Wait{PhaseKind::HostWait, "host call " + n, call.start}};
}

} // namespace ipusim
