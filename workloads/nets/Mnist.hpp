// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/nets/MnistSpec.hpp"

namespace ipusim {

/** Tensors of the MNIST graph the schedule builder needs by name. */
struct MnistTensors
{
    int images = -1, labels = -1, logits = -1, loss = -1;
};

/** The CNN of the PopTorch pipelining tutorial, forward only:
 *  B1 Conv(1->10, k5) MaxPool(2) ReLU; B2 Conv(10->20, k5) MaxPool(2) ReLU;
 *  B3 Linear(320->256) ReLU; B4 Linear(256->10) [+ CrossEntropy]. */
Graph mnistForward(uint64_t batch, Precision type, Precision partials, bool withLoss, MnistTensors& tensors);

/** Compiles the MNIST workload: training (forward, backward, AdamW, gradient accumulation)
 *  or inference, on one IPU or placed over several by its strategy (pipelined, sharded,
 *  phased), inside the device-iteration loop. */
Schedule compileMnist(const MnistSpec& spec, const SystemParams& system, const Diagnostics& diag);

} // namespace ipusim
