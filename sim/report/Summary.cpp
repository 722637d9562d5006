// SPDX-License-Identifier: MIT
#include "sim/report/Summary.hpp"

#include "sim/config/HardwarePresets.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

namespace ipusim::report {
namespace {

using json = nlohmann::json;

/** Every program point's step name, by point number (one walk of the program). */
std::vector<std::string> pointNames(const Program& program)
{
    std::vector<std::string> names(program.numPoints);
    forEachProgramStep(program, [&](const Step& s) {
        std::visit([&](const auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (kIsPointStep<T>)
                if (op.point < names.size())
                    names[op.point] = op.name;
        }, s.op);
    });
    return names;
}

/** The step at a program point ("" for none: a tile with nothing but always-live memory). */
std::string stepAt(const std::vector<std::string>& names, uint32_t point)
{
    return point < names.size() ? names[point] : std::string();
}

/** Bytes live at each program step, on the whole IPU and on its peak tile: PopVision's
 *  liveness view, and where a model that does not fit runs out. */
json livenessOf(const TileMemory& mem, const Program& program, const std::vector<std::string>& names, uint32_t peakTile)
{
    return {{"peak_tile", peakTile},
            {"steps", names},
            {"ipu_bytes", mem.liveBytesByPoint(std::nullopt, program.numPoints)},
            {"peak_tile_bytes", mem.liveBytesByPoint(peakTile, program.numPoints)}};
}

json stats(const std::vector<uint64_t>& v)
{
    uint64_t mx = 0, mn = v.empty() ? 0 : UINT64_MAX, total = 0;
    for (auto x : v) {
        mx = std::max(mx, x);
        mn = std::min(mn, x);
        total += x;
    }
    return {{"max", mx}, {"min", mn}, {"mean", v.empty() ? 0.0 : double(total) / v.size()}, {"total", total}};
}

json breakdownJson(const PhaseBreakdown& b)
{
    json out = json::object();
    for (const auto& k : kPhaseKinds)
        out[k.name] = b[k.kind];
    return out;
}

json shareJson(const PhaseBreakdown& b, uint64_t total)
{
    json out = json::object();
    for (const auto& k : kPhaseKinds)
        out[k.name] = double(b[k.kind]) / double(total);
    return out;
}

std::string withCommas(uint64_t v)
{
    std::string s = std::to_string(v), out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i && (s.size() - i) % 3 == 0)
            out += ',';
        out += s[i];
    }
    return out;
}

} // namespace

void writeFileAtomically(const std::string& path, const std::string& text)
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out)
            throw std::runtime_error(fmt::format("{}: cannot write ({})", tmp, std::strerror(errno)));
        out << text;
        out.flush();
        if (!out)
            throw std::runtime_error(fmt::format("{}: write failed", tmp));
    }
    std::filesystem::rename(tmp, path);
}

namespace {

json liveJson(const std::vector<LiveTensor>& tensors)
{
    json live = json::array();
    for (const auto& l : tensors) {
        if (live.size() == 8)
            break;
        live.push_back({{"tensor", l.name}, {"kind", l.kind}, {"bytes", l.bytes}, {"always_live", l.alwaysLive}});
    }
    return live;
}

/** Where an IPU that does not fit runs out: the step at which a tile first needs more than it
 *  has (and what is live there), and the steps at which the tiles over capacity peak, with
 *  how many tiles peak at each: the ops to shrink, split or recompute. */
json overCapacity(const TileMemory& mem, const std::vector<std::string>& names)
{
    const auto& tiles = mem.tiles();
    std::map<uint32_t, uint32_t> peaks; // peak point -> tiles over capacity peaking there
    for (const auto& u : tiles)
        if (u.peak() > mem.capacity())
            ++peaks[u.peakPoint];
    std::vector<std::pair<uint32_t, uint32_t>> order(peaks.begin(), peaks.end());
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    json peakSteps = json::array();
    for (std::size_t i = 0; i < std::min<std::size_t>(order.size(), 10); ++i)
        peakSteps.push_back({{"step", stepAt(names, order[i].first)}, {"tiles", order[i].second}});
    const uint32_t t = *mem.firstOver();
    const TileMemoryUse& u = tiles[t];
    return {{"first", {{"step", stepAt(names, u.firstOverPoint)}, {"tile", t}, {"bytes", u.firstOverBytes},
                       {"over", u.firstOverBytes - mem.capacity()}, {"live", liveJson(mem.liveAt(t, u.firstOverPoint))}}},
            {"peak_steps", peakSteps}};
}

} // namespace

