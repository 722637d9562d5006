// SPDX-License-Identifier: MIT
#pragma once
#include "models/host/TransferLink.hpp"

namespace ipusim {

struct StreamingMemoryParams
{
    uint64_t bytesPerIpu = 68719476736ull;
    double bandwidthBytesPerSecond = 15.75e9;
    double efficiency = 0.85;
    uint64_t latencyCycles = 2000;
};

/** An IPU's Streaming Memory behind the IPU-Gateway: remote-buffer loads (to the IPU) and
 *  stores (from it). */
class StreamingMemory : public TransferLink
{
public:
    StreamingMemory(sc_core::sc_module_name name, const StreamingMemoryParams& p, double clockHz)
        : TransferLink(name, p.bandwidthBytesPerSecond, p.efficiency, p.latencyCycles, clockHz)
    {
    }
    [[nodiscard]] uint64_t bytesLoaded() const { return bytesToIpu(); }
    [[nodiscard]] uint64_t bytesStored() const { return bytesFromIpu(); }
};

} // namespace ipusim
