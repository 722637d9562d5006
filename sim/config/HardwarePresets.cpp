// SPDX-License-Identifier: MIT
#include "sim/config/HardwarePresets.hpp"

#include "sim/config/ConfigError.hpp"

#include <fmt/format.h>

namespace ipusim::config {

std::vector<std::string> hardwarePresetNames()
{
    std::vector<std::string> names;
    for (const auto& [name, text] : embeddedPresetTexts())
        names.push_back(name);
    return names;
}

nlohmann::json hardwarePreset(const std::string& name, const std::string& origin, const std::string& pointer)
{
    const auto& presets = embeddedPresetTexts();
    auto it = presets.find(name);
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

} // namespace ipusim::config
