// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "workloads/nets/GraphSpec.hpp"

namespace ipusim {

/** Compiles a model graph the user describes: built layer by layer (buildModelGraph), trained
 *  from its loss layers (backward, accumulation, the optimizer) or run for inference, on the
 *  placement its strategy and the layers' IPUs give. */
Schedule compileGraphModel(const GraphSpec& spec, const SystemParams& system, const Diagnostics& diag);

} // namespace ipusim
