// SPDX-License-Identifier: MIT
// poplar::Engine: runs a compiled graph's programs on the host (the tensors' values) and on the
// simulated device (the cycles), and answers the host's reads, writes and streams.
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/ExperimentSpec.hpp"
#include "sim/engine/MemoryAccount.hpp"
#include "sim/poplar/CompiledGraph.hpp"
#include "sim/poplar/Elements.hpp"
#include "sim/poplar/HostExecution.hpp"
#include "sim/poplar/ProfileSummary.hpp"
#include "sim/poplar/TargetAccess.hpp"
#include "sim/report/Summary.hpp"
#include "sim/run/Run.hpp"

#include <poplar/Engine.hpp>
#include <poplar/exceptions.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

namespace poplar {

namespace detail {

/** A run as the simulator sees it: the program, and what its data decided where its control flow
 *  depends on it (nothing for most programs, whose every run takes the same cycles). */
struct RunKey
{
    unsigned program = 0;
    ControlOutcomes outcomes;
    friend bool operator<(const RunKey& a, const RunKey& b)
    {
        return a.program != b.program ? a.program < b.program : a.outcomes < b.outcomes;
    }
};

struct EngineState
{
    std::shared_ptr<CompiledGraph> compiled;
    std::map<std::string, StreamBuffer> streams;
    std::optional<Device> device;
    std::map<RunKey, ipusim::Experiment> experiments; // built at a run's first time
    std::map<RunKey, nlohmann::json> summaries;       // simulated once: the same run takes the same cycles
    std::optional<RunKey> last;