json memoryOfIpu(const TileMemory& mem, const Program& program, std::size_t worst)
{
    const auto& tiles = mem.tiles();
    const std::vector<std::string> names = pointNames(program);
    std::vector<uint64_t> always, notAlways, peak;
    for (const auto& t : tiles) {
        always.push_back(t.alwaysLive);
        notAlways.push_back(t.notAlwaysLivePeak);
        peak.push_back(t.peak());
    }
    json worstTiles = json::array();
    const std::vector<uint32_t> worstOrder = mem.worstTiles(std::max<std::size_t>(worst, 1)); // the first is the peak tile
    for (std::size_t i = 0; i < std::min(worst, worstOrder.size()); ++i) {
        const uint32_t t = worstOrder[i];
        const auto& u = tiles[t];
        worstTiles.push_back({{"tile", t}, {"always_live", u.alwaysLive}, {"not_always_live", u.notAlwaysLivePeak},
                              {"peak", u.peak()}, {"free", int64_t(mem.capacity()) - int64_t(u.peak())},
                              {"peak_at", stepAt(names, u.peakPoint)}, {"live", liveJson(mem.liveAtPeak(t))}});
    }
    // Per-tile profile as runs of equal tiles: [first, count, always_live, not_always_live].
    json perTile = json::array();
    for (uint32_t t = 0; t < tiles.size();) {
        uint32_t e = t + 1;
        while (e < tiles.size() && tiles[e].alwaysLive == tiles[t].alwaysLive &&
               tiles[e].notAlwaysLivePeak == tiles[t].notAlwaysLivePeak)
            ++e;
        perTile.push_back({t, e - t, tiles[t].alwaysLive, tiles[t].notAlwaysLivePeak});
        t = e;
    }
    std::map<std::string, uint64_t> byKind;
    std::vector<std::pair<uint64_t, const TensorAlloc*>> sizes;
    for (const auto& t : mem.tensors()) {
        uint64_t total = 0;
        for (const auto& r : t.bytes.runs())
            total += r.value * r.count;
        byKind[t.kind] += total;
        sizes.push_back({total, &t});
    }
    // The largest allocations over the whole chip (a tensor's bytes on every tile).
    std::stable_sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    json largest = json::array();
    for (std::size_t i = 0; i < std::min<std::size_t>(10, sizes.size()); ++i)
        largest.push_back({{"tensor", sizes[i].second->name}, {"kind", sizes[i].second->kind}, {"bytes", sizes[i].first},
                           {"always_live", sizes[i].second->alwaysLive}});
    const bool fits = mem.fits();
    json m = {{"tile_capacity_bytes", mem.capacity()},
            {"fits", fits},
            {"tiles_over", std::count_if(peak.begin(), peak.end(), [&](uint64_t p) { return p > mem.capacity(); })},
            {"always_live", stats(always)},
            {"not_always_live", stats(notAlways)},
            {"peak", stats(peak)},
            {"bytes_by_kind", byKind},
            {"largest_tensors", largest},
            {"worst_tiles", worstTiles},
            {"per_tile", perTile},
            {"liveness", livenessOf(mem, program, names, worstOrder.front())}};
    if (!fits)
        m["over_capacity"] = overCapacity(mem, names);
    return m;
}

