// SPDX-License-Identifier: MIT
#include "models/system/SystemParams.hpp"

namespace ipusim {

SystemParams SystemParams::fromJson(const nlohmann::json& j)
{
    SystemParams p;
    p.numIpus = j.at("num_ipus");
    p.ipu = IpuParams::fromJson(j.at("ipu"));
    p.hostLink = HostLinkParams::fromJson(j.at("host_link"));
    const auto& l = j.at("ipu_link");
    p.ipuLink = {l.at("bandwidth_bytes_per_second").get<double>(), l.at("efficiency").get<double>(),
                 l.at("latency_cycles").get<uint64_t>()};
    p.syncHopSeconds = j.at("external_sync").at("hop_seconds");
    const auto& sm = j.at("streaming_memory");
    p.streamingMemory = {sm.at("bytes_per_ipu").get<uint64_t>(), sm.at("bandwidth_bytes_per_second").get<double>(),
                         sm.at("efficiency").get<double>(), sm.at("latency_cycles").get<uint64_t>()};
    const auto& t = j.at("topology");
    if (t.at("kind") == "custom") {
        std::vector<std::array<uint32_t, 3>> links;
        for (const auto& e : t.value("links", nlohmann::json::array()))
            links.push_back({e.at(0).get<uint32_t>(), e.at(1).get<uint32_t>(), e.at(2).get<uint32_t>()});
        p.topology = Topology::custom(p.numIpus, links);
    } else
        p.topology = Topology::ladder(p.numIpus, t.at("wrap").get<bool>());
    return p;
}

} // namespace ipusim
