// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: PopLibs' tile-mapping helpers.
#include <poplar/Graph.hpp>
#include <poplar/Tensor.hpp>

#include <vector>

namespace poputil {

/** Whole grains of `grainSize` elements, an equal share a tile in order from tile 0, at least
 *  `minElementsPerTile` a tile used. */
std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph& graph, std::size_t numElements,
                                                                 unsigned minElementsPerTile = 0, unsigned grainSize = 1);
void mapTensorLinearly(poplar::Graph& graph, const poplar::Tensor& t, unsigned minElementsPerTile = 0, unsigned grainSize = 1);

} // namespace poputil