namespace {

/** Per IPU: its cycles, breakdown, utilisation and every statistic its modules registered. */
json ipuFigures(const Ipu& ipu, const Program& program)
{
    const std::vector<uint64_t> busy = ipu.tiles.busyCycles();
    uint64_t busySum = 0;
    for (auto x : busy)
        busySum += x;
    json figures = {{"ipu", program.ipu},
                    {"cycles", ipu.cycle()},
                    {"breakdown", breakdownJson(ipu.breakdown())},
                    {"tile_utilisation", ipu.cycle() ? double(busySum) / double(busy.size()) / double(ipu.cycle()) : 0.0}};
    // What the IPU's modules counted, by the names they registered.
    for (const StatGroup* group : ipu.statGroups())
        for (const Stat& stat : group->stats())
            figures[stat.name] = stat.value();
    return figures;
}

/** Every executed compute set of every IPU, the longest (all executions) first. */
json tileBalance(const Experiment& e, const Simulation& sim)
{
    // Sorted before they become JSON: a BERT step has thousands of compute sets, and
    // comparing JSON objects costs a map lookup each time.
    std::vector<std::pair<uint32_t, const ComputeSetStats*>> executed;
    for (std::size_t i = 0; i < sim.ipus().size(); ++i)
        for (const auto& cs : sim.ipus()[i]->tiles.computeSets())
            if (cs.executions)
                executed.push_back({e.schedule.programs[i].ipu, &cs});
    std::stable_sort(executed.begin(), executed.end(),
                     [](const auto& a, const auto& b) { return a.second->phaseCycles > b.second->phaseCycles; });
    json balance = json::array();
    for (const auto& [ipu, cs] : executed)
        balance.push_back({{"ipu", ipu},
                           {"compute_set", cs->name},
                           {"executions", cs->executions},
                           {"busiest_tile_cycles", cs->busiestTileCycles},
                           {"mean_tile_cycles", cs->meanTileCycles},
                           {"balance", cs->busiestTileCycles ? cs->meanTileCycles / double(cs->busiestTileCycles) : 1.0},
                           {"tiles_used", cs->tilesUsed},
                           {"phase_cycles", cs->phaseCycles}});
    return balance;
}

/** A compute set's name with every run of digits as '*': the 24 layers of BERT-Large, or the
 *  stages of a pipeline, share one op type ("layer*.ffn.intermediate"). */
std::string opTypeOf(const std::string& computeSet)
{
    std::string type;
    for (std::size_t i = 0; i < computeSet.size(); ++i) {
        if (std::isdigit(static_cast<unsigned char>(computeSet[i]))) {
            if (type.empty() || type.back() != '*')
                type += '*';
        } else {
            type += computeSet[i];
        }
    }
    return type;
}

/** Compute sets summed by op type, the longest first (PopVision's operation summary): how
 *  many compute sets and executions, the IPU time they took, their FLOPs (matmuls and
 *  convolutions, recomputation included) and the rate they ran at. Replicas are counted once:
 *  each is an identical copy of the IPUs simulated. */
json opTypes(const Simulation& sim, double clockHz)
{
    struct Totals
    {
        uint64_t computeSets = 0, executions = 0, phaseCycles = 0;
        double flops = 0;
    };
    std::map<std::string, Totals> byType;
    uint64_t allCycles = 0;
    for (const auto& ipu : sim.ipus())
        for (const auto& cs : ipu->tiles.computeSets()) {
            if (!cs.executions)
                continue;
            Totals& t = byType[opTypeOf(cs.name)];
            ++t.computeSets;
            t.executions += cs.executions;
            t.phaseCycles += cs.phaseCycles;
            t.flops += cs.flops * double(cs.executions);
            allCycles += cs.phaseCycles;
        }
    json rows = json::array();
    for (const auto& [type, t] : byType)
        rows.push_back({{"op_type", type},
                        {"compute_sets", t.computeSets},
                        {"executions", t.executions},
                        {"phase_cycles", t.phaseCycles},
                        {"share_of_compute", allCycles ? double(t.phaseCycles) / double(allCycles) : 0.0},
                        {"flops", t.flops},
                        {"tflops_while_running", t.phaseCycles ? t.flops / (double(t.phaseCycles) / clockHz) / 1e12 : 0.0}});
    std::stable_sort(rows.begin(), rows.end(), [](const json& a, const json& b) {
        return a.at("phase_cycles").get<uint64_t>() > b.at("phase_cycles").get<uint64_t>();
    });
    return rows;
}

/** One body of the program tree: its steps counted by kind, the fragments it calls (each
 *  fragment's calls and cycles over the run, wherever called from) and its loops, each with
 *  what it took and its own body. */
json bodyTree(const std::vector<Step>& body, const Ipu& ipu, const Program& program)
{
    std::map<std::string, uint64_t> kinds;
    std::map<uint32_t, uint64_t> callSites;
    json loops = json::array();
    for (const Step& step : body) {
        if (const auto* r = std::get_if<RepeatStep>(&step.op)) {
            const Ipu::LoopStats& st = ipu.loopStats(*r);
            loops.push_back({{"loop", r->name}, {"count", r->count}, {"runs", st.runs}, {"iterations", st.iterations},
                             {"cycles", st.cycles}, {"body", bodyTree(r->body, ipu, program)}});
        } else if (const auto* c = std::get_if<CallStep>(&step.op)) {
            ++callSites[c->fragment];
        } else if (const auto kind = phaseKindOf(step)) {
            ++kinds[nameOf(*kind)];
        }
    }
    json node = {{"steps", kinds}};
    if (!callSites.empty()) {
        json calls = json::array();
        for (const auto& [fragment, sites] : callSites)
            calls.push_back({{"fragment", program.fragmentNames.at(fragment)}, {"call_sites", sites},
                             {"calls", ipu.fragments().at(fragment).calls}, {"cycles", ipu.fragments().at(fragment).cycles}});
        node["calls"] = calls;
    }
    if (!loops.empty())
        node["loops"] = loops;
    return node;
}

/** Per simulated IPU, the program as PopVision's program tree shows it: the main program and
 *  each fragment (a called subgraph), with loops, calls and steps, and the cycles they took. */
json programTree(const Experiment& e, const Simulation& sim)
{
    json tree = json::array();
    for (std::size_t i = 0; i < sim.ipus().size(); ++i) {
        const Ipu& ipu = *sim.ipus()[i];
        const Program& program = e.schedule.programs[i];
        json fragments = json::array();
        for (std::size_t f = 0; f < program.fragments.size(); ++f)
            fragments.push_back({{"fragment", program.fragmentNames.at(f)}, {"calls", ipu.fragments()[f].calls},
                                 {"cycles", ipu.fragments()[f].cycles}, {"body", bodyTree(program.fragments[f], ipu, program)}});
        tree.push_back({{"ipu", program.ipu}, {"host_calls", e.run.hostCalls}, {"cycles", ipu.cycle()},
                        {"main", bodyTree(program.steps, ipu, program)}, {"fragments", fragments}});
    }
    return tree;
}

const char* kindName(LinkKind kind)
{
    switch (kind) {
    case LinkKind::GatewayPcie: return "gateway_pcie";
    case LinkKind::GwLink: return "gw_link";
    case LinkKind::GatewayHost: return "gateway_host";
    case LinkKind::IpuLink: break;
    }
    return "ipu_link";
}

/** Bytes over each directed link (IPU-Link, gateway PCIe, GW-Link or a gateway's link to its
 *  host server; all lanes one way), with the time
 *  they would keep it busy at its full bandwidth and that time's share of the run. */
json linkFigures(const Experiment& e, const Simulation& sim, uint64_t totalCycles)
{
    json links = json::array();
    for (const auto& [fromTo, bytes] : sim.links().bytes()) {
        const auto busy = uint64_t(std::ceil((long double)bytes / sim.links().bytesPerCycle(fromTo.first, fromTo.second) - 1e-9L));
        const Topology::Edge& edge = e.system.topology.edge(fromTo.first, fromTo.second);
        links.push_back({{"from", fromTo.first}, {"to", fromTo.second}, {"kind", kindName(edge.kind)}, {"links", edge.lanes},
                         {"bytes", bytes}, {"busy_cycles", busy},
                         {"utilisation", totalCycles ? double(busy) / double(totalCycles) : 0.0}});
    }
    return links;
}

/** The text summary's line of the busiest link of each kind (what limits communication). */
void printBusiestLinks(std::ostream& out, const json& s)
{
    std::map<std::string, const json*> busiest;
    for (const auto& l : s.at("links")) {
        const json*& b = busiest[l.at("kind").get<std::string>()];
        if (!b || l.at("utilisation").get<double>() > b->at("utilisation").get<double>())
            b = &l;
    }
    if (busiest.empty())
        return;
    const uint32_t ipus = s.at("num_ipus"), gateways = Topology::gatewaysFor(ipus);
    auto node = [&](uint32_t n) {
        if (n < ipus)
            return fmt::format("IPU {}", n);
        return n < ipus + gateways ? fmt::format("gateway {}", n - ipus) : std::string("the host");
    };
    std::string line;
    for (const char* kind : {"ipu_link", "gateway_pcie", "gw_link", "gateway_host"})
        if (auto it = busiest.find(kind); it != busiest.end())
            line += fmt::format("{}{} {} -> {} {:.1f} %", line.empty() ? "" : ", ", kind, node(it->second->at("from")),
                                node(it->second->at("to")), 100 * it->second->at("utilisation").get<double>());
    fmt::print(out, "  links        busiest {}\n", line);
}

const Ipu& ipuById(const Experiment& e, const Simulation& sim, uint32_t id)
{
    for (std::size_t i = 0; i < sim.ipus().size(); ++i)
        if (e.schedule.programs[i].ipu == id)
            return *sim.ipus()[i];
    throw std::logic_error("no IPU " + std::to_string(id));
}

/** Each stage's mean forward and backward cycles per micro-batch. */
json stageFigures(const Experiment& e, const Simulation& sim, const StrategyInfo& st)
{
    json stages = json::array();
    for (std::size_t k = 0; k < st.stages.size(); ++k) {
        const Ipu& ipu = ipuById(e, sim, st.stages[k].ipu);
        auto mean = [&](int f) {
            if (f < 0 || !ipu.fragments()[std::size_t(f)].calls)
                return 0.0;
            return double(ipu.fragments()[std::size_t(f)].cycles) / double(ipu.fragments()[std::size_t(f)].calls);
        };
        const double fwd = mean(st.stages[k].forwardFragment), bwd = mean(st.stages[k].backwardFragment);
        stages.push_back({{"stage", k}, {"ipu", st.stages[k].ipu}, {"blocks", st.stages[k].blocks},
                          {"forward_cycles", fwd}, {"backward_cycles", bwd},
                          {"cycles_per_micro_batch", fwd + bwd},
                          {"stash_depth", st.stages[k].stashDepth}});
    }
    return stages;
}

/** Balance: the work each IPU does per micro-batch (all its stages) against the slowest, which
 *  sets the pipeline's pace; users move layers off the slowest IPU. Adds each stage's share. */
json ipuWork(json& stages, json& pipeline)
{
    std::map<uint32_t, double> perIpu;
    for (const auto& stage : stages)
        perIpu[stage.at("ipu").get<uint32_t>()] += stage.at("cycles_per_micro_batch").get<double>();
    double slowest = 0, sum = 0;
    uint32_t slowestIpu = 0;
    for (const auto& [ipu, c] : perIpu) {
        sum += c;
        if (c > slowest) {
            slowest = c;
            slowestIpu = ipu;
        }
    }
    for (auto& stage : stages)
        stage["share_of_slowest_ipu"] = slowest > 0 ? stage.at("cycles_per_micro_batch").get<double>() / slowest : 0.0;
    json work = json::array();
    for (const auto& [ipu, c] : perIpu)
        work.push_back({{"ipu", ipu}, {"cycles_per_micro_batch", c}, {"share_of_slowest", slowest > 0 ? c / slowest : 0.0}});
    pipeline["slowest_ipu"] = slowestIpu;
    pipeline["imbalance"] = sum > 0 ? slowest / (sum / double(perIpu.size())) : 1.0;
    return work;
}

/** How a placed model ran: stages, their balance and the bubble (the share of IPU time not
 *  spent inside a stage's work). Null for a model on one IPU without replicas. */
json pipelineFigures(const Experiment& e, const Simulation& sim)
{
    if (!e.schedule.strategy)
        return nullptr;
    const auto& st = *e.schedule.strategy;
    json stages = stageFigures(e, sim, st);
    json pipeline = json::object();
    const json work = ipuWork(stages, pipeline);
    uint64_t busy = 0, span = 0;
    for (const auto& ipu : sim.ipus()) {
        for (const auto& f : ipu->fragments())
            busy += f.cycles;
        span += ipu->cycle();
    }
    pipeline["kind"] = st.kind;
    pipeline["schedule"] = st.schedule;
    pipeline["pipeline_cycles"] = st.pipelineCycles;
    pipeline["replicas"] = st.replicas;
    pipeline["replicated_tensor_sharding"] = st.replicatedTensorSharding;
    pipeline["stages"] = stages;
    pipeline["ipu_work"] = work;
    pipeline["bubble_fraction"] = st.kind == "single" ? json(nullptr) : json(span ? 1.0 - double(busy) / double(span) : 0.0);
    return pipeline;
}

/** Per epoch (when the data set size says what one is): cycles, throughput, compute shares. */
json epochFigures(const Experiment& e, const Simulation& sim)
{
    json epochs = json::array();
    if (e.run.hostCallsPerEpoch == 0)
        return epochs;
    uint64_t start = 0;
    std::vector<uint64_t> computeBefore(sim.ipus().size(), 0);
    for (uint64_t ep = 0; ep < e.run.epochs; ++ep) {
        const std::size_t lastCall = (ep + 1) * e.run.hostCallsPerEpoch - 1;
        uint64_t end = 0;
        for (const auto& ipu : sim.ipus())
            end = std::max(end, ipu->hostCallEnds().at(lastCall));
        // Per IPU: the share of the epoch spent computing.
        json share = json::array();
        for (std::size_t i = 0; i < sim.ipus().size(); ++i) {
            const uint64_t compute = sim.ipus()[i]->computeAtCallEnds().at(lastCall);
            share.push_back(end > start ? double(compute - computeBefore[i]) / double(end - start) : 0.0);
            computeBefore[i] = compute;
        }
        const uint64_t n = e.run.hostCallsPerEpoch * e.schedule.samplesPerHostCall;
        const double secs = double(end - start) / e.system.ipu.clockHz;
        epochs.push_back({{"epoch", ep + 1}, {"cycles", end - start}, {"seconds", secs}, {"samples", n},
                          {"samples_per_second", secs > 0 ? double(n) / secs : 0.0}, {"ipu_compute_share", share}});
        start = end;
    }
    return epochs;
}

/** Achieved model FLOPs (matmuls, without recomputation) per IPU running the model. */
json flopFigures(const Experiment& e, uint64_t samples, double seconds)
{
    if (e.schedule.modelFlopsPerSample <= 0)
        return nullptr;
    const uint32_t replicas = e.schedule.strategy ? e.schedule.strategy->replicas : 1;
    const double ipusUsed = double(e.schedule.programs.size() * replicas);
    const double total = e.schedule.modelFlopsPerSample * double(samples);
    const double perIpu = seconds > 0 ? total / seconds / ipusUsed / 1e12 : 0.0;
    const double peak = 2.0 * e.schedule.peakMacsPerTileCycle * e.system.ipu.tiles * e.system.ipu.clockHz / 1e12;
    return {{"model_flops_per_sample", e.schedule.modelFlopsPerSample}, {"model_flops", total},
            {"ipus", ipusUsed}, {"tflops_per_ipu", perIpu}, {"peak_tflops_per_ipu", peak},
            {"share_of_peak", peak > 0 ? perIpu / peak : 0.0}};
}

/** The simulator's own speed. */
json simulatorFigures(const Simulation& sim, const SimResult& r)
{
    uint64_t skipped = 0;
    for (const auto& ipu : sim.ipus())
        skipped += ipu->iterationsSkipped();
    return {{"wall_seconds", r.wallSeconds},
            {"simulated_cycles_per_wall_second", r.wallSeconds > 0 ? r.totalCycles / r.wallSeconds : 0.0},
            {"tile_supersteps", r.tileSupersteps},
            {"loop_iterations_skipped", skipped},
            {"tile_supersteps_per_wall_second", r.wallSeconds > 0 ? r.tileSupersteps / r.wallSeconds : 0.0}};
}

/** Packed BERT: the sequences the rows carry, counted as graphcore/examples counts them (rows
 *  times the packing factor); null when samples are not packed. */
json packingFigures(const Experiment& e, uint64_t samples, double seconds)
{
    const double perSample = e.schedule.sequencesPerSample;
    if (perSample <= 0)
        return nullptr;
    const double sequences = double(samples) * perSample;
    return {{"sequences_per_sample", perSample}, {"sequences", sequences}, {"sequences_per_second", seconds > 0 ? sequences / seconds : 0.0}};
}

/** Inference: how long each micro-batch of the first host call took from its first fragment's
 *  start to its last one's end (nearest-rank percentiles); null when not measured. */
json latencyFigures(const Simulation& sim, double clock)
{
    std::vector<uint64_t> cycles = sim.microBatchLatencies();
    if (cycles.empty())
        return nullptr;
    std::sort(cycles.begin(), cycles.end());
    auto rank = [&](double p) { return cycles[std::size_t(std::max(1.0, std::ceil(p * double(cycles.size())))) - 1]; };
    long double sum = 0;
    for (uint64_t c : cycles)
        sum += c;
    const double mean = double(sum / cycles.size());
    return {{"scope", "the micro-batches of the first host call"},
            {"micro_batches", cycles.size()},
            {"min_cycles", cycles.front()},
            {"p50_cycles", rank(0.5)},
            {"mean_cycles", mean},
            {"p99_cycles", rank(0.99)},
            {"max_cycles", cycles.back()},
            {"mean_seconds", mean / clock},
            {"max_seconds", double(cycles.back()) / clock}};
}

/** What the IPUs waited for the host: between host calls its data loader and its dispatch of
 *  each call (HostCallClock), within them its answers to host exchanges (counted for the IPU
 *  that waited longest), and which of them the IPUs waited for most. */
json hostFigures(const Experiment& e, const Simulation& sim, const SimResult& r)
{
    const HostProcess& host = sim.host();
    const double clock = e.system.ipu.clockHz;
    uint64_t syncs = 0, syncWait = 0;
    for (const auto& ipu : sim.ipus())
        if (ipu->host.syncWaitCycles() >= syncWait) {
            syncWait = ipu->host.syncWaitCycles();
            syncs = ipu->host.syncs();
        }
    const uint64_t waited = host.loaderWaitCycles() + host.dispatchCycles() + syncWait;
    const double share = r.totalCycles > 0 ? double(waited) / double(r.totalCycles) : 0.0;
    std::string waitingFor = "nothing";
    if (waited > 0) {
        const uint64_t most = std::max({host.loaderWaitCycles(), host.dispatchCycles(), syncWait});
        waitingFor = most == host.loaderWaitCycles() ? "data loader" : most == host.dispatchCycles() ? "call dispatch" : "exchange syncs";
    }
    const DataLoaderParams& l = e.run.dataLoader;
    return {{"calls", host.calls()},
            {"wait_cycles", waited},
            {"wait_share", share},
            {"loader_wait_cycles", host.loaderWaitCycles()},
            {"dispatch_cycles", host.dispatchCycles()},
            {"sync_wait_cycles", syncWait},
            {"exchange_syncs", syncs},
            {"waiting_for", waitingFor},
            {"data_loader", {{"instances", l.instances},
                             {"servers", e.system.host.servers},
                             {"workers", l.workers},
                             {"mode", l.async ? "async" : "sync"},
                             {"builders", host.clock().builders()},
                             {"batch_cycles", host.clock().batchCycles()},
                             {"batch_seconds", double(host.clock().batchCycles()) / clock}}}};
}

/** Which host model the run assumed: its name (by its values) and its values. */
json hostModelFigures(const HostParams& host)
{
    return {{"name", config::hostModelNameOf(host)},
            {"call_overhead_seconds", host.callOverheadSeconds},
            {"sync_latency_seconds", host.syncLatencySeconds}};
}

} // namespace

