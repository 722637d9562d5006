// A five-point Jacobi stencil over every tile of a device of 1 or more IPUs, with halo exchange:
//   ./jacobi [ipus=1] [iterations=20] [block=8]
// Checks the grid against the same stencil in plain C++, then prints the profile.
#include "Jacobi.hpp"

#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

using namespace poplar;

int main(int argc, char** argv)
{
    const unsigned ipus = argc > 1 ? unsigned(std::stoul(argv[1])) : 1;
    const unsigned iterations = argc > 2 ? unsigned(std::stoul(argv[2])) : 20;
    const unsigned block = argc > 3 ? unsigned(std::stoul(argv[3])) : 8;
    Device device = DeviceManager::createDeviceManager().getDevices(TargetType::IPU, ipus).at(0);
    if (!device.attach()) {
        std::cerr << "no device of " << ipus << " IPUs could be attached\n";
        return 1;
    }
    Graph graph(device.getTarget());
    graph.addCodelets("codelets.cpp");
    // 1,472 tiles a IPU as 16 rows of 92: IPU k holds tile rows 16k to 16k + 15.
    const unsigned tileCols = 92, tileRows = device.getTarget().getNumTiles() / tileCols;
    const jacobi::Stencil s = jacobi::build(graph, tileRows, tileCols, block, block, iterations);
    graph.createHostWrite("gridA", s.a);
    graph.createHostWrite("gridB", s.b);
    graph.createHostRead("gridA", s.a);

    Engine engine(graph, s.program);
    engine.load(device);
    const std::vector<float> start = jacobi::initialGrid(s.rows(), s.cols());
    engine.writeTensor("gridA", start.data(), start.data() + start.size());
    engine.writeTensor("gridB", start.data(), start.data() + start.size());
    engine.run();
    std::vector<float> result(start.size());
    engine.readTensor("gridA", result.data(), result.data() + result.size());
    const std::vector<float> want = jacobi::reference(start, s.rows(), s.cols(), iterations / 2 * 2);
    for (std::size_t k = 0; k < want.size(); ++k)
        if (result[k] != want[k]) {
            std::cerr << "point " << k / s.cols() << "," << k % s.cols() << ": the IPU gives " << result[k] << ", plain C++ " << want[k] << "\n";
            return 1;
        }
    std::cout << s.rows() << " x " << s.cols() << " grid on " << device.getTarget().getNumTiles() << " tiles, " << iterations
              << " iterations: matches plain C++\n";
    engine.printProfileSummary(std::cout);
    return 0;
}
