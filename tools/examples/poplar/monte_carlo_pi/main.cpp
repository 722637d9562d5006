// pi by Monte Carlo on every worker of every tile of one IPU: a MultiVertex a tile, each of its six
// workers counting the points of its own stream inside the quarter circle.
//   ./monte_carlo_pi [samples a worker=1000]
// Checks the counts against the same streams drawn in plain C++, then prints pi and the profile.
#include "Random.hpp"

#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <iostream>
#include <string>
#include <vector>

using namespace poplar;

int main(int argc, char** argv)
{
    const unsigned samples = argc > 1 ? unsigned(std::stoul(argv[1])) : 1000;
    Device device = DeviceManager::createDeviceManager().getDevices(TargetType::IPU, 1).at(0);
    if (!device.attach()) {
        std::cerr << "no IPU device could be attached\n";
        return 1;
    }
    const Target& target = device.getTarget();
    const unsigned tiles = target.getNumTiles(), workers = target.getNumWorkerContexts();
    Graph graph(target);
    graph.addCodelets("codelets.cpp");
    Tensor hits = graph.addVariable(UNSIGNED_INT, {tiles, workers}, "hits");
    ComputeSet cs = graph.addComputeSet("countInside");
    for (unsigned t = 0; t < tiles; ++t) {
        graph.setTileMapping(hits[t], t);
        VertexRef v = graph.addVertex(cs, "CountInside", {{"hits", hits[t]}});
        graph.setInitialValue(v["seed"], t);
        graph.setInitialValue(v["samples"], samples);
        graph.setTileMapping(v, t);
        // The whole tile's cycles (a MultiVertex): six workers each 12 cycles a sample (two
        // draws, two multiplies, an add, a compare), interleaved by the barrel, and 50 to start.
        graph.setPerfEstimate(v, 50 + workers * 12 * samples);
    }
    graph.createHostRead("hits", hits);
    Engine engine(graph, program::Execute(cs));
    engine.load(device);
    engine.run();
    std::vector<unsigned> counts(tiles * workers);
    engine.readTensor("hits", counts.data(), counts.data() + counts.size());

    unsigned long long inside = 0;
    for (unsigned t = 0; t < tiles; ++t)
        for (unsigned w = 0; w < workers; ++w) {
            montecarlo::Generator g(t * workers + w);
            unsigned want = 0;
            for (unsigned i = 0; i < samples; ++i) {
                const float x = g.uniform(), y = g.uniform();
                want += x * x + y * y <= 1.0f;
            }
            if (counts[t * workers + w] != want) {
                std::cerr << "tile " << t << " worker " << w << ": the IPU counts " << counts[t * workers + w] << ", plain C++ " << want << "\n";
                return 1;
            }
            inside += want;
        }
    const double pi = 4.0 * double(inside) / (double(tiles) * workers * samples);
    std::cout << "pi is about " << pi << " from " << tiles * workers * samples << " points: the counts match plain C++\n";
    engine.printProfileSummary(std::cout);
    return 0;
}
