// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/IpuParams.hpp"
#include "models/timing/VertexTable.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace ipusim {

/** A vertex of a hand-written compute step, priced: its tile cycles and its codelet. */
struct PricedVertex
{
    uint64_t cycles = 0;
    Codelet codelet;
};

/** Costs one vertex of a hand-written compute step, named as vertexTable() names it, with its
 *  JSON params, by the cost model the compiler uses; errors name `pointer` (the vertex). */
PricedVertex vertexCyclesFromJson(const Diagnostics& diag, const std::string& pointer, const std::string& vertex,
                              const nlohmann::json& params, const IpuParams& hw);

} // namespace ipusim
