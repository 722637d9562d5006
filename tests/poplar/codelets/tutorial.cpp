// Codelets of the tests: in the style of Graphcore's public Poplar tutorials, and the field kinds.
#include <poplar/Vertex.hpp>

using namespace poplar;

// The sum of a vector, one worker.
class SumVertex : public Vertex
{
public:
    Input<Vector<float>> in;
    Output<float> out;

    bool compute()
    {
        *out = 0;
        for (const auto& v : in)
            *out += v;
        return true;
    }
};

// x *= scale on each worker's share of the elements (a MultiVertex).
class ScaleInPlace : public MultiVertex
{
public:
    InOut<Vector<float>> x;
    float scale;

    bool compute(unsigned workerId)
    {
        for (unsigned i = workerId; i < x.size(); i += numWorkers())
            x[i] *= scale;
        return true;
    }
};

// The sums of a Vector of edges and of a VectorList, with integer state.
class EdgeSums : public Vertex
{
public:
    Vector<Input<Vector<int>>> parts;
    Input<VectorList<int, VectorListLayout::DELTANELEMENTS>> rows;
    Vector<unsigned> weights;
    unsigned offset;
    Output<Vector<int>> out;

    void compute()
    {
        int total = int(offset);
        for (unsigned p = 0; p < parts.size(); ++p)
            for (int v : parts[p])
                total += v * int(weights[p]);
        for (unsigned r = 0; r < rows.size(); ++r)
            for (unsigned i = 0; i < rows[r].size(); ++i)
                total += rows[r][i];
        out[0] = total;
        out[1] = int(parts.size() + rows.size());
    }
};

namespace tutorial {
// A vertex in a namespace: addVertex names it "tutorial::Negate".
class Negate : public Vertex
{
public:
    InOut<half> x;
    bool compute()
    {
        *x = half(-float(*x));
        return true;
    }
};
} // namespace tutorial

// One step of a countdown: n -= 1 (down to 0), and whether there is more to go.
class Countdown : public Vertex
{
public:
    InOut<unsigned> n;
    Output<bool> more;

    bool compute()
    {
        if (*n > 0)
            *n = *n - 1;
        *more = *n > 0;
        return true;
    }
};

// A template vertex, instantiated for the types the graph uses ("Scale<float,true>", as
// poputil::templateVertex names it).
template <typename T, bool Negate>
class Scale : public Vertex
{
public:
    InOut<Vector<T>> x;
    T factor;

    bool compute()
    {
        for (auto& v : x)
            v = T(float(v) * float(factor) * (Negate ? -1.0f : 1.0f));
        return true;
    }
};
template class Scale<float, true>;
template class Scale<int, false>;

// A supervisor vertex: compute() runs once (it counts its runs).
class CountRuns : public SupervisorVertex
{
public:
    InOut<unsigned> runs;
    bool compute()
    {
        *runs = *runs + 1;
        return true;
    }
};
