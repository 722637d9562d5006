// A five-point Jacobi step of one tile's block of a 2-D grid: each point becomes the mean of its
// four neighbours. The vertex reads its block with a one-point halo (rows of `in`, h + 2 of
// w + 2 points; the halo lives on the neighbouring tiles and arrives by exchange) and writes the
// block (rows of `out`, h of w).
#include <poplar/Vertex.hpp>

using namespace poplar;

class JacobiStep : public Vertex
{
public:
    Vector<Input<Vector<float>>> in;
    Vector<Output<Vector<float>>> out;

    bool compute()
    {
        for (unsigned i = 0; i < out.size(); ++i)
            for (unsigned j = 0; j < out[i].size(); ++j)
                out[i][j] = 0.25f * (in[i][j + 1] + in[i + 2][j + 1] + in[i + 1][j] + in[i + 1][j + 2]);
        return true;
    }
};
