// SPDX-License-Identifier: MIT
#pragma once
#include "models/timing/VertexTable.hpp"
#include "workloads/graph/RecurrentCell.hpp"

#include <vector>

// The vertices a recurrent layer's cell runs each step, forward and backward, on a tile holding
// `u` of the state's [B, H] elements (RecurrentOps.cpp): popnn's sequence of element-wise
// vertices, each priced by the vertex table.
namespace ipusim {

std::vector<VertexCall> recurrentStepCalls(RecurrentCell cell, Precision type, uint64_t u);
std::vector<VertexCall> recurrentStepGradCalls(RecurrentCell cell, Precision type, uint64_t u);

} // namespace ipusim
