// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/IpuParams.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace ipusim {

/** Costs one named vertex of a hand-written compute step with its JSON params, by the cost
 *  model the compiler uses; errors name `pointer` (the vertex) through `diag`. */
uint64_t vertexCyclesFromJson(const Diagnostics& diag, const std::string& pointer, const std::string& vertex,
                              const nlohmann::json& params, const IpuParams& hw);

} // namespace ipusim
