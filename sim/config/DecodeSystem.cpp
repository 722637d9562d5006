// SPDX-License-Identifier: MIT
#include "sim/config/ExperimentSpec.hpp"

#include <fmt/format.h>

namespace ipusim {
namespace {

using json = nlohmann::json;

/** Reads values of the validated, defaulted config by JSON pointer (so `at` cannot miss), and
 *  notes each pointer read: a test checks that every parameter the schema declares is. */
class Reader
{
public:
    Reader(const json& doc, std::set<std::string>* read) : m_doc(doc), m_read(read) {}
    template <class T>
    T at(const std::string& pointer) const
    {
        if (m_read)
            m_read->insert(pointer);
        return m_doc.at(json::json_pointer(pointer)).get<T>();
    }
    /** Notes a value read whole from the document (a list). */
    void note(const std::string& pointer) const
    {
        if (m_read)
            m_read->insert(pointer);
    }

private:
    const json& m_doc;
    std::set<std::string>* m_read;
};

AmpParams ampOf(const Reader& r, const std::string& p)
{
    return {r.at<uint32_t>(p + "/macs_per_cycle"), r.at<uint32_t>(p + "/units"), r.at<uint32_t>(p + "/in_chans_per_group")};
}

/** The link whose bandwidth, efficiency and latency are at pointer `p` (every link has them). */
LinkParams linkOf(const Reader& r, const std::string& p)
{
    return {r.at<double>(p + "/bandwidth_bytes_per_second"), r.at<double>(p + "/efficiency"), r.at<uint64_t>(p + "/latency_cycles")};
}

IpuParams ipuOf(const Reader& r)
{
    IpuParams p;
    p.tiles = r.at<uint32_t>("/system/ipu/tiles");
    p.columns = r.at<uint32_t>("/system/ipu/columns");
    p.tileMemoryBytes = r.at<uint64_t>("/system/ipu/tile_memory_bytes");
    p.workers = r.at<uint32_t>("/system/ipu/worker_contexts");
    p.clockHz = r.at<double>("/system/ipu/clock_hz");
    p.vectorWidthBits = r.at<uint32_t>("/system/ipu/vector_width_bits");
    p.supervisorOverhead = r.at<uint32_t>("/system/ipu/supervisor_overhead_cycles");
    p.memcpyBytesPerCycle = r.at<uint32_t>("/system/ipu/memcpy_bytes_per_cycle");
    p.sendBytesPerCycle = r.at<uint32_t>("/system/ipu/exchange/send_bytes_per_cycle");
    p.recvBytesPerCycle = r.at<uint32_t>("/system/ipu/exchange/recv_bytes_per_cycle");
    p.tilesPerReceiveBus = r.at<uint32_t>("/system/ipu/exchange/tiles_per_receive_bus");
    p.exchangeLatencyBase = r.at<uint32_t>("/system/ipu/exchange/latency_base_cycles");
    p.exchangeLatencyPerRow = r.at<uint32_t>("/system/ipu/exchange/latency_cycles_per_row");
    p.internalSyncCycles = r.at<uint32_t>("/system/ipu/sync/internal_cycles");
    p.ampHalfHalf = ampOf(r, "/system/ipu/amp/fp16_fp16");
    p.ampHalfFloat = ampOf(r, "/system/ipu/amp/fp16_fp32");
    p.ampFloatFloat = ampOf(r, "/system/ipu/amp/fp32_fp32");
    p.coeffLoadBytesPerCycle = r.at<uint32_t>("/system/ipu/amp/coeff_load_bytes_per_cycle");
    p.codeBytesPerVertexType = r.at<uint32_t>("/system/ipu/memory/code_bytes_per_vertex_type");
    p.vertexStateBytes = r.at<uint32_t>("/system/ipu/memory/vertex_state_bytes");
    p.controlCodeBytesPerStep = r.at<uint32_t>("/system/ipu/memory/control_code_bytes_per_step");
    p.exchangeCodeBytesPerPhase = r.at<uint32_t>("/system/ipu/memory/exchange_code_bytes_per_phase");
    p.availableMemoryProportion = r.at<double>("/system/ipu/memory/available_memory_proportion");
    return p;
}

Topology topologyOf(const config::LoadedConfig& cfg, const Reader& r, uint32_t numIpus)
{
    const json& t = cfg.doc.at("system").at("topology");
    const json list = t.value("links", json::array());
    r.note("/system/topology/links");
    for (std::size_t i = 0; i < list.size(); ++i)
        for (int k = 0; k < 2; ++k)
            if (list[i][k].get<uint32_t>() >= numIpus)
                cfg.fail(fmt::format("/system/topology/links/{}/{}", i, k),
                         fmt::format("expected an IPU below num_ipus ({}), found {}", numIpus, list[i][k].get<uint32_t>()));
    const bool wrap = r.at<bool>("/system/topology/wrap");
    const std::string kind = r.at<std::string>("/system/topology/kind");
    const uint32_t racks = r.at<uint32_t>("/system/topology/racks");
    if (kind == "pod") {
        if (!list.empty())
            cfg.fail("/system/topology/links", "expected no links for kind \"pod\", which lays its racks out itself");
        // Every rack holds whole IPU-M2000s (4 IPUs, one gateway) and is a ladder of rungs.
        if (numIpus % racks != 0 || (numIpus / racks) % Topology::kIpusPerM2000 != 0)
            cfg.fail("/system/topology/racks",
                     fmt::format("expected racks of whole IPU-M2000s: num_ipus ({}) / racks a multiple of 4, found {} racks", numIpus, racks));
        return Topology::pod(numIpus, racks);
    }
    if (racks != 1)
        cfg.fail("/system/topology/racks", fmt::format("expected 1 (racks are for kind \"pod\"), found {}", racks));
    if (kind != "custom")
        return Topology::ladder(numIpus, wrap);
    std::vector<std::array<uint32_t, 3>> links;
    for (const auto& e : list)
        links.push_back({e.at(0).get<uint32_t>(), e.at(1).get<uint32_t>(), e.at(2).get<uint32_t>()});
    return Topology::custom(numIpus, links);
}

} // namespace

SystemParams decodeSystem(const config::LoadedConfig& cfg, std::set<std::string>* pointersRead)
{
    const Reader r(cfg.doc, pointersRead);
    SystemParams p;
    p.numIpus = r.at<uint32_t>("/system/num_ipus");
    p.ipu = ipuOf(r);
    p.host = {r.at<double>("/system/host/call_overhead_seconds"), r.at<uint32_t>("/system/host/cores"),
              r.at<uint32_t>("/system/host/servers"), r.at<double>("/system/host/sync_latency_seconds")};
    p.hostLink = linkOf(r, "/system/host_link");
    p.gatewayHostLink = linkOf(r, "/system/gateway_host_link");
    p.ipuLink = linkOf(r, "/system/ipu_link");
    p.gwLink = linkOf(r, "/system/gw_link");
    p.syncHopSeconds = r.at<double>("/system/external_sync/hop_seconds");
    p.streamingMemory = {r.at<uint64_t>("/system/streaming_memory/bytes_per_ipu"),
                         r.at<double>("/system/streaming_memory/bandwidth_bytes_per_second"),
                         r.at<double>("/system/streaming_memory/efficiency"), r.at<uint64_t>("/system/streaming_memory/latency_cycles")};
    p.topology = topologyOf(cfg, r, p.numIpus);
    if (auto lost = p.topology.unreachable(); !lost.empty())
        cfg.fail("/system/topology", fmt::format("IPUs {} have no IPU-Link route to IPU 0: every IPU must be connected", fmt::join(lost, ", ")));
    return p;
}

} // namespace ipusim
