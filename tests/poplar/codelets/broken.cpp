// A codelet that does not compile: the error names this file and line 9.
#include <poplar/Vertex.hpp>

class Broken : public poplar::Vertex
{
public:
    poplar::Output<float> out;
    bool compute()
    {
        *out = undeclared_value;
        return true;
    }
};
