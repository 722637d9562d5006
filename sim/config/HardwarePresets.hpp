// SPDX-License-Identifier: MIT
#pragma once
#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace ipusim::config {

/** configs/hardware/<name>.json as built into the binary, by name (mk2, m2000, pod16, ...). */
const std::map<std::string, std::string>& embeddedPresetTexts();

/** The names of the hardware presets. */
std::vector<std::string> hardwarePresetNames();

/** A hardware preset as a /system object, its "base" chain resolved among the presets; throws
 *  ConfigError naming `origin` and `pointer` for an unknown name. */
nlohmann::json hardwarePreset(const std::string& name, const std::string& origin, const std::string& pointer);

} // namespace ipusim::config
