// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace ipusim::config {

/** configs/hardware/<name>.json and configs/hardware/host/<name>.json as built into the binary,
 *  by their path under configs/hardware/ without ".json" (mk2, m2000, pod16, ..., host/ideal). */
const std::map<std::string, std::string>& embeddedPresetTexts();

/** The names of the hardware presets (the /system objects: mk2, m2000, pod16, ...). */
std::vector<std::string> hardwarePresetNames();

/** A hardware preset as a /system object, its "base" chain resolved among the presets; throws
 *  ConfigError naming `origin` and `pointer` for an unknown name. */
nlohmann::json hardwarePreset(const std::string& name, const std::string& origin, const std::string& pointer);

/** The names of the host models (configs/hardware/host/: ideal, poptorch_calibrated). */
std::vector<std::string> hostModelNames();

/** A host model as a /system/host object; throws ConfigError naming `origin` and `pointer` for
 *  an unknown name. */
nlohmann::json hostModel(const std::string& name, const std::string& origin, const std::string& pointer);

/** The host model whose call overhead and exchange latency `host` has, or "custom": a summary
 *  names the model by its values, so it cannot name one the values no longer are. */
std::string hostModelNameOf(const HostParams& host);

} // namespace ipusim::config
