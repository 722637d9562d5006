// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/IpuParams.hpp"
#include "models/hw/Topology.hpp"

#include <cstdint>

namespace ipusim {

/** The IPU's link to the host (PCIe Gen4 x8 through the gateway). */
struct HostLinkParams
{
    double bandwidthBytesPerSecond = 15.75e9;
    double efficiency = 0.85;
    uint64_t latencyCycles = 2000;
};

/** One IPU-Link, one direction; a route pays the latency per hop. */
struct IpuLinkParams
{
    double bandwidthBytesPerSecond = 16e9;
    double efficiency = 0.85;
    uint64_t latencyCycles = 400;
};

/** An IPU's Streaming Memory behind the IPU-Gateway. */
struct StreamingMemoryParams
{
    uint64_t bytesPerIpu = 68719476736ull;
    double bandwidthBytesPerSecond = 15.75e9;
    double efficiency = 0.85;
    uint64_t latencyCycles = 2000;
};

/** The simulated machine: its IPUs (all alike), how they are linked, and their host links.
 *  Plain data: sim/config decodes it from the `/system` object of a config. */
struct SystemParams
{
    uint32_t numIpus = 1;
    IpuParams ipu;
    HostLinkParams hostLink;
    IpuLinkParams ipuLink;
    double syncHopSeconds = 15e-9;
    StreamingMemoryParams streamingMemory;
    Topology topology = Topology::ladder(1, false);
};

} // namespace ipusim
