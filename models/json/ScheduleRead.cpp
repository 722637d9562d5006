// SPDX-License-Identifier: MIT
#include "models/json/ScheduleJson.hpp"

#include "models/program/ScheduleCheck.hpp"

#include "models/json/VertexJson.hpp"

#include <fmt/format.h>

#include <map>
#include <set>

namespace ipusim {
namespace {

using json = nlohmann::json;

using CopyPointers = CopyListing<std::string>; // per edge, the JSON pointer first listing it

/** Reads one program's steps, naming the JSON pointer of every error. */
class StepReader
{
public:
    StepReader(const Diagnostics& diag, const SystemParams& system, const StepCheck& check, uint32_t ipu, std::size_t fragments,
               CopyPointers* copies)
        : m_diag(diag), m_system(system), m_hw(system.ipu), m_check(check), m_ipu(ipu), m_fragments(fragments), m_copies(copies)
    {
    }

    std::vector<Step> steps(const json& list, const std::string& ptr)
    {
        std::vector<Step> out;
        for (std::size_t i = 0; i < list.size(); ++i)
            out.push_back(step(list[i], fmt::format("{}/{}", ptr, i)));
        return out;
    }

    /** Calls `f(first, count, run, pointer)` for runs of tiles listed in increasing order. */
    template <class F>
    void forEachRun(const json& list, const std::string& ptr, F&& f)
    {
        uint32_t next = 0;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string p = fmt::format("{}/{}", ptr, i);
            auto [first, count] = tileRange(list[i].at("tiles"), p + "/tiles");
            if (first < next)
                m_diag.fail(p + "/tiles", "tile runs must be listed in increasing tile order without overlap");
            f(first, count, list[i], p);
            next = first + count;
        }
    }

    /** Runs of tiles in increasing order, each valued by `valueOf(run, pointer)`. */
    template <class T, class F>
    TileRuns<T> runs(const json& list, const std::string& ptr, F&& valueOf)
    {
        TileRuns<T> out;
        forEachRun(list, ptr, [&](uint32_t first, uint32_t count, const json& run, const std::string& p) {
            out.add(first, count, valueOf(run, p));
        });
        return out;
    }

private:
    std::pair<uint32_t, uint32_t> tileRange(const json& sel, const std::string& ptr) const
    {
        if (sel.is_string())
            return {0, m_hw.tiles};
        const uint64_t a = sel.at(0), b = sel.at(1);
        if (a > b || b >= m_hw.tiles)
            m_diag.fail(ptr, fmt::format("expected a tile range [first, last] with first <= last <= {}, found {}", m_hw.tiles - 1,
                                         sel.dump()));
        return {uint32_t(a), uint32_t(b - a + 1)};
    }

    Step step(const json& j, const std::string& ptr)
    {
        const std::string op = j.at("op");
        if (m_check)
            m_check(j, op, ptr);
        if (op == "compute")
            return {compute(j, ptr)};
        if (op == "exchange")
            return {exchange(j, ptr)};
        if (op == "sync")
            return {SyncStep{j.value("kind", std::string("internal")) == "external" ? SyncKind::External : SyncKind::Internal}};
        if (op == "host_transfer")
            return {HostTransferStep{j.at("name"), direction(j), j.at("bytes"), 0, j.value("prefetch", false), j.value("prefetch_depth", 1u)}};
        if (op == "ipu_copy")
            return {ipuCopy(j, ptr)};
        if (op == "call")
            return {call(j, ptr)};
        if (op == "collective")
            return {collective(j, ptr)};
        if (op == "streaming_memory")
            return {StreamingMemoryStep{j.at("name"), direction(j), j.at("bytes")}};
        RepeatStep r;
        r.name = j.value("name", std::string("repeat"));
        r.count = j.at("count");
        r.body = steps(j.at("body"), ptr + "/body");
        return {r};
    }

    static Direction direction(const json& j) { return j.at("direction") == "to_ipu" ? Direction::ToIpu : Direction::FromIpu; }

