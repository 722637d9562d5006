// SPDX-License-Identifier: MIT
#include "models/timing/HostCallClock.hpp"

#include "models/common/SaturatingCycles.hpp"
#include "models/timing/HostCallTiming.hpp"

#include <algorithm>
#include <cmath>

namespace ipusim {

namespace {

uint64_t batchCyclesOf(const HostParams& host, const DataLoaderParams& loader, uint64_t samples, double clockHz)
{
    const long double workers = std::max<uint32_t>(loader.workers, 1);
    const long double slowdown = workers / std::min<long double>(workers, std::max<uint32_t>(host.cores, 1));
    // Rounded up to whole cycles, forgiving the rounding of the inputs (a few parts in 10^16:
    // 5e-6 s is not exact in binary) but no real fraction of a cycle.
    const long double cycles = static_cast<long double>(samples) * loader.sampleSeconds * clockHz * slowdown;
    return saturatedCycles(std::ceil(cycles - std::max(1e-9L, 1e-15L * cycles)));
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
    uint64_t built = 0;
    if (m_batch > 0 && !m_ahead) {
        built = saturatingAdd(devicesFree, m_batch);
    } else if (m_batch > 0) {
        uint64_t& builder = m_builderFree[k % m_builderFree.size()];
        uint64_t begin = builder;
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
    return {saturatingAdd(taken, m_dispatch), taken - devicesFree, m_dispatch};
}

} // namespace ipusim
