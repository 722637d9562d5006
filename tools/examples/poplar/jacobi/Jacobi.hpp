// A 2-D five-point Jacobi stencil over every tile of a device, in the style of the public HPC
// cookbooks for the IPU: the grid split into one block of h x w points a tile, two copies of it
// (A and B), one vertex a tile reading its block and halo of one copy and writing its block of the
// other; a Repeat of (A -> B, B -> A). The grid's fixed boundary lives on the edge tiles.
#pragma once
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <algorithm>
#include <vector>

namespace jacobi {

struct Stencil
{
    unsigned tileRows = 0, tileCols = 0; // the tiles as a grid, row-major
    unsigned h = 0, w = 0;               // points of a block
    poplar::Tensor a, b;                 // (tileRows h + 2) x (tileCols w + 2), boundary included
    poplar::program::Program program;

    [[nodiscard]] unsigned rows() const { return tileRows * h + 2; }
    [[nodiscard]] unsigned cols() const { return tileCols * w + 2; }
};

/** The cycles the program gives each vertex: 5 a point (four loads, three adds, a multiply and a
 *  store, paired in bundles) and 20 to set up; an estimate of the program's, not of ipusim's. */
inline unsigned jacobiCycles(unsigned h, unsigned w) { return 20 + 5 * h * w; }

/** Maps point (i, j) of a grid copy to the tile of the block it belongs to (a boundary point to
 *  the block beside it). */
inline void mapGrid(poplar::Graph& graph, const Stencil& s, const poplar::Tensor& grid)
{
    for (unsigned i = 0; i < s.rows(); ++i) {
        const unsigned blockRow = std::min(i == 0 ? 0 : (i - 1) / s.h, s.tileRows - 1);
        for (unsigned c = 0; c < s.tileCols; ++c) {
            const unsigned first = c == 0 ? 0 : 1 + c * s.w, last = c + 1 == s.tileCols ? s.cols() : 1 + (c + 1) * s.w;
            graph.setTileMapping(grid[i].slice(first, last), blockRow * s.tileCols + c);
        }
    }
}

/** One compute set: every tile's block of `to` from its block and halo of `from`. */
inline poplar::ComputeSet step(poplar::Graph& graph, const Stencil& s, const poplar::Tensor& from, const poplar::Tensor& to,
                               const std::string& name)
{
    poplar::ComputeSet cs = graph.addComputeSet(name);
    for (unsigned r = 0; r < s.tileRows; ++r)
        for (unsigned c = 0; c < s.tileCols; ++c) {
            const unsigned tile = r * s.tileCols + c;
            poplar::VertexRef v = graph.addVertex(cs, "JacobiStep");
            std::vector<poplar::Tensor> in, out;
            for (unsigned i = 0; i < s.h + 2; ++i)
                in.push_back(from[r * s.h + i].slice(c * s.w, c * s.w + s.w + 2));
            for (unsigned i = 0; i < s.h; ++i)
                out.push_back(to[r * s.h + 1 + i].slice(c * s.w + 1, c * s.w + 1 + s.w));
            graph.connect(v["in"], in);
            graph.connect(v["out"], out);
            graph.setTileMapping(v, tile);
            graph.setPerfEstimate(v, jacobiCycles(s.h, s.w));
        }
    return cs;
}

/** The stencil over a grid of tileRows x tileCols tiles (all the graph's), `iterations` steps
 *  (even: the result is back in A). */
inline Stencil build(poplar::Graph& graph, unsigned tileRows, unsigned tileCols, unsigned h, unsigned w, unsigned iterations)
{
    Stencil s;
    s.tileRows = tileRows, s.tileCols = tileCols, s.h = h, s.w = w;
    s.a = graph.addVariable(poplar::FLOAT, {s.rows(), s.cols()}, "gridA");
    s.b = graph.addVariable(poplar::FLOAT, {s.rows(), s.cols()}, "gridB");
    mapGrid(graph, s, s.a);
    mapGrid(graph, s, s.b);
    poplar::ComputeSet ab = step(graph, s, s.a, s.b, "jacobiAB"), ba = step(graph, s, s.b, s.a, "jacobiBA");
    s.program = poplar::program::Repeat(iterations / 2, poplar::program::Sequence{poplar::program::Execute(ab), poplar::program::Execute(ba)});
    return s;
}

/** The same stencil in plain C++ on the host, for the check. */
inline std::vector<float> reference(std::vector<float> grid, unsigned rows, unsigned cols, unsigned iterations)
{
    std::vector<float> next = grid;
    for (unsigned it = 0; it < iterations; ++it) {
        for (unsigned i = 1; i + 1 < rows; ++i)
            for (unsigned j = 1; j + 1 < cols; ++j)
                next[i * cols + j] = 0.25f * (grid[(i - 1) * cols + j] + grid[(i + 1) * cols + j] + grid[i * cols + j - 1] +
                                              grid[i * cols + j + 1]);
        std::swap(grid, next);
    }
    return grid;
}

/** A start: 0 inside, the boundary hot on the left (100) and cold elsewhere. */
inline std::vector<float> initialGrid(unsigned rows, unsigned cols)
{
    std::vector<float> g(std::size_t(rows) * cols, 0.0f);
    for (unsigned i = 0; i < rows; ++i)
        g[std::size_t(i) * cols] = 100.0f;
    return g;
}

} // namespace jacobi