    // A run gives its cycles (and vertex instances per tile) or lists its vertices, costed here.
    ComputeStep compute(const json& j, const std::string& ptr)
    {
        ComputeStep c;
        c.name = j.at("name");
        c.outline = j.value("outline", std::string());
        c.flops = j.value("flops", 0.0);
        std::set<std::string> listed;
        forEachRun(j.at("tiles"), ptr + "/tiles", [&](uint32_t first, uint32_t count, const json& run, const std::string& p) {
            if (run.contains("cycles") == run.contains("vertices"))
                m_diag.fail(p, "expected exactly one of \"cycles\" or \"vertices\"");
            if (run.contains("cycles")) {
                c.cycles.add(first, count, run.at("cycles").get<uint64_t>());
                c.vertices.add(first, count, run.value("vertex_count", 0u));
                return;
            }
            if (run.contains("vertex_count"))
                m_diag.fail(p + "/vertex_count", "expected only with \"cycles\": a vertices list counts itself");
            uint64_t total = 0;
            const json& vs = run.at("vertices");
            for (std::size_t k = 0; k < vs.size(); ++k) {
                const VertexCall v = vertexCallFromJson(m_diag, fmt::format("{}/vertices/{}", p, k), vs[k].at("vertex"), vs[k].at("params"), m_hw);
                total += cyclesOf(m_hw, v);
                listed.insert(v.codelet.name());
            }
            c.cycles.add(first, count, total);
            c.vertices.add(first, count, uint32_t(vs.size()));
        });
        // Codelets named by the step come first, in its order; listed vertices add theirs.
        c.vertexTypes = j.value("vertex_types", std::vector<std::string>());
        for (std::size_t k = 0; k < c.vertexTypes.size(); ++k)
            if (!Codelet::parse(c.vertexTypes[k]))
                m_diag.fail(fmt::format("{}/vertex_types/{}", ptr, k),
                            fmt::format("expected a codelet of the vertex table (a vertex, with its operation where it takes "
                                        "one, as in BinaryOp1D<MULTIPLY>), found \"{}\" (vertices: {})",
                                        c.vertexTypes[k], fmt::join(vertexNames(), ", ")));
        for (const auto& type : listed)
            if (std::find(c.vertexTypes.begin(), c.vertexTypes.end(), type) == c.vertexTypes.end())
                c.vertexTypes.push_back(type);
        return c;
    }

    ExchangeStep exchange(const json& j, const std::string& ptr)
    {
        ExchangeStep x;
        x.name = j.at("name");
        x.outline = j.value("outline", std::string());
        x.bytes = runs<ExchangeBytes>(j.at("tiles"), ptr + "/tiles", [](const json& run, const std::string&) {
            return ExchangeBytes{run.value("send_bytes", uint64_t(0)), run.value("recv_bytes", uint64_t(0)),
                                 run.value("recv_shared_bytes", uint64_t(0))};
        });
        return x;
    }

    uint32_t otherIpu(const json& v, const std::string& ptr) const
    {
        const uint32_t peer = v;
        if (peer >= m_system.numIpus || peer == m_ipu)
            m_diag.fail(ptr, fmt::format("expected another IPU of the system (0 to {}, not {}), found {}", m_system.numIpus - 1, m_ipu, peer));
        return peer;
    }

    IpuCopyStep ipuCopy(const json& j, const std::string& ptr)
    {
        IpuCopyStep c;
        c.name = j.at("name");
        auto transfers = [&](const char* key, std::vector<IpuTransfer>& out) {
            static const json none = json::array();
            const json& list = j.contains(key) ? j.at(key) : none;
            const bool sending = std::string(key) == "send";
            for (std::size_t i = 0; i < list.size(); ++i) {
                const std::string p = fmt::format("{}/{}/{}/ipu", ptr, key, i);
                out.push_back({otherIpu(list[i].at("ipu"), p), list[i].at("bytes").get<uint64_t>()});
                if (m_copies)
                    (sending ? m_copies->sends : m_copies->recvs)
                        .emplace(sending ? std::pair{m_ipu, out.back().peer} : std::pair{out.back().peer, m_ipu}, p);
            }
        };
        transfers("send", c.send);
        transfers("recv", c.recv);
        return c;
    }

    CallStep call(const json& j, const std::string& ptr) const
    {
        CallStep c;
        c.fragment = j.at("fragment");
        if (c.fragment >= m_fragments)
            m_diag.fail(ptr + "/fragment", m_fragments == 0 ? fmt::format("expected no call: the program has no fragments, found {}", c.fragment)
                                                            : fmt::format("expected a fragment of the program (0 to {}), found {}", m_fragments - 1, c.fragment));
        c.microBatch = j.value("micro_batch", int64_t(-1));
        c.perIteration = j.value("per_iteration", false);
        c.period = j.value("period", 1u);
        return c;
    }

