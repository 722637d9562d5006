// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "workloads/graph/ModelSpec.hpp"
#include "workloads/nets/MnistSpec.hpp"
#include "workloads/strategies/CompiledSchedule.hpp"

namespace ipusim {

/** The CNN of the PopTorch pipelining tutorial, as a model graph:
 *  B1 Conv(1->10, k5) MaxPool(2) ReLU; B2 Conv(10->20, k5) MaxPool(2) ReLU;
 *  B3 Linear(320->256) ReLU; B4 Linear(256->10), CrossEntropy. */
ModelSpec mnistModel();

/** Compiles the MNIST workload: training (forward, backward, AdamW, gradient accumulation)
 *  or inference, on one IPU or placed over several by its strategy (pipelined, sharded,
 *  phased), inside the device-iteration loop. */
CompiledSchedule compileMnist(const MnistSpec& spec, const SystemParams& system, const Diagnostics& diag);

} // namespace ipusim