json summary(const Experiment& e, const Simulation& sim, const SimResult& r)
{
    const double clock = e.system.ipu.clockHz;
    const double seconds = double(r.totalCycles) / clock;
    const uint64_t samples = e.schedule.samplesPerHostCall * e.run.hostCalls;
    PhaseBreakdown total;
    json ipus = json::array(), memory = json::array();
    for (std::size_t i = 0; i < sim.ipus().size(); ++i) {
        const Ipu& ipu = *sim.ipus()[i];
        const Program& program = e.schedule.programs[i];
        total += ipu.breakdown();
        ipus.push_back(ipuFigures(ipu, program));
        json m = memoryOfIpu(ipu.tiles.memory(), program, 8);
        m["ipu"] = program.ipu;
        memory.push_back(m);
    }
    return {{"name", e.config.name},
            {"config", e.config.file},
            {"workload", e.config.doc.at("workload").at("kind")},
            {"clock_hz", clock},
            {"total_cycles", r.totalCycles},
            {"seconds", seconds},
            {"samples", samples},
            {"sample_kind", e.schedule.sampleKind},
            {"samples_per_second", seconds > 0 ? double(samples) / seconds : 0.0},
            {"packing", packingFigures(e, samples, seconds)},
            {"flops", flopFigures(e, samples, seconds)},
            {"epochs", epochFigures(e, sim)},
            {"run", {{"gradient_accumulation", e.run.gradientAccumulation},
                     {"device_iterations", e.run.deviceIterations},
                     {"host_calls", e.run.hostCalls},
                     {"samples_per_host_call", e.schedule.samplesPerHostCall}}},
            {"breakdown", breakdownJson(total)},
            {"breakdown_share", shareJson(total, std::max<uint64_t>(total.total(), 1))},
            {"num_ipus", e.system.numIpus},
            {"ipus", ipus},
            {"pipeline", pipelineFigures(e, sim)},
            {"latency", latencyFigures(sim, clock)},
            {"external_syncs", sim.externalSync().barriers()},
            {"host_model", hostModelFigures(e.system.host)},
            {"host", hostFigures(e, sim, r)},
            {"links", linkFigures(e, sim, r.totalCycles)},
            {"tile_balance", tileBalance(e, sim)},
            {"op_types", opTypes(sim, e.system.ipu.clockHz)},
            {"program_tree", programTree(e, sim)},
            {"memory", memory},
            {"simulator", simulatorFigures(sim, r)}};
}