    CollectiveStep collective(const json& j, const std::string& ptr) const
    {
        CollectiveStep c;
        c.name = j.at("name");
        const std::string kind = j.at("kind");
        c.kind = kind == "reduce_scatter" ? CollectiveKind::ReduceScatter
                 : kind == "all_gather"   ? CollectiveKind::AllGather : CollectiveKind::AllReduce;
        c.bytes = j.at("bytes");
        const json& ring = j.at("ring");
        std::set<uint32_t> seen;
        for (std::size_t i = 0; i < ring.size(); ++i) {
            const uint32_t ipu = ring[i];
            const std::string p = fmt::format("{}/ring/{}", ptr, i);
            if (ipu >= m_system.numIpus)
                m_diag.fail(p, fmt::format("expected an IPU of the system (0 to {}), found {}", m_system.numIpus - 1, ipu));
            if (!seen.insert(ipu).second)
                m_diag.fail(p, fmt::format("IPU {} is already in the ring", ipu));
            c.ring.push_back(ipu);
        }
        if (!seen.count(m_ipu))
            m_diag.fail(ptr + "/ring", fmt::format("expected the ring to hold this program's IPU {}", m_ipu));
        return c;
    }

    const Diagnostics& m_diag;
    const SystemParams& m_system;
    const IpuParams& m_hw;
    const StepCheck& m_check;
    uint32_t m_ipu;
    std::size_t m_fragments;
    CopyPointers* m_copies;
};

/** Program points by step name; a name several steps share cannot say which one it means. */
class PointNames
{
public:
    explicit PointNames(const Program& program)
    {
        forEachProgramStep(program, [&](const Step& s) {
            std::visit([&](const auto& op) {
                using T = std::decay_t<decltype(op)>;
                if constexpr (kIsPointStep<T>)
                    m_points[op.name].push_back(op.point);
            }, s.op);
        });
    }

    uint32_t point(const Diagnostics& diag, const json& v, const std::string& ptr, uint32_t numPoints) const
    {
        if (v.is_number()) {
            const uint64_t point = v;
            if (point >= numPoints)
                diag.fail(ptr, fmt::format("expected a program point of the program (0 to {}), found {}", int64_t(numPoints) - 1, point));
            return uint32_t(point);
        }
        const std::string name = v;
        auto it = m_points.find(name);
        if (it == m_points.end())
            diag.fail(ptr, fmt::format("expected the name of a compute, exchange, host, IPU-copy, collective or streaming-memory step, "
                                       "found \"{}\"", name));
        if (it->second.size() > 1)
            diag.fail(ptr, fmt::format("\"{}\" names {} steps (program points {}): give the program point instead", name,
                                       it->second.size(), fmt::join(it->second, ", ")));
        return it->second.front();
    }

private:
    std::map<std::string, std::vector<uint32_t>> m_points;
};

std::vector<TensorAlloc> tensorsFromJson(const Diagnostics& diag, StepReader& reader, const Program& program, const json& list,
                                         const std::string& ptr)
{
    const PointNames names(program);
    std::vector<TensorAlloc> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const json& tj = list[i];
        const std::string p = fmt::format("{}/{}", ptr, i);
        TensorAlloc t;
        t.name = tj.at("name");
        t.kind = tj.value("kind", std::string("tensor"));
        t.bytes = reader.runs<uint64_t>(tj.at("tiles"), p + "/tiles",
                                        [](const json& run, const std::string&) { return run.at("bytes").get<uint64_t>(); });
        const json& live = tj.at("live");
        if (live.is_string())
            t.alwaysLive = true;
        else {
            t.from = names.point(diag, live.at("from"), p + "/live/from", program.numPoints);
            t.to = names.point(diag, live.at("to"), p + "/live/to", program.numPoints);
            if (t.from > t.to)
                diag.fail(p + "/live", "\"from\" must not come after \"to\" in program order");
        }
        out.push_back(std::move(t));
    }
    return out;
}

