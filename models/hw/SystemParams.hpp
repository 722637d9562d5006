// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/IpuParams.hpp"
#include "models/hw/ParamFields.hpp"
#include "models/hw/SchemaDefaults.hpp"
#include "models/hw/Topology.hpp"

#include <cstdint>

namespace ipusim {

// The fields of these structs are the schema's parameters ("x-cpp-field" below /system), with
// their types and defaults, generated at configure time; their units, ranges, sources and
// meanings are the schema's (`ipusim params`).

/** The host computer driving the IPUs (/system/host): the host time before each host call and
 *  for each host exchange, during which the IPUs wait, and the cores and servers the data loaders
 *  share. */
struct HostParams
{
    IPUSIM_PARAM_FIELDS(HostParams, IPUSIM_HOST_PARAMS_FIELDS)
};

/** One direction of a link: its bandwidth, the share of it payloads get, and the latency a
 *  transfer pays once (a route over IPU-Links once per hop). Every link of the system has this
 *  shape; SystemParams names which link each is. A default LinkParams is the first link in the
 *  schema's key order (gateway_host_link); SystemParams gives each link its own defaults. */
struct LinkParams
{
    IPUSIM_PARAM_FIELDS(LinkParams, IPUSIM_LINK_PARAMS_FIELDS)
};

/** An IPU's Streaming Memory behind the IPU-Gateway (/system/streaming_memory). */
struct StreamingMemoryParams
{
    IPUSIM_PARAM_FIELDS(StreamingMemoryParams, IPUSIM_STREAMING_MEMORY_PARAMS_FIELDS)
};

/** The simulated machine: its IPUs (all alike, `ipu`), how they are linked, and their host links.
 *  Plain data: sim/config decodes it from the `/system` object of a config. The links:
 *  `hostLink`, the IPU's PCIe Gen4 x8 link to its IPU-Gateway (host transfers then cross the
 *  gateway's link to the host); `gatewayHostLink`, an IPU-Gateway's RoCE link to its host server,
 *  shared by its IPU-M2000's IPUs; `ipuLink`, one IPU-Link, a route paying the latency per hop;
 *  `gwLink`, one port of the GW-Links between the IPU-Gateways of different racks. */
struct SystemParams
{
    IPUSIM_PARAM_FIELDS(SystemParams, IPUSIM_SYSTEM_PARAMS_FIELDS)
    /** Not a field of the schema's list: decoded by hand, as its links are checked against
     *  num_ipus and a pod's racks against its IPUs. */
    Topology topology = Topology::ladder(schema::kNumIpus, schema::kTopologyWrap);
};

} // namespace ipusim
