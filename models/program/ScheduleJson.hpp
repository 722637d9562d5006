// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace ipusim {

/** Checks one step object against its declared form before it is read (the config layer
 *  validates it against the step's JSON Schema definition); `op` is its "op". */
using StepCheck = std::function<void(const nlohmann::json& step, const std::string& op, const std::string& pointer)>;

/** Builds a Schedule from a hand-written schedule document (the `/workload` of a config whose
 *  kind is "schedule"): `steps` for one IPU or `programs` for several, `samples` per host call.
 *  `pointer` is where the document sits; errors name pointers below it through `diag`.
 *  Vertices named in compute steps are costed by the same cost model the compiler uses. */
Schedule scheduleFromJson(const nlohmann::json& doc, const std::string& pointer, const SystemParams& system,
                          const Diagnostics& diag, const StepCheck& check = {});

/** Costs one named vertex with its JSON params; errors name `pointer`. */
uint64_t vertexCyclesFromJson(const Diagnostics& diag, const std::string& pointer, const std::string& vertex,
                              const nlohmann::json& params, const IpuParams& hw);

} // namespace ipusim
