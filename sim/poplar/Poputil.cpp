// SPDX-License-Identifier: MIT
#include <poputil/TileMapping.hpp>

#include <algorithm>

namespace poputil {

std::vector<std::vector<poplar::Interval>> calcLinearTileMapping(const poplar::Graph& graph, std::size_t numElements,
                                                                 unsigned minElementsPerTile, unsigned grainSize)
{
    const std::size_t tiles = graph.getTarget().getNumTiles();
    const std::size_t grain = std::max(1u, grainSize);
    const std::size_t grains = (numElements + grain - 1) / grain;
    std::size_t perTile = (grains + tiles - 1) / tiles; // grains a tile
    perTile = std::max(perTile, (std::size_t(minElementsPerTile) + grain - 1) / grain);
    std::vector<std::vector<poplar::Interval>> out(tiles);
    for (std::size_t tile = 0, begin = 0; tile < tiles && begin < numElements; ++tile) {
        const std::size_t end = std::min(numElements, begin + perTile * grain);
        out[tile].emplace_back(begin, end);
        begin = end;
    }
    return out;
}

void mapTensorLinearly(poplar::Graph& graph, const poplar::Tensor& t, unsigned minElementsPerTile, unsigned grainSize)
{
    graph.setTileMapping(t, calcLinearTileMapping(graph, t.numElements(), minElementsPerTile, grainSize));
}

} // namespace poputil
