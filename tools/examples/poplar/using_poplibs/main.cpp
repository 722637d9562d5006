// A Poplar program using PopLibs, in the style of Graphcore's tutorial on PopLibs: an element-wise
// add, a matrix product and a reduction, each a call that adds to the program. Checks the results
// against plain C++ and prints the profile.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>
#include <poplar/Program.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Reduce.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <cmath>
#include <iostream>
#include <vector>

using namespace poplar;
using namespace poplar::program;

int main()
{
    Device device = DeviceManager::createDeviceManager().getDevices(TargetType::IPU, 1).at(0);
    if (!device.attach()) {
        std::cerr << "no IPU device could be attached\n";
        return 1;
    }
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    poplin::addCodelets(graph);

    const std::size_t rows = 90, inner = 60, cols = 30;
    Tensor v1 = graph.addVariable(FLOAT, {rows, inner}, "v1");
    Tensor v2 = graph.addVariable(FLOAT, {rows, inner}, "v2");
    poputil::mapTensorLinearly(graph, v1);
    poputil::mapTensorLinearly(graph, v2);
    Tensor m2 = poplin::createMatMulInputRHS(graph, FLOAT, {rows, inner}, {inner, cols}, "m2");

    Sequence prog;
    Tensor v3 = popops::add(graph, v1, v2, prog, "Add");                 // v1 + v2
    Tensor m3 = poplin::matMul(graph, v3, m2, prog, "MatMul");            // (v1 + v2) m2
    Tensor colSums = popops::reduce(graph, m3, {0}, popops::ReduceParams(popops::Operation::ADD), prog, "Reduce");
    graph.createHostWrite("v1", v1);
    graph.createHostWrite("v2", v2);
    graph.createHostWrite("m2", m2);
    graph.createHostRead("sums", colSums);

    Engine engine(graph, prog);
    engine.load(device);
    std::vector<float> a(rows * inner), b(rows * inner), m(inner * cols), sums(cols);
    for (std::size_t i = 0; i < a.size(); ++i) {
        a[i] = float(i % 11) / 10;
        b[i] = float(i % 3) - 1;
    }
    for (std::size_t i = 0; i < m.size(); ++i)
        m[i] = float(i % 7) / 7;
    engine.writeTensor("v1", a.data(), a.data() + a.size());
    engine.writeTensor("v2", b.data(), b.data() + b.size());
    engine.writeTensor("m2", m.data(), m.data() + m.size());
    engine.run(0);
    engine.readTensor("sums", sums.data(), sums.data() + sums.size());

    for (std::size_t j = 0; j < cols; ++j) {
        double want = 0;
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t k = 0; k < inner; ++k)
                want += double(a[i * inner + k] + b[i * inner + k]) * m[k * cols + j];
        if (std::fabs(sums[j] - want) > 1e-3 * (1 + std::fabs(want))) {
            std::cerr << "column " << j << ": the IPU gives " << sums[j] << ", plain C++ " << want << "\n";
            return 1;
        }
    }
    std::cout << "the column sums of (v1 + v2) m2 match plain C++\n";
    engine.printProfileSummary(std::cout);
    return 0;
}
