// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "workloads/nets/WorkloadSpec.hpp"
#include "workloads/strategies/CompiledSchedule.hpp"

namespace ipusim {

/** The compiler's entry point: a decoded workload onto the system, as a Schedule with each
 *  program's memory accounted (see CompiledSchedule). Bad input only compiling can find (see
 *  compileGraph) is reported through `diag`. Taken by value: a Schedule read from a document
 *  is moved out, not copied. */
CompiledSchedule compileWorkload(WorkloadSpec workload, const SystemParams& system, const Diagnostics& diag);

} // namespace ipusim
