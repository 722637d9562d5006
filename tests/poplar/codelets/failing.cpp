// A vertex whose compute() reports failure.
#include <poplar/Vertex.hpp>

class Fails : public poplar::Vertex
{
public:
    poplar::Input<float> in;
    bool compute() { return *in > 0; }
};
