// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Precision.hpp"
#include "models/timing/VertexTable.hpp"
#include "workloads/graph/Graph.hpp"

#include <cstdint>
#include <vector>

namespace ipusim {

/** The recipe of an activation (workloads/graph/Activation.hpp) or its gradient: the vertex
 *  calls a tile runs over its `elements` of `type`, as PopART lowers the op. A logic error for
 *  an op that is not an activation's, or one whose recipe is missing (a test walks every row). */
std::vector<VertexCall> activationCalls(OpKind kind, Precision type, uint64_t elements);

} // namespace ipusim
