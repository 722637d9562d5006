// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/IpuParams.hpp"
#include "models/hw/SchemaDefaults.hpp"
#include "models/hw/Topology.hpp"

#include <cstdint>

namespace ipusim {

/** The host computer driving the IPUs. */
struct HostParams
{
    /** Host time before each host call (the framework dispatching it); the IPUs wait. */
    double callOverheadSeconds = schema::kHostCallOverheadSeconds;
    /** CPU cores of each host server, which the data loaders' workers on it share. */
    uint32_t cores = schema::kHostCores;
    /** Host servers the PopRun instances are split over. */
    uint32_t servers = schema::kHostServers;
    /** Host time for each host exchange (a run of consecutive host transfers); the IPU waits. */
    double syncLatencySeconds = schema::kHostSyncLatencySeconds;
};

/** One direction of a link: its bandwidth, the share of it payloads get, and the latency a
 *  transfer pays once (a route over IPU-Links once per hop). Every link of the system has this
 *  shape; SystemParams names which link each is. */
struct LinkParams
{
    double bandwidthBytesPerSecond = 0;
    double efficiency = 1;
    uint64_t latencyCycles = 0;
};

/** An IPU's Streaming Memory behind the IPU-Gateway. */
struct StreamingMemoryParams
{
    uint64_t bytesPerIpu = schema::kStreamingMemoryBytesPerIpu;
    double bandwidthBytesPerSecond = schema::kStreamingMemoryBandwidthBytesPerSecond;
    double efficiency = schema::kStreamingMemoryEfficiency;
    uint64_t latencyCycles = schema::kStreamingMemoryLatencyCycles;
};

/** The simulated machine: its IPUs (all alike), how they are linked, and their host links.
 *  Plain data: sim/config decodes it from the `/system` object of a config. */
struct SystemParams
{
    uint32_t numIpus = schema::kNumIpus;
    IpuParams ipu;
    HostParams host;
    /** The IPU's PCIe Gen4 x8 link to its IPU-Gateway (host transfers then cross the gateway's
     *  link to the host). */
    LinkParams hostLink{schema::kHostLinkBandwidthBytesPerSecond, schema::kHostLinkEfficiency, schema::kHostLinkLatencyCycles};
    /** An IPU-Gateway's RoCE link to its host server, shared by its IPU-M2000's IPUs. */
    LinkParams gatewayHostLink{schema::kGatewayHostLinkBandwidthBytesPerSecond, schema::kGatewayHostLinkEfficiency,
                               schema::kGatewayHostLinkLatencyCycles};
    /** One IPU-Link; a route pays the latency per hop. */
    LinkParams ipuLink{schema::kIpuLinkBandwidthBytesPerSecond, schema::kIpuLinkEfficiency, schema::kIpuLinkLatencyCycles};
    /** The GW-Links between the IPU-Gateways of different racks: one port. */
    LinkParams gwLink{schema::kGwLinkBandwidthBytesPerSecond, schema::kGwLinkEfficiency, schema::kGwLinkLatencyCycles};
    double syncHopSeconds = schema::kExternalSyncHopSeconds;
    StreamingMemoryParams streamingMemory;
    Topology topology = Topology::ladder(schema::kNumIpus, schema::kTopologyWrap);
};

} // namespace ipusim