namespace {
/** Blocks of a stage; long runs of encoder layers shortened to "L3..L9". */
std::string blockList(const std::vector<std::string>& blocks)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < blocks.size();) {
        std::size_t e = i;
        while (e + 1 < blocks.size() && blocks[e + 1].size() > 1 && blocks[e + 1][0] == 'L' && blocks[i][0] == 'L' &&
               std::isdigit(static_cast<unsigned char>(blocks[e + 1][1])) && std::isdigit(static_cast<unsigned char>(blocks[i][1])))
            ++e;
        out.push_back(e > i + 1 ? blocks[i] + ".." + blocks[e] : blocks[i]);
        if (e == i + 1)
            out.push_back(blocks[e]);
        i = e + 1;
    }
    return fmt::format("{}", fmt::join(out, " "));
}

/** All IPUs' cycles together (at least 1): per-IPU breakdowns add up over IPUs, so the
 *  phases' shares are of all IPUs' time. */
double summaryBreakdownTotal(const json& breakdown)
{
    double total = 0;
    for (const auto& [k, v] : breakdown.items())
        total += v.get<double>();
    return std::max(total, 1.0);
}

/** What ran, how long it took and how fast: the lines read first. */
void printSummaryHeadline(std::ostream& out, const json& s)
{
    fmt::print(out, "{} ({})\n", s.at("name").get<std::string>(), s.at("workload").get<std::string>());
    fmt::print(out, "  total        {:>16} cycles  {:.6f} s at {:.3f} GHz\n", withCommas(s.at("total_cycles")),
               s.at("seconds").get<double>(), s.at("clock_hz").get<double>() / 1e9);
    const std::string kind = s.value("sample_kind", std::string("samples"));
    if (s.at("samples").get<uint64_t>())
        fmt::print(out, "  throughput   {:>16.1f} {}/s ({} {})\n", s.at("samples_per_second").get<double>(), kind,
                   withCommas(s.at("samples")), kind);
    if (s.contains("packing") && !s.at("packing").is_null())
        fmt::print(out, "               {:>16.1f} sequences/s ({:.2f} packed a {})\n", s.at("packing").at("sequences_per_second").get<double>(),
                   s.at("packing").at("sequences_per_sample").get<double>(), kind == "rows" ? "row" : "sample");
    if (!s.at("flops").is_null())
        fmt::print(out, "  model FLOPs  {:>16.1f} TFLOPS per IPU, {:.1f} % of the {:.1f} TFLOPS peak\n",
                   s.at("flops").at("tflops_per_ipu").get<double>(), 100 * s.at("flops").at("share_of_peak").get<double>(),
                   s.at("flops").at("peak_tflops_per_ipu").get<double>());
}

