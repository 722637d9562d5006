// SPDX-License-Identifier: MIT
#include "models/host/StreamingMemory.hpp"

#include "models/link/StreamTiming.hpp"

namespace ipusim {

StreamingMemory::StreamingMemory(sc_core::sc_module_name name, const StreamingMemoryParams& params, double clockHz)
    : sc_module(name), m_params(params), m_clockHz(clockHz)
{
}

uint64_t StreamingMemory::transferCycles(uint64_t bytes) const
{
    if (bytes == 0)
        return 0;
    return m_params.latencyCycles + streamCycles(bytes, m_params.bandwidthBytesPerSecond, m_params.efficiency, m_clockHz);
}

uint64_t StreamingMemory::transfer(Direction direction, uint64_t bytes)
{
    (direction == Direction::ToIpu ? m_loaded : m_stored) += bytes;
    return transferCycles(bytes);
}

} // namespace ipusim
