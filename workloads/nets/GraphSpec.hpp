// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/graph/ModelSpec.hpp"
#include "workloads/strategies/WorkloadOptions.hpp"
#include "workloads/training/Training.hpp"

namespace ipusim {

/** `"workload": {"kind": "graph"}`, decoded: a model the user describes layer by layer, with
 *  the shared options and the training ones; shapes are checked when it is built. */
struct GraphSpec
{
    WorkloadOptions options;
    ModelSpec model;
    OptimizerSpec optimizer;
    MemoryProportion availableMemoryProportion;
};

} // namespace ipusim
