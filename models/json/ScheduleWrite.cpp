// SPDX-License-Identifier: MIT
#include "models/json/ScheduleJson.hpp"

#include <algorithm>

// Writes what ScheduleRead.cpp reads: keys holding their default are left out, so a written
// schedule reads like a hand-written one.
namespace ipusim {
namespace {

using json = nlohmann::json;

json tileRange(uint32_t first, uint32_t end) { return json::array({first, end - 1}); }

const char* directionName(Direction d) { return d == Direction::ToIpu ? "to_ipu" : "from_ipu"; }

/** A compute step's runs: its cycle runs, split where its vertex count per tile changes. */
json computeRuns(const ComputeStep& c)
{
    json out = json::array();
    const auto& vertices = c.vertices.runs();
    auto v = vertices.begin();
    for (const auto& run : c.cycles.runs()) {
        for (uint32_t t = run.first; t < run.end();) {
            while (v != vertices.end() && v->end() <= t)
                ++v;
            uint32_t end = run.end(), count = 0;
            if (v != vertices.end() && v->first <= t) {
                end = std::min(end, v->end());
                count = v->value;
            } else if (v != vertices.end())
                end = std::min(end, v->first);
            json r = {{"tiles", tileRange(t, end)}, {"cycles", run.value}};
            if (count)
                r["vertex_count"] = count;
            out.push_back(std::move(r));
            t = end;
        }
    }
    return out;
}

json exchangeRuns(const TileRuns<ExchangeBytes>& bytes)
{
    json out = json::array();
    for (const auto& run : bytes.runs()) {
        json r = {{"tiles", tileRange(run.first, run.end())}};
        if (run.value.send)
            r["send_bytes"] = run.value.send;
        if (run.value.recv)
            r["recv_bytes"] = run.value.recv;
        if (run.value.recvShared)
            r["recv_shared_bytes"] = run.value.recvShared;
        out.push_back(std::move(r));
    }
    return out;
}

json transfers(const std::vector<IpuTransfer>& list)
{
    json out = json::array();
    for (const auto& t : list)
        out.push_back({{"ipu", t.peer}, {"bytes", t.bytes}});
    return out;
}

json steps(const std::vector<Step>& list);

void withOutline(json& j, const std::string& outline)
{
    if (!outline.empty())
        j["outline"] = outline;
}

json step(const ComputeStep& c)
{
    json j = {{"op", "compute"}, {"name", c.name}, {"tiles", computeRuns(c)}};
    if (!c.vertexTypes.empty())
        j["vertex_types"] = c.vertexTypes;
    if (c.flops > 0)
        j["flops"] = c.flops;
    withOutline(j, c.outline);
    return j;
}
json step(const ExchangeStep& x)
{
    json j = {{"op", "exchange"}, {"name", x.name}, {"tiles", exchangeRuns(x.bytes)}};
    withOutline(j, x.outline);
    return j;
}
json step(const SyncStep& s) { return {{"op", "sync"}, {"kind", s.kind == SyncKind::External ? "external" : "internal"}}; }
json step(const HostTransferStep& h)
{
    json j = {{"op", "host_transfer"}, {"name", h.name}, {"direction", directionName(h.direction)}, {"bytes", h.bytes}};
    if (h.prefetch)
        j["prefetch"] = true;
    if (h.prefetch && h.prefetchDepth != 1)
        j["prefetch_depth"] = h.prefetchDepth;
    return j;
}
json step(const IpuCopyStep& c)
{
    return {{"op", "ipu_copy"}, {"name", c.name}, {"send", transfers(c.send)}, {"recv", transfers(c.recv)}};
}
json step(const CallStep& c)
{
    json j = {{"op", "call"}, {"fragment", c.fragment}};
    if (c.microBatch >= 0)
        j["micro_batch"] = c.microBatch;
    if (c.perIteration)
        j["per_iteration"] = true;
    if (c.period != 1)
        j["period"] = c.period;
    return j;
}
json step(const CollectiveStep& c)
{
    return {{"op", "collective"}, {"name", c.name}, {"kind", nameOf(c.kind)}, {"bytes", c.bytes}, {"ring", c.ring}};
}
json step(const StreamingMemoryStep& s)
{
    return {{"op", "streaming_memory"}, {"name", s.name}, {"direction", directionName(s.direction)}, {"bytes", s.bytes}};
}
json step(const RepeatStep& r) { return {{"op", "repeat"}, {"name", r.name}, {"count", r.count}, {"body", steps(r.body)}}; }

json steps(const std::vector<Step>& list)
{
    json out = json::array();
    for (const auto& s : list)
        out.push_back(std::visit([](const auto& op) { return step(op); }, s.op));
    return out;
}

// Liveness goes by program point: compiled step names repeat (one per fragment, stage or loop).
json tensor(const TensorAlloc& t)
{
    json runs = json::array();
    for (const auto& run : t.bytes.runs())
        runs.push_back({{"tiles", tileRange(run.first, run.end())}, {"bytes", run.value}});
    json live = t.alwaysLive ? json("always") : json{{"from", t.from}, {"to", t.to}};
    return {{"name", t.name}, {"kind", t.kind}, {"tiles", std::move(runs)}, {"live", std::move(live)}};
}

json program(const Program& p)
{
    json fragments = json::array();
    for (std::size_t i = 0; i < p.fragments.size(); ++i)
        fragments.push_back({{"name", i < p.fragmentNames.size() ? p.fragmentNames[i] : std::string()}, {"steps", steps(p.fragments[i])}});
    json tensors = json::array();
    for (const auto& t : p.tensors)
        tensors.push_back(tensor(t));
    json j = {{"ipu", p.ipu}, {"steps", steps(p.steps)}, {"tensors", std::move(tensors)}};
    if (!fragments.empty())
        j["fragments"] = std::move(fragments);
    return j;
}

json placement(const StrategyInfo& s)
{
    json stages = json::array();
    for (const auto& st : s.stages) {
        json j = {{"ipu", st.ipu}, {"blocks", st.blocks}, {"stash_depth", st.stashDepth}};
        if (st.forwardFragment >= 0)
            j["forward_fragment"] = st.forwardFragment;
        if (st.backwardFragment >= 0)
            j["backward_fragment"] = st.backwardFragment;
        stages.push_back(std::move(j));
    }
    return {{"kind", s.kind}, {"schedule", s.schedule}, {"pipeline_cycles", s.pipelineCycles}, {"replicas", s.replicas},
            {"replicated_tensor_sharding", s.replicatedTensorSharding}, {"stages", std::move(stages)}};
}

} // namespace

json scheduleToJson(const Schedule& schedule)
{
    json w = {{"kind", "schedule"},
              {"mode", schedule.inference ? "infer" : "train"},
              {"samples", schedule.samplesPerHostCall},
              {"sample_kind", schedule.sampleKind},
              {"model_flops_per_sample", schedule.modelFlopsPerSample},
              {"peak_macs_per_tile_cycle", schedule.peakMacsPerTileCycle}};
    if (schedule.sequencesPerSample > 0)
        w["sequences_per_sample"] = schedule.sequencesPerSample;
    if (schedule.strategy)
        w["placement"] = placement(*schedule.strategy);
    json programs = json::array();
    for (const auto& p : schedule.programs)
        programs.push_back(program(p));
    w["programs"] = std::move(programs);
    return w;
}

} // namespace ipusim
