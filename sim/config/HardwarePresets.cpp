// SPDX-License-Identifier: MIT
#include "sim/config/HardwarePresets.hpp"

#include "sim/config/ConfigError.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace ipusim::config {
namespace {

constexpr std::string_view kHostFolder = "host/";

bool isHostModel(const std::string& name) { return name.rfind(kHostFolder, 0) == 0; }

} // namespace

std::vector<std::string> hardwarePresetNames()
{
    std::vector<std::string> names;
    for (const auto& [name, text] : embeddedPresetTexts())
        if (!isHostModel(name))
            names.push_back(name);
    return names;
}

nlohmann::json hardwarePreset(const std::string& name, const std::string& origin, const std::string& pointer)
{
    const auto& presets = embeddedPresetTexts();
    auto it = isHostModel(name) ? presets.end() : presets.find(name);
    if (it == presets.end())
        throw ConfigError(origin, pointer, fmt::format("unknown hardware preset \"{}\" (presets: {}; or give an object)", name,
                                                       fmt::join(hardwarePresetNames(), ", ")));
    nlohmann::json preset = nlohmann::json::parse(it->second);
    if (!preset.contains("base"))
        return preset;
    // The presets name their bases as sibling files: "mk2.json".
    std::string base = preset.at("base").get<std::string>();
    preset.erase("base");
    nlohmann::json out = hardwarePreset(base.substr(0, base.rfind(".json")), origin, pointer);
    out.merge_patch(preset);
    return out;
}

std::vector<std::string> hostModelNames()
{
    std::vector<std::string> names;
    for (const auto& [name, text] : embeddedPresetTexts())
        if (isHostModel(name))
            names.push_back(name.substr(kHostFolder.size()));
    return names;
}

nlohmann::json hostModel(const std::string& name, const std::string& origin, const std::string& pointer)
{
    const auto& presets = embeddedPresetTexts();
    auto it = presets.find(std::string(kHostFolder) + name);
    if (it == presets.end())
        throw ConfigError(origin, pointer, fmt::format("unknown host model \"{}\" (host models: {}; or give an object)", name,
                                                       fmt::join(hostModelNames(), ", ")));
    return nlohmann::json::parse(it->second);
}

std::string hostModelNameOf(const HostParams& host)
{
    for (const std::string& name : hostModelNames()) {
        const nlohmann::json model = hostModel(name, "", "");
        if (model.at("call_overhead_seconds").get<double>() == host.callOverheadSeconds &&
            model.at("sync_latency_seconds").get<double>() == host.syncLatencySeconds)
            return name;
    }
    return "custom";
}

} // namespace ipusim::config
