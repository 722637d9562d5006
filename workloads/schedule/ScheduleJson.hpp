// SPDX-License-Identifier: MIT
#pragma once
#include "models/system/SystemParams.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "workloads/schedule/Schedule.hpp"

namespace ipusim {

/** Builds a Schedule from a hand-written `"workload": {"kind": "schedule"}`: `steps` for one
 *  IPU or `programs` for several. Vertices named in compute steps are costed by the same cost
 *  model the compiler uses. */
Schedule scheduleFromJson(const config::LoadedConfig& cfg, const SystemParams& system);

/** Costs one named vertex with its JSON params; errors name `pointer`. */
uint64_t vertexCyclesFromJson(const config::LoadedConfig& cfg, const std::string& pointer,
                              const std::string& vertex, const nlohmann::json& params, const IpuParams& hw);

} // namespace ipusim
