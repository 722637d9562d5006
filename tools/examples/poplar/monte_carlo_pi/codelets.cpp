// Monte Carlo estimate of pi on every worker of a tile: each worker draws `samples` points in the
// unit square from its own generator and counts those inside the quarter circle.
#include <poplar/Vertex.hpp>

#include "Random.hpp"

using namespace poplar;

class CountInside : public MultiVertex
{
public:
    Output<Vector<unsigned>> hits; // one count a worker
    unsigned seed;
    unsigned samples;

    bool compute(unsigned workerId)
    {
        montecarlo::Generator g(seed * numWorkers() + workerId);
        unsigned inside = 0;
        for (unsigned i = 0; i < samples; ++i) {
            const float x = g.uniform(), y = g.uniform();
            inside += x * x + y * y <= 1.0f;
        }
        hits[workerId] = inside;
        return true;
    }
};
