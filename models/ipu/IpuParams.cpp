// SPDX-License-Identifier: MIT
#include "models/ipu/IpuParams.hpp"

namespace ipusim {

namespace {
AmpParams ampFromJson(const nlohmann::json& j)
{
    return {j.at("macs_per_cycle").get<uint32_t>(), j.at("units").get<uint32_t>(),
            j.at("in_chans_per_group").get<uint32_t>()};
}
} // namespace

// The schema has validated types and filled defaults, so `at` cannot miss here.
IpuParams IpuParams::fromJson(const nlohmann::json& j)
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
    p.ampHalfHalf = ampFromJson(a.at("fp16_fp16"));
    p.ampHalfFloat = ampFromJson(a.at("fp16_fp32"));
    p.ampFloatFloat = ampFromJson(a.at("fp32_fp32"));
    p.coeffLoadBytesPerCycle = a.at("coeff_load_bytes_per_cycle");
    const auto& m = j.at("memory");
    p.codeBytesPerVertexType = m.at("code_bytes_per_vertex_type");
    p.vertexStateBytes = m.at("vertex_state_bytes");
    p.controlCodeBytesPerStep = m.at("control_code_bytes_per_step");
    p.exchangeCodeBytesPerPhase = m.at("exchange_code_bytes_per_phase");
    p.availableMemoryProportion = m.at("available_memory_proportion");
    return p;
}

HostLinkParams HostLinkParams::fromJson(const nlohmann::json& j)
{
    return {j.at("bandwidth_bytes_per_second").get<double>(), j.at("efficiency").get<double>(),
            j.at("latency_cycles").get<uint64_t>()};
}


} // namespace ipusim
