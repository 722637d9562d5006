// SPDX-License-Identifier: MIT
#pragma once
#include "models/host/StreamingMemory.hpp"
#include "models/ipu/IpuParams.hpp"
#include "models/link/IpuLinks.hpp"
#include "models/system/Topology.hpp"

namespace ipusim {

/** The simulated machine: its IPUs (all alike), how they are linked, and their host links. */
struct SystemParams
{
    uint32_t numIpus = 1;
    IpuParams ipu;
    HostLinkParams hostLink;
    IpuLinkParams ipuLink;
    double syncHopSeconds = 15e-9;
    StreamingMemoryParams streamingMemory;
    Topology topology = Topology::ladder(1, false);

    /** From the validated `/system` object; custom links must name IPUs below num_ipus
     *  (checked by the caller, which knows the config's file for the message). */
    static SystemParams fromJson(const nlohmann::json& system);
};

} // namespace ipusim
