// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "workloads/nets/WorkloadSpec.hpp"

namespace ipusim {

/** The compiler's entry point: a decoded workload onto the system, as a Schedule. Bad input
 *  only compiling can find (see compileGraph) is reported through `diag`. Taken by value: a
 *  Schedule read from a document is moved out, not copied. */
Schedule compileWorkload(WorkloadSpec workload, const SystemParams& system, const Diagnostics& diag);

} // namespace ipusim