/** The host the run assumed, and how long a micro-batch takes end to end (summaries written
 *  before these figures existed have neither). */
void printSummaryHostModelAndLatency(std::ostream& out, const json& s)
{
    if (s.contains("host_model")) {
        const auto& h = s.at("host_model");
        fmt::print(out, "  host model   {}: {:g} ms a host call, {:g} us a host exchange\n", h.at("name").get<std::string>(),
                   1e3 * h.at("call_overhead_seconds").get<double>(), 1e6 * h.at("sync_latency_seconds").get<double>());
    }
    if (s.contains("latency") && !s.at("latency").is_null()) {
        const auto& l = s.at("latency");
        fmt::print(out, "  latency      {:>16} cycles a micro-batch, mean ({:.3f} ms; min {}, max {}; {} micro-batches of the first host call)\n",
                   withCommas(uint64_t(std::llround(l.at("mean_cycles").get<double>()))), 1e3 * l.at("mean_seconds").get<double>(),
                   withCommas(l.at("min_cycles")), withCommas(l.at("max_cycles")), l.at("micro_batches").get<uint64_t>());
    }
}

/** Where the cycles went: each phase kind's cycles and share of total (the always-shown kinds
 *  even when zero), then, with several IPUs, how busy each one was. */
void printSummaryBreakdown(std::ostream& out, const json& s, double total)
{
    const auto& b = s.at("breakdown");
    const bool many = s.at("ipus").size() > 1;
    if (many)
        fmt::print(out, "  summed over {} IPUs:\n", s.at("ipus").size());
    for (const auto& k : kPhaseKinds)
        if (k.alwaysShown || b.at(k.name).get<uint64_t>())
            fmt::print(out, "  {:<12} {:>16} cycles  {:5.1f} %\n", k.name, withCommas(b.at(k.name)), 100.0 * b.at(k.name).get<double>() / total);
    if (many)
        for (const auto& ipu : s.at("ipus"))
            fmt::print(out, "  IPU {:<3} utilisation {:5.1f} %  compute {:>14}  sync {:>14}  copy {:>12}\n", ipu.at("ipu").get<int>(),
                       100 * ipu.at("tile_utilisation").get<double>(), withCommas(ipu.at("breakdown").at("compute")),
                       withCommas(ipu.at("breakdown").at("sync")), withCommas(ipu.at("breakdown").at("ipu_copy")));
}

