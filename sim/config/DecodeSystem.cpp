// SPDX-License-Identifier: MIT
#include "sim/config/ExperimentSpec.hpp"

#include <fmt/format.h>

namespace ipusim {
namespace {

using json = nlohmann::json;

// The schema has validated types and filled defaults, so `at` cannot miss here.
AmpParams ampOf(const json& j)
{
    return {j.at("macs_per_cycle").get<uint32_t>(), j.at("units").get<uint32_t>(), j.at("in_chans_per_group").get<uint32_t>()};
}

IpuParams ipuOf(const json& j)
{
    IpuParams p;
    p.tiles = j.at("tiles");
    p.columns = j.at("columns");
    p.tileMemoryBytes = j.at("tile_memory_bytes");
    p.workers = j.at("worker_contexts");
    p.clockHz = j.at("clock_hz");
    p.vectorWidthBits = j.at("vector_width_bits");
    p.supervisorOverhead = j.at("supervisor_overhead_cycles");
    p.memcpyBytesPerCycle = j.at("memcpy_bytes_per_cycle");
    const auto& x = j.at("exchange");
    p.sendBytesPerCycle = x.at("send_bytes_per_cycle");
    p.recvBytesPerCycle = x.at("recv_bytes_per_cycle");
    p.tilesPerReceiveBus = x.at("tiles_per_receive_bus");
    p.exchangeLatencyBase = x.at("latency_base_cycles");
    p.exchangeLatencyPerRow = x.at("latency_cycles_per_row");
    p.internalSyncCycles = j.at("sync").at("internal_cycles");
    const auto& a = j.at("amp");
    p.ampHalfHalf = ampOf(a.at("fp16_fp16"));
    p.ampHalfFloat = ampOf(a.at("fp16_fp32"));
    p.ampFloatFloat = ampOf(a.at("fp32_fp32"));
    p.coeffLoadBytesPerCycle = a.at("coeff_load_bytes_per_cycle");
    const auto& m = j.at("memory");
    p.codeBytesPerVertexType = m.at("code_bytes_per_vertex_type");
    p.vertexStateBytes = m.at("vertex_state_bytes");
    p.controlCodeBytesPerStep = m.at("control_code_bytes_per_step");
    p.exchangeCodeBytesPerPhase = m.at("exchange_code_bytes_per_phase");
    p.availableMemoryProportion = m.at("available_memory_proportion");
    return p;
}

Topology topologyOf(const config::LoadedConfig& cfg, uint32_t numIpus)
{
    const json& t = cfg.doc.at("system").at("topology");
    const json list = t.value("links", json::array());
    for (std::size_t i = 0; i < list.size(); ++i)
        for (int k = 0; k < 2; ++k)
            if (list[i][k].get<uint32_t>() >= numIpus)
                cfg.fail(fmt::format("/system/topology/links/{}/{}", i, k),
                         fmt::format("expected an IPU below num_ipus ({}), found {}", numIpus, list[i][k].get<uint32_t>()));
    if (t.at("kind") != "custom")
        return Topology::ladder(numIpus, t.at("wrap").get<bool>());
    std::vector<std::array<uint32_t, 3>> links;
    for (const auto& e : list)
        links.push_back({e.at(0).get<uint32_t>(), e.at(1).get<uint32_t>(), e.at(2).get<uint32_t>()});
    return Topology::custom(numIpus, links);
}

} // namespace

SystemParams decodeSystem(const config::LoadedConfig& cfg)
{
    const json& j = cfg.doc.at("system");
    SystemParams p;
    p.numIpus = j.at("num_ipus");
    p.ipu = ipuOf(j.at("ipu"));
    const auto& h = j.at("host_link");
    p.hostLink = {h.at("bandwidth_bytes_per_second").get<double>(), h.at("efficiency").get<double>(),
                  h.at("latency_cycles").get<uint64_t>()};
    const auto& l = j.at("ipu_link");
    p.ipuLink = {l.at("bandwidth_bytes_per_second").get<double>(), l.at("efficiency").get<double>(),
                 l.at("latency_cycles").get<uint64_t>()};
    p.syncHopSeconds = j.at("external_sync").at("hop_seconds");
    const auto& sm = j.at("streaming_memory");
    p.streamingMemory = {sm.at("bytes_per_ipu").get<uint64_t>(), sm.at("bandwidth_bytes_per_second").get<double>(),
                         sm.at("efficiency").get<double>(), sm.at("latency_cycles").get<uint64_t>()};
    p.topology = topologyOf(cfg, p.numIpus);
    if (auto lost = p.topology.unreachable(); !lost.empty())
        cfg.fail("/system/topology", fmt::format("IPUs {} have no IPU-Link route to IPU 0: every IPU must be connected", fmt::join(lost, ", ")));
    return p;
}

} // namespace ipusim