/** One IPU's program: `doc` holds its steps and, optionally, fragments and tensors. */
Program programFromJson(const Diagnostics& diag, const SystemParams& system, const StepCheck& check, uint32_t ipu,
                        const json& doc, const std::string& ptr, CopyPointers* copies = nullptr)
{
    Program program;
    program.ipu = ipu;
    static const json none = json::array();
    const json& fragments = doc.contains("fragments") ? doc.at("fragments") : none;
    StepReader reader(diag, system, check, ipu, fragments.size(), copies);
    for (std::size_t i = 0; i < fragments.size(); ++i) {
        program.fragmentNames.push_back(fragments[i].at("name"));
        program.fragments.push_back(reader.steps(fragments[i].at("steps"), fmt::format("{}/fragments/{}/steps", ptr, i)));
    }
    program.steps = reader.steps(doc.at("steps"), ptr + "/steps");
    numberPoints(program);
    if (doc.contains("tensors"))
        program.tensors = tensorsFromJson(diag, reader, program, doc.at("tensors"), ptr + "/tensors");
    return program;
}

/** Every transfer listed as a send has its receive on the peer, and the other way round. */
void checkCopyPairs(const Diagnostics& diag, const CopyPointers& copies)
{
    copies.forEachUnpaired([&](std::pair<uint32_t, uint32_t> edge, const std::string& ptr, bool sending) {
        const uint32_t self = sending ? edge.first : edge.second, peer = sending ? edge.second : edge.first;
        diag.fail(ptr, sending ? fmt::format("expected IPU {}'s program to receive from IPU {} in an IPU copy (\"recv\"), as this "
                                             "send to it pairs with a receive there; it receives nothing from IPU {}",
                                             peer, self, self)
                               : fmt::format("expected IPU {}'s program to send to IPU {} in an IPU copy (\"send\"), as this "
                                             "receive from it pairs with a send there; it sends nothing to IPU {}",
                                             peer, self, self));
    });
}

std::optional<StrategyInfo> placementFromJson(const json& w)
{
    if (!w.contains("placement"))
        return std::nullopt;
    const json& p = w.at("placement");
    StrategyInfo s;
    s.kind = p.at("kind");
    s.schedule = p.at("schedule");
    s.pipelineCycles = p.at("pipeline_cycles");
    s.replicas = p.at("replicas");
    s.replicatedTensorSharding = p.at("replicated_tensor_sharding");
    for (const json& st : p.at("stages"))
        s.stages.push_back({st.at("ipu"), st.at("blocks").get<std::vector<std::string>>(), st.at("stash_depth"),
                            st.value("forward_fragment", -1), st.value("backward_fragment", -1)});
    return s;
}

} // namespace

Schedule scheduleFromJson(const json& w, const std::string& pointer, const SystemParams& system, const Diagnostics& diag,
                          const StepCheck& check)
{
    Schedule schedule;
    schedule.samplesPerHostCall = w.at("samples");
    schedule.sampleKind = w.value("sample_kind", std::string("samples"));
    schedule.sequencesPerSample = w.value("sequences_per_sample", 0.0);
    schedule.modelFlopsPerSample = w.value("model_flops_per_sample", 0.0);
    schedule.peakMacsPerTileCycle = w.value("peak_macs_per_tile_cycle", 0u);
    schedule.inference = w.value("mode", std::string("train")) == "infer";
    schedule.strategy = placementFromJson(w);
    if (w.contains("steps") == w.contains("programs"))
        diag.fail(pointer, "expected exactly one of \"steps\" (one IPU) or \"programs\" (one per IPU)");
    CopyPointers copies;
    if (w.contains("steps")) {
        schedule.programs.push_back(programFromJson(diag, system, check, 0, w, pointer, &copies));
        checkCopyPairs(diag, copies);
        return schedule;
    }
    for (const char* key : {"fragments", "tensors"})
        if (w.contains(key))
            diag.fail(pointer + "/" + key, "expected inside each program: with \"programs\", fragments and tensors belong to one");
    std::set<uint32_t> seen;
    const json& programs = w.at("programs");
    for (std::size_t i = 0; i < programs.size(); ++i) {
        const std::string p = fmt::format("{}/programs/{}", pointer, i);
        const uint32_t ipu = programs[i].at("ipu");
        if (ipu >= system.numIpus)
            diag.fail(p + "/ipu", fmt::format("expected an IPU of the system (0 to {}), found {}", system.numIpus - 1, ipu));
        if (!seen.insert(ipu).second)
            diag.fail(p + "/ipu", fmt::format("IPU {} already has a program", ipu));
        schedule.programs.push_back(programFromJson(diag, system, check, ipu, programs[i], p, &copies));
    }
    checkCopyPairs(diag, copies);
    return schedule;
}

} // namespace ipusim
