// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

// The Schedule as a JSON document: the `/workload` of a config whose kind is "schedule". People
// write one by hand; `ipusim compile` writes the compiler's, which reads back to the same
// Schedule, so a compiled model can be kept, diffed, edited and simulated on its own.
namespace ipusim {

/** Checks one step object against its declared form before it is read (the config layer
 *  validates it against the step's JSON Schema definition); `op` is its "op". */
using StepCheck = std::function<void(const nlohmann::json& step, const std::string& op, const std::string& pointer)>;

/** Builds a Schedule from a schedule document: `steps` (with `fragments` and `tensors`) for one
 *  IPU or `programs` for several, `samples` per host call. `pointer` is where the document
 *  sits; errors name pointers below it through `diag`. Vertices named in compute steps are
 *  costed by the same cost model the compiler uses. */
Schedule scheduleFromJson(const nlohmann::json& doc, const std::string& pointer, const SystemParams& system,
                          const Diagnostics& diag, const StepCheck& check = {});

/** The document scheduleFromJson reads back to `schedule` (every field but its name, which is
 *  the config's): one program per IPU, compute steps with their costed cycles, tensors live
 *  between program points. `schedule` must hold the invariants checkSchedule checks. */
nlohmann::json scheduleToJson(const Schedule& schedule);

} // namespace ipusim