    /** The experiment of a run: its Schedule on the device's system. */
    const ipusim::Experiment& experiment(const RunKey& key);
    /** The summary of a run, simulated once; with `outDir`, simulated again to write its
     *  summary and trace there. */
    const nlohmann::json& simulate(const RunKey& key, const std::filesystem::path& outDir = {});
};

const ipusim::Experiment& EngineState::experiment(const RunKey& key)
{
    const unsigned prog = key.program;
    if (auto it = experiments.find(key); it != experiments.end())
        return it->second;
    const Target& target = compiled->store->target;
    const nlohmann::json doc = {{"name", fmt::format("poplar_program_{}", prog)},
                                {"workload", {{"kind", "schedule"}, {"description", "a Poplar program"}}}};
    auto cfg = ipusim::config::loadConfig(doc, "Poplar program", {"/system=" + target.ipusimSystem()}, "IPUSIM_SYSTEM");
    ipusim::Experiment e;
    e.system = systemOf(target);
    e.run = ipusim::decodeRun(cfg, e.system);
    const auto& lowered = compiled->schedules.at(prog);
    e.schedule = lowered ? *lowered
                         : lowerProgram(*compiled->store, compiled->vertexCycles, *compiled->programs.at(prog), programName(prog), &key.outcomes);
    e.config = std::move(cfg);
    return experiments.emplace(key, std::move(e)).first->second;
}

const nlohmann::json& EngineState::simulate(const RunKey& key, const std::filesystem::path& outDir)
{
    if (auto it = summaries.find(key); it != summaries.end() && outDir.empty())
        return it->second;
    ipusim::RunOptions options;
    options.outDir = outDir;
    options.trace = !outDir.empty();
    options.force = true;
    // IPUSIM_ENGINE=reference: every cycle ticked by the reference engine, which the fast engine's
    // phases must then match (a disagreement is an error).
    if (const char* engine = std::getenv("IPUSIM_ENGINE"); engine && std::string(engine) == "reference")
        options.engine = ipusim::EngineKind::Reference;
    else if (engine && *engine && std::string(engine) != "fast")
        throw poplar_error(fmt::format("IPUSIM_ENGINE={}: expected fast (the default) or reference", engine));
    const ipusim::RunOutcome outcome = ipusim::run(experiment(key), options);
    if (outcome.status == ipusim::RunOutcome::Status::OutOfMemory)
        throw graph_memory_allocation_error(fmt::format("the graph does not fit in the IPUs' tile memory: {}",
                                                        ipusim::oomSummaryLine(outcome.oomReport)));
    return summaries[key] = outcome.summary;
}

namespace {

/** Runs (Engine::run calls) of this process so far: IPUSIM_REPORT numbers its files by it. */
std::atomic<unsigned> g_runs{0};

bool functional()
{
    const char* f = std::getenv("IPUSIM_FUNCTIONAL");
    return !(f && std::string(f) == "0");
}

} // namespace

} // namespace detail

Engine::Engine(const Graph& graph, ArrayRef<program::Program> progs, const OptionFlags& opt, ProgressFunc progress)
    : Engine(compileGraph(graph, progs, opt, std::move(progress)), opt) {}

Executable compileGraph(const Graph& graph, ArrayRef<program::Program> progs, const OptionFlags&, ProgressFunc progress, const DebugContext&)
{
    // Compiling is one stage here: checking, pricing and lowering the programs.
    if (progress)
        progress(0, 1);
    Executable exe(detail::compile(graph, progs));
    if (progress)
        progress(1, 1);
    return exe;
}

Engine::Engine(const Graph& graph, const program::Program& prog, const OptionFlags& opt, ProgressFunc progress)
    : Engine(graph, ArrayRef<program::Program>(&prog, 1), opt, std::move(progress)) {}

namespace detail {

/** As Poplar's compiler fails where the graph does not fit: each program whose steps are known
 *  before it runs (no control flow on data) has its tile memory accounted now. */
void checkFits(EngineState& s)
{
    for (unsigned prog = 0; prog < s.compiled->programs.size(); ++prog) {
        if (!s.compiled->schedules[prog])
            continue;
        const ipusim::Experiment& e = s.experiment(RunKey{prog, {}});
        const ipusim::MemoryAccount account = ipusim::accountMemory(e);
        if (!account.firstOver)
            continue;
        const nlohmann::json report = ipusim::report::oomReport(e, account);
        std::string where;
        const auto& ipu = report.at("ipus").at(0);
        if (ipu.contains("worst_tiles") && !ipu.at("worst_tiles").empty()) {
            const auto& tile = ipu.at("worst_tiles").at(0);
            where = fmt::format("; tile {} needs {} bytes, the largest live there:", tile.at("tile").get<std::uint64_t>(),
                                tile.at("peak").get<std::uint64_t>());
            std::size_t n = 0;
            for (const auto& l : tile.at("live"))
                if (n++ < 3)
                    where += fmt::format(" '{}' ({} bytes)", l.at("tensor").get<std::string>(), l.at("bytes").get<std::uint64_t>());
        }
        throw graph_memory_allocation_error(fmt::format("program {} does not fit in the IPUs' tile memory: {}{}", prog,
                                                        ipusim::oomSummaryLine(report), where));
    }
}

} // namespace detail

Engine::Engine(Executable&& exe, const OptionFlags&) : m_state(std::make_unique<detail::EngineState>())
{
    m_state->compiled = exe.compiled();
    detail::checkFits(*m_state);
}

Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;

void Engine::load(const Device& device)
{
    const Target& want = m_state->compiled->store->target;
    const Target& have = device.getTarget();
    if (have.getNumIPUs() != want.getNumIPUs() || have.getTilesPerIPU() != want.getTilesPerIPU())
        throw poplar_error(fmt::format("Engine::load: the graph was built for {} IPUs of {} tiles, the device has {} of {}", want.getNumIPUs(),
                                       want.getTilesPerIPU(), have.getNumIPUs(), have.getTilesPerIPU()));
    m_state->device = device;
}

void Engine::run(unsigned prog, const std::string&)
{
    auto& s = *m_state;
    if (!s.device)
        throw poplar_error("Engine::run: no device: call Engine::load(device) first");
    if (prog >= s.compiled->programs.size())
        throw poplar_error(fmt::format("Engine::run({}): the engine has programs 0 to {}", prog, s.compiled->programs.size() - 1));
    detail::RunKey key{prog, {}};
    if (detail::functional()) {
        detail::HostExecution host(*s.compiled->store, s.streams, key.outcomes);
        host.run(*s.compiled->programs[prog]);
    }
    const unsigned n = detail::g_runs++;
    const char* report = std::getenv("IPUSIM_REPORT");
    const std::filesystem::path dir = report && *report ? std::filesystem::path(report) : std::filesystem::path();
    const nlohmann::json& summary = s.simulate(key, dir.empty() ? dir : dir / fmt::format("run-{}", n));
    s.last = key;
    if (!dir.empty())
        ipusim::report::writeFileAtomically((dir / fmt::format("run-{}.summary.json", n)).string(), summary.dump(1) + "\n");
}

namespace {

const Tensor& handleTensor(const std::map<std::string, Tensor>& handles, const std::string& handle, const char* what, const char* create)
{
    const auto it = handles.find(handle);
    if (it == handles.end())
        throw poplar_error(fmt::format("Engine::{}: no tensor '{}': name it with Graph::{}(\"{}\", tensor) before compiling", what, handle,
                                       create, handle));
    return it->second;
}

std::size_t bufferBytes(const void* buf, const void* bufEnd) { return std::size_t(static_cast<const char*>(bufEnd) - static_cast<const char*>(buf)); }

} // namespace

void Engine::writeTensor(StringRef handle, const void* buf, const void* bufEnd)
{
    auto& store = *m_state->compiled->store;
    const Tensor& t = handleTensor(store.hostWrites, handle, "writeTensor", "createHostWrite");
    const std::size_t want = t.numElements() * t.elementType().size();
    if (bufferBytes(buf, bufEnd) != want)
        throw poplar_error(fmt::format("Engine::writeTensor '{}': a buffer of {} bytes for {} {} elements ({} bytes)", handle,
                                       bufferBytes(buf, bufEnd), t.numElements(), t.elementType().toString(), want));
    detail::scatter(store, t, static_cast<const unsigned char*>(buf));
}

void Engine::readTensor(StringRef handle, void* buf, void* bufEnd)
{
    auto& store = *m_state->compiled->store;
    const Tensor& t = handleTensor(store.hostReads, handle, "readTensor", "createHostRead");
    const std::size_t want = t.numElements() * t.elementType().size();
    if (bufferBytes(buf, bufEnd) != want)
        throw poplar_error(fmt::format("Engine::readTensor '{}': a buffer of {} bytes for {} {} elements ({} bytes)", handle,
                                       bufferBytes(buf, bufEnd), t.numElements(), t.elementType().toString(), want));
    detail::gatherInto(store, t, static_cast<unsigned char*>(buf));
}

namespace {

const DataStream& streamOf(const detail::GraphStore& store, const std::string& handle)
{
    const auto it = store.streams.find(handle);
    if (it == store.streams.end()) {
        std::string known;
        for (const auto& [name, s] : store.streams)
            known += (known.empty() ? "" : ", ") + name;
        throw stream_connection_error(fmt::format("Engine::connectStream: no stream '{}': the graph's streams are {}", handle,
                                                  known.empty() ? "none" : known));
    }
    return it->second;
}

} // namespace

void Engine::connectStream(StringRef handle, void* p)
{
    streamOf(*m_state->compiled->store, handle);
    auto* b = static_cast<unsigned char*>(p);
    m_state->streams[handle] = {b, nullptr, b, {}};
}

void Engine::connectStream(StringRef handle, void* begin, void* end)
{
    const DataStream& s = streamOf(*m_state->compiled->store, handle);
    const std::size_t bytes = s.numElements() * s.elementType().size();
    if (bufferBytes(begin, end) < bytes || bufferBytes(begin, end) % bytes != 0)
        throw stream_connection_error(fmt::format("Engine::connectStream '{}': a buffer of {} bytes: expected a whole number of the "
                                                  "stream's {} bytes ({} {} elements)",
                                                  handle, bufferBytes(begin, end), bytes, s.numElements(), s.elementType().toString()));
    auto* b = static_cast<unsigned char*>(begin);
    m_state->streams[handle] = {b, static_cast<unsigned char*>(end), b, {}};
}

void Engine::connectStreamToCallback(StringRef handle, std::function<void(void*)> f)
{
    streamOf(*m_state->compiled->store, handle);
    m_state->streams[handle] = {nullptr, nullptr, nullptr, std::move(f)};
}

void Engine::copyToRemoteBuffer(const void* data, StringRef handle, std::uint64_t repeatIndex)
{
    auto& store = *m_state->compiled->store;
    unsigned char* slot = store.remoteSlot(handle, repeatIndex, "Engine::copyToRemoteBuffer");
    const RemoteBuffer& b = store.remoteBuffers.at(handle);
    std::memcpy(slot, data, b.numElements() * b.elementType().size());
}

void Engine::copyFromRemoteBuffer(StringRef handle, void* data, std::uint64_t repeatIndex)
{
    auto& store = *m_state->compiled->store;
    const unsigned char* slot = store.remoteSlot(handle, repeatIndex, "Engine::copyFromRemoteBuffer");
    const RemoteBuffer& b = store.remoteBuffers.at(handle);
    std::memcpy(data, slot, b.numElements() * b.elementType().size());
}

void Engine::printProfileSummary(std::ostream& out, const OptionFlags&) const
{
    if (!m_state->last)
        throw poplar_error("Engine::printProfileSummary: no program has run yet");
    const detail::RunKey& key = *m_state->last;
    detail::printProfile(out, *m_state->compiled, m_state->experiment(key), m_state->summaries.at(key));
}

double Engine::getTileClockFrequency() const { return m_state->compiled->store->target.getTileClockFrequency(); }

std::string Engine::ipusimSummary() const
{
    if (!m_state->last)
        throw poplar_error("Engine::ipusimSummary: no program has run yet");
    return m_state->summaries.at(*m_state->last).dump(1);
}

std::uint64_t Engine::ipusimCycles() const
{
    if (!m_state->last)
        throw poplar_error("Engine::ipusimCycles: no program has run yet");
    return m_state->summaries.at(*m_state->last).at("total_cycles").get<std::uint64_t>();
}

} // namespace poplar
