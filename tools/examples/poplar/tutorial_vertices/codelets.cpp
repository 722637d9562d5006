// A vertex summing its input, in the style of Graphcore's Poplar tutorial on vertices.
#include <poplar/Vertex.hpp>

class SumVertex : public poplar::Vertex
{
public:
    poplar::Input<poplar::Vector<float>> in;
    poplar::Output<float> out;

    bool compute()
    {
        *out = 0;
        for (const auto& v : in)
            *out += v;
        return true;
    }
};
