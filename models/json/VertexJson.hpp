// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/IpuParams.hpp"
#include "models/timing/VertexTable.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace ipusim {

/** One vertex of a hand-written compute step, named as vertexTable() names it, with its JSON
 *  params: the call its row prices (cyclesOf), by the cost model the compiler uses; errors name
 *  `pointer` (the vertex). `hw` gives the AMP geometry a convolution's channels are grouped by. */
VertexCall vertexCallFromJson(const Diagnostics& diag, const std::string& pointer, const std::string& vertex,
                              const nlohmann::json& params, const IpuParams& hw);

} // namespace ipusim
