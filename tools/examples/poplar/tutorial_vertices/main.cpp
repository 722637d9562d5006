// A Poplar host program in the style of Graphcore's tutorials: variables mapped to tiles, a host
// stream, a compute set of one vertex a tile, and a host read. It checks its sums against plain
// C++ and prints the profile of its run.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>

#include <iostream>
#include <numeric>
#include <vector>

using namespace poplar;
using namespace poplar::program;

int main()
{
    auto manager = DeviceManager::createDeviceManager();
    auto devices = manager.getDevices(TargetType::IPU, 1);
    Device device;
    for (auto& d : devices)
        if (d.attach()) {
            device = std::move(d);
            break;
        }
    if (!device.isAttached()) {
        std::cerr << "no IPU device could be attached\n";
        return 1;
    }
    Graph graph(device.getTarget());
    graph.addCodelets("codelets.cpp");

    const unsigned tiles = 4, width = 4;
    Tensor v1 = graph.addVariable(FLOAT, {tiles, width}, "v1");
    Tensor v2 = graph.addVariable(FLOAT, {tiles}, "v2");
    ComputeSet computeSet = graph.addComputeSet("computeSet");
    for (unsigned i = 0; i < tiles; ++i) {
        graph.setTileMapping(v1[i], i);
        graph.setTileMapping(v2[i], i);
        VertexRef vtx = graph.addVertex(computeSet, "SumVertex");
        graph.connect(vtx["in"], v1[i]);
        graph.connect(vtx["out"], v2[i]);
        graph.setTileMapping(vtx, i);
        graph.setPerfEstimate(vtx, 20);
    }
    auto inStream = graph.addHostToDeviceFIFO("v1-input-stream", FLOAT, tiles * width);
    graph.createHostRead("v2-read", v2);

    Sequence prog;
    prog.add(Copy(inStream, v1));
    prog.add(Execute(computeSet));
    prog.add(PrintTensor("v2-debug", v2));

    Engine engine(graph, prog);
    engine.load(device);
    std::vector<float> h1(tiles * width);
    std::iota(h1.begin(), h1.end(), 0.0f);
    engine.connectStream("v1-input-stream", h1.data(), h1.data() + h1.size());
    engine.run(0);

    std::vector<float> h2(tiles);
    engine.readTensor("v2-read", h2.data(), h2.data() + h2.size());
    for (unsigned i = 0; i < tiles; ++i) {
        const float want = std::accumulate(h1.begin() + i * width, h1.begin() + (i + 1) * width, 0.0f);
        if (h2[i] != want) {
            std::cerr << "row " << i << ": the IPU's sum is " << h2[i] << ", plain C++ gives " << want << "\n";
            return 1;
        }
    }
    std::cout << "sums match plain C++\n";
    engine.printProfileSummary(std::cout, {{"showExecutionSteps", "true"}});
    return 0;
}
