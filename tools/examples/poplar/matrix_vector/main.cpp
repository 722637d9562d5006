// y = A x over many tiles, in the style of Graphcore's matrix-vector tutorial: each row split in
// segments, a partial dot product a segment (one vertex a tile), the partials exchanged and
// reduced; x streamed in, y streamed out. Checked against plain C++; prints the profile.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poputil/TileMapping.hpp>

#include <cmath>
#include <iostream>
#include <vector>

using namespace poplar;
using namespace poplar::program;

int main()
{
    const unsigned rows = 128, cols = 256, segments = 8, segment = cols / segments;
    auto manager = DeviceManager::createDeviceManager();
    Device device = manager.getDevices(TargetType::IPU, 1).at(0);
    if (!device.attach()) {
        std::cerr << "no IPU device could be attached\n";
        return 1;
    }
    const Target& target = device.getTarget();
    Graph graph(target);
    graph.addCodelets("codelets.gp");

    Tensor matrix = graph.addVariable(FLOAT, {rows, cols}, "matrix");
    Tensor x = graph.addVariable(FLOAT, {cols}, "x");
    Tensor partials = graph.addVariable(FLOAT, {rows, segments}, "partials");
    Tensor y = graph.addVariable(FLOAT, {rows}, "y");
    poputil::mapTensorLinearly(graph, x);
    poputil::mapTensorLinearly(graph, y);

    ComputeSet mulCS = graph.addComputeSet("mulCS");
    ComputeSet reduceCS = graph.addComputeSet("reduceCS");
    const unsigned tiles = target.getNumTiles();
    for (unsigned r = 0; r < rows; ++r) {
        for (unsigned s = 0; s < segments; ++s) {
            const unsigned tile = (r * segments + s) % tiles;
            Tensor a = matrix[r].slice(s * segment, (s + 1) * segment);
            graph.setTileMapping(a, tile);
            graph.setTileMapping(partials[r][s], tile);
            VertexRef v = graph.addVertex(mulCS, "DotProductVertex", {{"a", a}, {"b", x.slice(s * segment, (s + 1) * segment)},
                                                                      {"out", partials[r][s]}});
            graph.setTileMapping(v, tile);
            graph.setPerfEstimate(v, 20 + 2 * segment);
        }
        // The reduction runs where y[r] lives.
        VertexRef v = graph.addVertex(reduceCS, "ReduceVertex", {{"in", partials[r]}, {"out", y[r]}});
        const auto mapping = graph.getTileMapping(y[r]);
        unsigned yTile = 0;
        while (mapping[yTile].empty())
            ++yTile;
        graph.setTileMapping(v, yTile);
        graph.setPerfEstimate(v, 10 + segments);
    }

    auto xIn = graph.addHostToDeviceFIFO("x-in", FLOAT, cols);
    auto yOut = graph.addDeviceToHostFIFO("y-out", FLOAT, rows);
    graph.createHostWrite("matrix", matrix);
    Sequence prog{Copy(xIn, x), Execute(mulCS), Execute(reduceCS), Copy(y, yOut)};

    Engine engine(graph, prog);
    engine.load(device);
    std::vector<float> hostMatrix(rows * cols), hostX(cols), hostY(rows);
    for (unsigned i = 0; i < rows * cols; ++i)
        hostMatrix[i] = float(int(i % 17) - 8) / 8.0f;
    for (unsigned j = 0; j < cols; ++j)
        hostX[j] = float(int(j % 5) - 2);
    engine.writeTensor("matrix", hostMatrix.data(), hostMatrix.data() + hostMatrix.size());
    engine.connectStream("x-in", hostX.data());
    engine.connectStream("y-out", hostY.data());
    engine.run(0);

    for (unsigned r = 0; r < rows; ++r) {
        float want = 0;
        for (unsigned s = 0; s < segments; ++s) {
            float part = 0;
            for (unsigned j = s * segment; j < (s + 1) * segment; ++j)
                part += hostMatrix[r * cols + j] * hostX[j];
            want += part;
        }
        if (std::fabs(hostY[r] - want) > 1e-4f * (1 + std::fabs(want))) {
            std::cerr << "row " << r << ": the IPU gives " << hostY[r] << ", plain C++ " << want << "\n";
            return 1;
        }
    }
    std::cout << "y = A x matches plain C++ on all " << rows << " rows\n";
    engine.printProfileSummary(std::cout);
    return 0;
}
