// SPDX-License-Identifier: MIT
#pragma once
#include "models/host/TransferLink.hpp"
#include "models/hw/SystemParams.hpp"

namespace ipusim {

/** An IPU's Streaming Memory behind the IPU-Gateway: remote-buffer loads (to the IPU) and
 *  stores (from it). */
class StreamingMemory : public TransferLink
{
public:
    StreamingMemory(sc_core::sc_module_name name, const StreamingMemoryParams& p, double clockHz)
        : TransferLink(name, p.bandwidthBytesPerSecond, p.efficiency, p.latencyCycles, clockHz)
    {
        registerStats("streaming_memory_bytes_loaded", "streaming_memory_bytes_stored", "Streaming Memory (loads, stores)");
    }
    [[nodiscard]] uint64_t bytesLoaded() const { return bytesToIpu(); }
    [[nodiscard]] uint64_t bytesStored() const { return bytesFromIpu(); }
};

} // namespace ipusim
