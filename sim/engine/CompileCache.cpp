// SPDX-License-Identifier: MIT
#include "sim/engine/CompileCache.hpp"

#include "sim/config/BundledModels.hpp"
#include "sim/config/ExperimentSpec.hpp"
#include "workloads/nets/CompileWorkload.hpp"

#include <filesystem>
#include <system_error>

namespace ipusim {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

} // namespace

const std::vector<std::string_view>& compilerIgnoredPointers()
{
    static const std::vector<std::string_view> pointers = {
        "/name", "/description", "/inference", // the inference phase is a config of its own
        "/run/host_calls", "/run/epochs", "/run/dataset_samples", "/run/trace", "/run/data_loader", "/run/instances",
        "/system/description", "/system/notes", "/system/ipu/clock_hz", "/system/ipu/sync",
        "/system/host", "/system/host_link", "/system/ipu_link", "/system/external_sync",
        "/system/streaming_memory/bandwidth_bytes_per_second", "/system/streaming_memory/efficiency",
        "/system/streaming_memory/latency_cycles",
    };
    return pointers;
}

bool compilerIgnores(std::string_view pointer)
{
    for (const std::string_view p : compilerIgnoredPointers())
        if (pointer.substr(0, p.size()) == p && (pointer.size() == p.size() || pointer[p.size()] == '/'))
            return true;
    return false;
}

std::string compileKey(const config::LoadedConfig& cfg)
{
    json key = cfg.doc;
    for (const std::string_view p : compilerIgnoredPointers()) {
        const json::json_pointer pointer{std::string(p)};
        if (key.contains(pointer))
            key.at(pointer.parent_pointer()).erase(pointer.back());
    }
    const json& w = cfg.doc.at("workload");
    if (w.value("kind", std::string()) == "onnx" && w.contains("file")) {
        // The model is read from the file: a new file (or a rewritten one) compiles again.
        // (a model that is nowhere keys by its name: compiling it fails, naming where it looked)
        const fs::path file = config::findWorkloadModel(cfg).value_or(w.at("file").get<std::string>());
        std::error_code ec;
        const auto size = fs::file_size(file, ec);
        const auto written = fs::last_write_time(file, ec).time_since_epoch().count();
        key["/workload/file"] = {fs::absolute(file).lexically_normal().string(), ec ? 0 : size, ec ? 0 : written};
    }
    return key.dump();
}

CompiledSchedule compileSchedule(const config::LoadedConfig& cfg, const SystemParams& system, const RunSpec& run,
                                 bool stopAtFirstIpuOver)
{
    WorkloadSpec workload = decodeWorkload(cfg, system, run);
    if (WorkloadOptions* options = optionsOf(workload)) // hand-written: every program is there
        options->stopAtFirstIpuOver = stopAtFirstIpuOver;
    CompiledSchedule compiled = compileWorkload(std::move(workload), system, cfg);
    compiled.schedule.name = cfg.name;
    // The compilers lower the mode into the steps they emit; the reports still need to know it.
    if (cfg.doc.at("workload").value("mode", std::string()) == "infer")
        compiled.schedule.inference = true;
    return compiled;
}

void CompileCache::prepare(const config::LoadedConfig& cfg)
{
    std::string key = compileKey(cfg);
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
        if (it->first == key) {
            m_entries.splice(m_entries.begin(), m_entries, it);
            return;
        }
    const SystemParams system = decodeSystem(cfg);
    // The tile memory that comes with it depends on the tile's memory parameters, which are
    // part of the key, not on timing: no point accounts it again.
    CompiledSchedule compiled = compileSchedule(cfg, system, decodeRun(cfg, system));
    ++m_compiled;
    m_entries.emplace_front(std::move(key), std::move(compiled));
    while (m_entries.size() > m_capacity)
        m_entries.pop_back();
}

std::optional<CompiledSchedule> CompileCache::take(const config::LoadedConfig& cfg)
{
    if (m_entries.empty())
        return std::nullopt;
    const std::string key = compileKey(cfg);
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
        if (it->first == key) {
            CompiledSchedule compiled = std::move(it->second);
            m_entries.erase(it);
            compiled.schedule.name = cfg.name; // names are not part of the key
            return compiled;
        }
    return std::nullopt;
}

} // namespace ipusim
