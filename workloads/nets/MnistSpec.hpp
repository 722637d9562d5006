// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/strategies/WorkloadOptions.hpp"

namespace ipusim {

/** `"workload": {"kind": "mnist"}`, decoded: the tutorial's CNN takes only the shared options. */
struct MnistSpec
{
    WorkloadOptions options;
    MemoryProportion availableMemoryProportion;
};

} // namespace ipusim
