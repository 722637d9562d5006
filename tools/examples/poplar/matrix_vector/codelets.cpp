// Vertices of a matrix-vector product, in the style of Graphcore's Poplar tutorial: partial dot
// products of row segments, then the sum of each row's partials.
#include <poplar/Vertex.hpp>

using namespace poplar;

class DotProductVertex : public Vertex
{
public:
    Input<Vector<float>> a;
    Input<Vector<float>> b;
    Output<float> out;

    bool compute()
    {
        float sum = 0;
        for (unsigned i = 0; i < a.size(); ++i)
            sum += a[i] * b[i];
        *out = sum;
        return true;
    }
};

class ReduceVertex : public Vertex
{
public:
    Input<Vector<float>> in;
    Output<float> out;

    bool compute()
    {
        float sum = 0;
        for (float v : in)
            sum += v;
        *out = sum;
        return true;
    }
};
