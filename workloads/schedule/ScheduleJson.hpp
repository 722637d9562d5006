// SPDX-License-Identifier: MIT
#pragma once
#include "models/ipu/IpuParams.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "workloads/schedule/Schedule.hpp"

namespace ipusim {

/** Builds a one-IPU Schedule from a hand-written `"workload": {"kind": "schedule"}`. Vertices
 *  named in compute steps are costed by the same cost model the compiler uses. */
Schedule scheduleFromJson(const config::LoadedConfig& cfg, const IpuParams& hw);

/** Costs one named vertex with its JSON params; errors name `pointer`. */
uint64_t vertexCyclesFromJson(const config::LoadedConfig& cfg, const std::string& pointer,
                              const std::string& vertex, const nlohmann::json& params, const IpuParams& hw);

} // namespace ipusim