/** Each IPU's peak tile against its capacity: how close the model is to not fitting. */
void printSummaryMemory(std::ostream& out, const json& s)
{
    for (const auto& m : s.at("memory"))
        fmt::print(out, "  memory IPU {}: peak tile {} of {} bytes (always-live {}, not-always-live {}), mean {:.0f}\n",
                   m.at("ipu").get<int>(), withCommas(m.at("peak").at("max")), withCommas(m.at("tile_capacity_bytes")),
                   withCommas(m.at("worst_tiles").at(0).at("always_live")),
                   withCommas(m.at("worst_tiles").at(0).at("not_always_live")), m.at("peak").at("mean").get<double>());
}

/** Each stage's work and, across IPUs, how far each is from the slowest: what sets the
 *  pipeline's pace. Only for pipelines that have a bubble figure. */
void printSummaryPipelineStages(std::ostream& out, const json& p)
{
    for (const auto& st : p.at("stages"))
        if (!p.at("bubble_fraction").is_null())
            fmt::print(out, "    stage {} on IPU {} [{}]: forward {:.0f}, backward {:.0f} cycles, stash depth {}\n",
                   st.at("stage").get<int>(), st.at("ipu").get<int>(), blockList(st.at("blocks").get<std::vector<std::string>>()),
                   st.at("forward_cycles").get<double>(), st.at("backward_cycles").get<double>(), st.at("stash_depth").get<int>());
    if (!p.at("bubble_fraction").is_null() && p.at("ipu_work").size() > 1) {
        std::string shares;
        for (const auto& w : p.at("ipu_work"))
            shares += fmt::format(" IPU {} {:.0f} %", w.at("ipu").get<int>(), 100 * w.at("share_of_slowest").get<double>());
        fmt::print(out, "    work per micro-batch against the slowest IPU:{} (imbalance {:.2f})\n", shares,
                   p.at("imbalance").get<double>());
    }
}

/** Replication, and the pipeline's (or phased execution's) schedule and bubble. */
void printSummaryPipeline(std::ostream& out, const json& s)
{
    if (s.at("pipeline").is_null())
        return;
    const auto& p = s.at("pipeline");
    if (p.at("replicas").get<int>() > 1)
        fmt::print(out, "  {} replicas{}, gradients averaged over IPU-Link rings\n", p.at("replicas").get<int>(),
                   p.at("replicated_tensor_sharding").get<bool>() ? " with sharded optimizer state" : "");
    if (!p.at("bubble_fraction").is_null())
        fmt::print(out, "  {} ({}): {} {} per step, bubble {:.1f} %\n", p.at("kind").get<std::string>(),
                   p.at("schedule").get<std::string>(), p.at("pipeline_cycles").get<uint64_t>(),
                   p.at("kind") == "phased" ? "phase turns" : "pipeline cycles", 100 * p.at("bubble_fraction").get<double>());
    printSummaryPipelineStages(out, p);
}

/** The five longest compute sets and how unevenly their tiles are loaded: where to look first
 *  to speed the model up. */
void printSummaryLongestComputeSets(std::ostream& out, const json& s)
{
    const auto& bal = s.at("tile_balance");
    if (bal.empty())
        return;
    fmt::print(out, "  longest compute sets (busiest tile / mean tile):\n");
    for (std::size_t i = 0; i < std::min<std::size_t>(5, bal.size()); ++i)
        fmt::print(out, "    {:<36} {:>12} cycles  busiest {:>8}  mean {:>10.1f}  x{}\n",
                   bal[i].at("compute_set").get<std::string>(), withCommas(bal[i].at("phase_cycles")),
                   withCommas(bal[i].at("busiest_tile_cycles")), bal[i].at("mean_tile_cycles").get<double>(),
                   bal[i].at("executions").get<uint64_t>());
}

/** Each epoch's time and throughput, with each IPU's share of it spent computing. */
void printSummaryEpochs(std::ostream& out, const json& s)
{
    for (const auto& ep : s.at("epochs")) {
        std::string shares;
        for (const auto& v : ep.at("ipu_compute_share"))
            shares += fmt::format(" {:.1f}%", 100 * v.get<double>());
        fmt::print(out, "  epoch {:<6} {:>16} cycles  {:.1f} samples/s  IPU compute{}\n", ep.at("epoch").get<int>(),
                   withCommas(ep.at("cycles")), ep.at("samples_per_second").get<double>(), shares);
    }
}

/** How long the IPUs wait for the host, split by cause, and the data loader's batch time: shown
 *  only when the host holds the IPUs up at all. */
void printSummaryHostWaits(std::ostream& out, const json& s)
{
    const auto& h = s.at("host");
    if (h.at("wait_cycles").get<uint64_t>() == 0)
        return;
    const double clock = s.at("clock_hz").get<double>(), run = std::max(s.at("total_cycles").get<double>(), 1.0);
    fmt::print(out, "  host         the IPUs wait for it {:.1f} % of the run: data loader {:.1f} %, call dispatch {:.1f} %, exchange syncs {:.1f} %",
               100 * h.at("wait_share").get<double>(), 100 * h.at("loader_wait_cycles").get<double>() / run,
               100 * h.at("dispatch_cycles").get<double>() / run, 100 * h.at("sync_wait_cycles").get<double>() / run);
    if (const auto& l = h.at("data_loader"); l.at("batch_cycles").get<uint64_t>() > 0)
        fmt::print(out, " (a batch takes {:.2f} ms, {} at once{})", 1e3 * l.at("batch_cycles").get<double>() / clock,
                   l.at("builders").get<uint32_t>(),
                   l.at("instances").get<uint32_t>() > 1 ? fmt::format(" in each of {} instances", l.at("instances").get<uint32_t>()) : "");
    fmt::print(out, "\n");
}

/** How fast the simulator itself ran (the one line that differs between identical runs). */
void printSummarySimulatorSpeed(std::ostream& out, const json& s)
{
    const auto& sim = s.at("simulator");
    fmt::print(out, "  simulator    {:.3f} s wall, {:.3g} cycles/s, {:.3g} tile-supersteps/s\n",
               sim.at("wall_seconds").get<double>(), sim.at("simulated_cycles_per_wall_second").get<double>(),
               sim.at("tile_supersteps_per_wall_second").get<double>());
}
} // namespace

void printSummary(std::ostream& out, const json& s)
{
    const double total = summaryBreakdownTotal(s.at("breakdown"));
    printSummaryHeadline(out, s);
    printSummaryHostModelAndLatency(out, s);
    printSummaryBreakdown(out, s, total);
    printSummaryMemory(out, s);
    printSummaryPipeline(out, s);
    printSummaryLongestComputeSets(out, s);
    printSummaryEpochs(out, s);
    printSummaryHostWaits(out, s);
    printBusiestLinks(out, s);
    printSummarySimulatorSpeed(out, s);
}

json oomReport(const Experiment& e, const MemoryAccount& account)
{
    json ipus = json::array();
    for (std::size_t i = 0; i < account.memory.size(); ++i) {
        if (account.memory[i]->fits())
            continue;
        json m = memoryOfIpu(*account.memory[i], e.schedule.programs[i], 5);
        m["ipu"] = e.schedule.programs[i].ipu;
        ipus.push_back(m); // with per_tile: the memory map tools/plot.py draws
    }
    json unaccounted = json::array();
    for (std::size_t i = account.memory.size(); i < e.schedule.programs.size(); ++i)
        unaccounted.push_back(e.schedule.programs[i].ipu);
    for (uint32_t ipu : e.ipusNotCompiled)
        unaccounted.push_back(ipu);
    return {{"error", "out of memory"}, {"name", e.config.name}, {"config", e.config.file}, {"ipus", ipus},
            {"ipus_not_accounted", unaccounted}};
}

namespace {

void printLive(std::ostream& out, const json& live)
{
    for (const auto& l : live)
        fmt::print(out, "      {:>12} B  {:<15} {}{}\n", withCommas(l.at("bytes")), l.at("kind").get<std::string>(),
                   l.at("tensor").get<std::string>(), l.at("always_live").get<bool>() ? " (always live)" : "");
}

/** What fits instead (searchFit), and how it was found. */
void printFitsWith(std::ostream& out, const json& fit)
{
    const std::size_t checks = fit.at("checked").size();
    const std::string sets = fit.contains("sets") ? fmt::format("--set '{}'", fmt::join(fit.at("sets").get<std::vector<std::string>>(), "' --set '"))
                                                  : std::string();
    if (fit.at("found").get<bool>() && fit.contains("stages"))
        fmt::print(out, "  fits split into {} pipeline stages by module prefix, with {} ({} variant{} compiled and accounted, not run)\n",
                   fit.at("stages").size(), sets, checks, checks == 1 ? "" : "s");
    else if (fit.at("found").get<bool>())
        fmt::print(out, "  fits with {} (the largest micro-batch that fits so; {} variant{} compiled and accounted, not run)\n", sets,
                   checks, checks == 1 ? "" : "s");
    else
        fmt::print(out, "  {} ({} variant{} compiled and accounted)\n", fit.at("next").get<std::string>(), checks, checks == 1 ? "" : "s");
}

} // namespace

void printOomReport(std::ostream& out, const json& r)
{
    for (const auto& m : r.at("ipus")) {
        const uint64_t cap = m.at("tile_capacity_bytes");
        fmt::print(out, "error: out of memory on IPU {}: {} tiles need more than their {} bytes (peak {} bytes)\n",
                   m.at("ipu").get<int>(), withCommas(m.at("tiles_over")), withCommas(cap), withCommas(m.at("peak").at("max")));
        const json& over = m.at("over_capacity");
        const json& first = over.at("first");
        fmt::print(out, "  first over at \"{}\": tile {} needs {} bytes, {} over\n", first.at("step").get<std::string>(),
                   first.at("tile").get<int>(), withCommas(first.at("bytes")), withCommas(first.at("over")));
        printLive(out, first.at("live"));
        std::vector<std::string> peaks;
        for (const auto& p : over.at("peak_steps"))
            peaks.push_back(fmt::format("\"{}\" ({} tile{})", p.at("step").get<std::string>(), withCommas(p.at("tiles")),
                                        p.at("tiles").get<uint32_t>() == 1 ? "" : "s"));
        fmt::print(out, "  tiles over capacity peak at {}\n", fmt::join(peaks, ", "));
        for (const auto& t : m.at("worst_tiles")) {
            const uint64_t peak = t.at("peak");
            if (peak <= cap)
                break;
            fmt::print(out, "  tile {}: {} bytes, {} over (always-live {}, not-always-live {} at \"{}\")\n", t.at("tile").get<int>(),
                       withCommas(peak), withCommas(peak - cap), withCommas(t.at("always_live")),
                       withCommas(t.at("not_always_live")), t.at("peak_at").get<std::string>());
            printLive(out, t.at("live"));
        }
    }
    if (const auto& rest = r.value("ipus_not_accounted", json::array()); !rest.empty())
        fmt::print(out, "  ({} {} {} after the first that does not fit: {} memory was not accounted)\n",
                   rest.size() == 1 ? "IPU" : "IPUs", fmt::join(rest.get<std::vector<int>>(), ", "),
                   rest.size() == 1 ? "comes" : "come", rest.size() == 1 ? "its" : "their");
    if (r.contains("fits_with"))
        printFitsWith(out, r.at("fits_with"));
}

} // namespace ipusim::report
