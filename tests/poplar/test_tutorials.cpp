// SPDX-License-Identifier: MIT
// Programs in the style of Graphcore's public Poplar tutorials: their numbers against a plain
// C++ computation of the same thing.
#include "PoplarTest.hpp"

#include <poplar/IPUModel.hpp>
#include <poplar/Program.hpp>
#include <poputil/TileMapping.hpp>
#include <poputil/VertexTemplates.hpp>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <numeric>
#include <sstream>
#include <vector>

using namespace poplar;
using namespace poplar::program;
using poplar_test::codelet;

TEST_CASE("Poplar tutorial: variables, constants, copies, host streams and host reads carry their values")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    Tensor v1 = graph.addVariable(FLOAT, {4}, "v1");
    Tensor v2 = graph.addVariable(FLOAT, {4}, "v2");
    for (unsigned i = 0; i < 4; ++i) {
        graph.setTileMapping(v1[i], i);
        graph.setTileMapping(v2[i], i);
    }
    Tensor c1 = graph.addConstant<float>(FLOAT, {4}, {1.0f, 1.5f, 2.0f, 2.5f});
    graph.setTileMapping(c1, 0);
    Tensor v3 = graph.addVariable(FLOAT, {4, 4}, "v3");
    poputil::mapTensorLinearly(graph, v3);
    auto inStream = graph.addHostToDeviceFIFO("v3-input-stream", FLOAT, 16);
    auto outStream = graph.addDeviceToHostFIFO("v3-output-stream", FLOAT, 4);
    graph.createHostRead("v1-read", v1);
    graph.createHostRead("v2-read", v2);
    graph.createHostRead("v3-read", v3);

    Sequence prog;
    prog.add(Copy(c1, v1));
    prog.add(Copy(v1, v2));
    prog.add(Copy(inStream, v3));
    // The transpose's second row (v3's second column), reversed, into v2; then v3's corner out.
    prog.add(Copy(v3.transpose()[1].reverse(0), v2));
    prog.add(Copy(concat(v3.slice({0, 0}, {2, 2}).flatten(), v1.slice(0, 0)), outStream));

    Engine engine(graph, prog);
    engine.load(device);
    std::vector<float> input(16), corner(4);
    std::iota(input.begin(), input.end(), 0.0f);
    engine.connectStream("v3-input-stream", input.data(), input.data() + input.size());
    engine.connectStream("v3-output-stream", corner.data(), corner.data() + corner.size());
    engine.run(0);

    std::vector<float> h1(4), h2(4), h3(16);
    engine.readTensor("v1-read", h1.data(), h1.data() + 4);
    engine.readTensor("v2-read", h2.data(), h2.data() + 4);
    engine.readTensor("v3-read", h3.data(), h3.data() + 16);
    CHECK(h1 == std::vector<float>{1.0f, 1.5f, 2.0f, 2.5f});
    CHECK(h3 == input);
    CHECK(h2 == std::vector<float>{13, 9, 5, 1}); // column 1 of the 4x4 iota, bottom up
    CHECK(corner == std::vector<float>{0, 1, 4, 5});
}

TEST_CASE("Poplar tutorial: a vertex on each of four tiles sums its row, compiled from its C++ source")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    graph.addCodelets(codelet("tutorial.cpp"));
    Tensor v1 = graph.addVariable(FLOAT, {4, 4}, "v1");
    Tensor v2 = graph.addVariable(FLOAT, {4}, "v2");
    ComputeSet cs = graph.addComputeSet("sums");
    for (unsigned i = 0; i < 4; ++i) {
        graph.setTileMapping(v1[i], i);
        graph.setTileMapping(v2[i], i);
        VertexRef vtx = graph.addVertex(cs, "SumVertex", {{"in", v1[i]}, {"out", v2[i]}});
        graph.setTileMapping(vtx, i);
        graph.setPerfEstimate(vtx, 20);
    }
    graph.createHostWrite("v1-write", v1);
    graph.createHostRead("v2-read", v2);
    Engine engine(graph, Sequence{Execute(cs)});
    engine.load(device);
    std::vector<float> rows(16);
    std::iota(rows.begin(), rows.end(), 1.0f);
    engine.writeTensor("v1-write", rows.data(), rows.data() + 16);
    engine.run(0);
    std::vector<float> sums(4);
    engine.readTensor("v2-read", sums.data(), sums.data() + 4);
    for (unsigned r = 0; r < 4; ++r)
        CHECK(sums[r] == std::accumulate(rows.begin() + 4 * r, rows.begin() + 4 * r + 4, 0.0f));
}

TEST_CASE("Poplar tutorial: a matrix-vector product over many tiles gives the plain product")
{
    const unsigned rows = 96, cols = 40, rowsPerTile = 3;
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    graph.addCodelets(poplar_test::exampleCodelets("matrix_vector"));
    Tensor matrix = graph.addVariable(FLOAT, {rows, cols}, "matrix");
    Tensor x = graph.addVariable(FLOAT, {cols}, "x");
    Tensor y = graph.addVariable(FLOAT, {rows}, "y");
    graph.setTileMapping(x, 0);
    ComputeSet cs = graph.addComputeSet("mulCS");
    for (unsigned r = 0; r < rows; ++r) {
        const unsigned tile = r / rowsPerTile;
        graph.setTileMapping(matrix[r], tile);
        graph.setTileMapping(y[r], tile);
        VertexRef v = graph.addVertex(cs, "DotProductVertex", {{"a", matrix[r]}, {"b", x}, {"out", y[r]}});
        graph.setTileMapping(v, tile);
        graph.setPerfEstimate(v, 2 * cols + 10);
    }
    graph.createHostWrite("matrix", matrix);
    graph.createHostWrite("x", x);
    graph.createHostRead("y", y);
    Engine engine(graph, Execute(cs));
    engine.load(device);
    std::vector<float> m(rows * cols), xv(cols), yv(rows);
    for (unsigned i = 0; i < m.size(); ++i)
        m[i] = float((i * 7) % 13) - 6;
    for (unsigned j = 0; j < cols; ++j)
        xv[j] = float(j % 5) - 2;
    engine.writeTensor("matrix", m.data(), m.data() + m.size());
    engine.writeTensor("x", xv.data(), xv.data() + xv.size());
    engine.run();
    engine.readTensor("y", yv.data(), yv.data() + yv.size());
    for (unsigned r = 0; r < rows; ++r) {
        float want = 0;
        for (unsigned j = 0; j < cols; ++j)
            want += m[r * cols + j] * xv[j];
        CHECK(yv[r] == want);
    }
}

TEST_CASE("Poplar vertices: a MultiVertex runs on every worker, Vectors of edges, VectorLists, state and half")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    graph.addCodelets(codelet("tutorial.cpp"));
    Tensor x = graph.addVariable(FLOAT, {20}, "x");
    graph.setTileMapping(x, 5);
    Tensor ints = graph.addVariable(INT, {3, 4}, "ints");
    graph.setTileMapping(ints, 6);
    Tensor out = graph.addVariable(INT, {2}, "out");
    graph.setTileMapping(out, 6);
    Tensor h = graph.addVariable(HALF, {1}, "h");
    graph.setTileMapping(h, 7);

    ComputeSet cs = graph.addComputeSet("mixed");
    VertexRef scale = graph.addVertex(cs, "ScaleInPlace", {{"x", x}});
    graph.setInitialValue(scale["scale"], 3.0f);
    graph.setTileMapping(scale, 5);
    graph.setPerfEstimate(scale, 100);
    VertexRef sums = graph.addVertex(cs, "EdgeSums");
    graph.connect(sums["parts"], {ints[0], ints[1].slice(0, 2)});
    graph.connect(sums["rows"], ints.slice(1, 3, 0));
    graph.setInitialValue(sums["weights"], std::vector<unsigned>{1, 10});
    graph.setInitialValue(sums["offset"], 1000u);
    graph.connect(sums["out"], out);
    graph.setTileMapping(sums, 6);
    graph.setPerfEstimate(sums, 50);
    VertexRef negate = graph.addVertex(cs, "tutorial::Negate", {{"x", h[0]}});
    graph.setTileMapping(negate, 7);
    graph.setPerfEstimate(negate, 10);
    graph.createHostWrite("x", x);
    graph.createHostWrite("ints", ints);
    graph.createHostWrite("h", h);
    graph.createHostRead("x", x);
    graph.createHostRead("out", out);
    graph.createHostRead("h", h);

    Engine engine(graph, Execute(cs));
    engine.load(device);
    std::vector<float> xv(20);
    std::iota(xv.begin(), xv.end(), 0.0f);
    std::vector<int> iv(12);
    std::iota(iv.begin(), iv.end(), 1);
    const float minusTwo = -2.0f;
    std::uint16_t halfIn = 0, halfOut = 0;
    copyFloatToDeviceHalf(device.getTarget(), &minusTwo, &halfIn, 1);
    engine.writeTensor("x", xv.data(), xv.data() + 20);
    engine.writeTensor("ints", iv.data(), iv.data() + 12);
    engine.writeTensor("h", &halfIn, &halfIn + 1);
    engine.run();
    std::vector<float> xs(20);
    std::vector<int> o(2);
    engine.readTensor("x", xs.data(), xs.data() + 20);
    engine.readTensor("out", o.data(), o.data() + 2);
    engine.readTensor("h", &halfOut, &halfOut + 1);
    float hv = 0;
    copyDeviceHalfToFloat(device.getTarget(), &halfOut, &hv, 1);
    for (unsigned i = 0; i < 20; ++i)
        CHECK(xs[i] == 3.0f * float(i));
    // 1000 + (1+2+3+4) x 1 + (5+6) x 10 + rows 1 and 2 (5..12)
    CHECK(o[0] == 1000 + 10 + 110 + (5 + 6 + 7 + 8 + 9 + 10 + 11 + 12));
    CHECK(o[1] == 4);
    CHECK(hv == 2.0f);
}

TEST_CASE("Poplar devices: an IPU-POD16's devices of 1 to 16 IPUs, and a Target that answers as a Mk2's")
{
    const auto manager = DeviceManager::createDeviceManager();
    CHECK(manager.getDevices().size() == 16 + 8 + 4 + 2 + 1);
    CHECK(manager.getDevices(TargetType::IPU, 4).size() == 4);
    const Device sixteen = manager.getDevices(TargetType::IPU, 16).at(0);
    CHECK(sixteen.getTarget().getNumTiles() == 16 * 1472);
    Device one = manager.getDevice(3);
    REQUIRE(one.attach());
    const Target& t = one.getTarget();
    CHECK(t.getNumIPUs() == 1);
    CHECK(t.getTilesPerIPU() == 1472);
    CHECK(t.getNumWorkerContexts() == 6);
    CHECK(t.getBytesPerTile() == 624 * 1024);
    CHECK(t.getTileClockFrequency() == Approx(1.33e9));
    CHECK(t.getVectorWidth(HALF) == 4);
    CHECK(t.getVectorWidth(FLOAT) == 2);
    CHECK(manager.getChildDeviceIds(16, 1) == std::vector<unsigned>{0, 1});
    {
        poplar_test::ScopedEnv m2000("IPUSIM_SYSTEM", "m2000");
        CHECK(DeviceManager::createDeviceManager().getDevices().size() == 4 + 2 + 1);
    }
    IPUModel model;
    model.tilesPerIPU = 16;
    CHECK(model.createDevice().getTarget().getNumTiles() == 16);
}

TEST_CASE("Poplar on two IPUs: virtual graphs, a copy over IPU-Links and a vertex reading the other IPU's tensor")
{
    Device device = poplar_test::device(2);
    Graph graph(device.getTarget());
    REQUIRE(graph.getTarget().getNumTiles() == 2 * 1472);
    graph.addCodelets(codelet("tutorial.cpp"));
    Graph ipu0 = graph.createVirtualGraph(0, 1472);
    Graph ipu1 = graph.createVirtualGraph(1472, 2944);
    CHECK(ipu1.getTarget().getNumIPUs() == 1);
    CHECK(ipu1.getTarget().getNumTiles() == 1472);
    Tensor a = ipu0.addVariable(FLOAT, {8}, "a");
    ipu0.setTileMapping(a, 3);
    Tensor b = ipu1.addVariable(FLOAT, {8}, "b");
    ipu1.setTileMapping(b, 3); // tile 1475 of the device
    Tensor sum = ipu1.addVariable(FLOAT, {1}, "sum");
    ipu1.setTileMapping(sum, 4);
    ComputeSet cs = graph.addComputeSet("sum");
    VertexRef v = ipu1.addVertex(cs, "SumVertex", {{"in", a}, {"out", sum[0]}});
    ipu1.setTileMapping(v, 4);
    ipu1.setPerfEstimate(v, 30);
    graph.createHostWrite("a", a);
    graph.createHostRead("b", b);
    graph.createHostRead("sum", sum);
    for (const char* engineKind : {"fast", "reference"}) {
        poplar_test::ScopedEnv engineChoice("IPUSIM_ENGINE", engineKind);
        Engine engine(graph, Sequence{Copy(a, b), Execute(cs)});
        engine.load(device);
        std::vector<float> in(8), out(8), s(1);
        std::iota(in.begin(), in.end(), 1.0f);
        engine.writeTensor("a", in.data(), in.data() + 8);
        engine.run();
        engine.readTensor("b", out.data(), out.data() + 8);
        engine.readTensor("sum", s.data(), s.data() + 1);
        CHECK(out == in);
        CHECK(s[0] == 36.0f);
        CHECK(poplar_test::summaryFigure(engine, "/breakdown/ipu_copy") > 0);
        CHECK(poplar_test::summaryFigure(engine, "/num_ipus") == 16);
    }
}

TEST_CASE("Poplar vertices: template vertex classes by the names poputil::templateVertex gives")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    graph.addCodelets(codelet("tutorial.cpp"));
    REQUIRE(poputil::templateVertex("Scale", FLOAT, true) == "Scale<float,true>");
    CHECK(graph.hasCodelet("Scale<float,true>"));
    CHECK(graph.hasCodelet("Scale<int,false>"));
    CHECK_FALSE(graph.hasCodelet("Scale<float,false>")); // not instantiated
    Tensor f = graph.addVariable(FLOAT, {3}, "f"), i = graph.addVariable(INT, {3}, "i");
    graph.setTileMapping(f, 0);
    graph.setTileMapping(i, 1);
    ComputeSet cs = graph.addComputeSet("scale");
    VertexRef vf = graph.addVertex(cs, poputil::templateVertex("Scale", FLOAT, true), {{"x", f}});
    VertexRef vi = graph.addVertex(cs, poputil::templateVertex("Scale", INT, false), {{"x", i}});
    graph.setInitialValue(vf["factor"], 2.5f);
    graph.setInitialValue(vi["factor"], 3);
    graph.setTileMapping(vf, 0);
    graph.setTileMapping(vi, 1);
    graph.setPerfEstimate(vf, 10);
    graph.setPerfEstimate(vi, 10);
    graph.createHostWrite("f", f);
    graph.createHostWrite("i", i);
    graph.createHostRead("f", f);
    graph.createHostRead("i", i);
    Engine engine(graph, Execute(cs));
    engine.load(device);
    const std::vector<float> fin{1, 2, 3};
    const std::vector<int> iin{1, 2, 3};
    engine.writeTensor("f", fin.data(), fin.data() + 3);
    engine.writeTensor("i", iin.data(), iin.data() + 3);
    engine.run();
    std::vector<float> fout(3);
    std::vector<int> iout(3);
    engine.readTensor("f", fout.data(), fout.data() + 3);
    engine.readTensor("i", iout.data(), iout.data() + 3);
    CHECK(fout == std::vector<float>{-2.5f, -5.0f, -7.5f});
    CHECK(iout == std::vector<int>{3, 6, 9});
}

TEST_CASE("Poplar remote buffers: slots of Streaming Memory stored, loaded and read by the host, each copy a gateway transfer")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    Tensor a = graph.addVariable(FLOAT, {1000}, "a"), b = graph.addVariable(FLOAT, {1000}, "b");
    Tensor slot = graph.addVariable(UNSIGNED_INT, {}, "slot");
    graph.setTileMapping(a, 0);
    graph.setTileMapping(b, 1);
    graph.setTileMapping(slot, 0);
    RemoteBuffer buffer = graph.addRemoteBuffer("store", FLOAT, 1000, 3);
    graph.createHostWrite("a", a);
    graph.createHostWrite("slot", slot);
    graph.createHostRead("b", b);
    Engine engine(graph, Sequence{Copy(a, buffer, slot), Copy(buffer, b, slot)});
    engine.load(device);
    std::vector<float> in(1000), out(1000), host(1000);
    std::iota(in.begin(), in.end(), 0.5f);
    const unsigned two = 2;
    engine.writeTensor("a", in.data(), in.data() + 1000);
    engine.writeTensor("slot", &two, &two + 1);
    engine.run();
    engine.readTensor("b", out.data(), out.data() + 1000);
    engine.copyFromRemoteBuffer("store", host.data(), 2);
    CHECK(out == in);
    CHECK(host == in);
    engine.copyFromRemoteBuffer("store", host.data(), 0);
    CHECK(host == std::vector<float>(1000, 0.0f));
    CHECK_THROWS_WITH(engine.copyFromRemoteBuffer("store", host.data(), 3),
                      "Engine::copyFromRemoteBuffer: slot 3 of remote buffer 'store', which has slots 0 to 2");
    // Each copy: a sync (126), then Streaming Memory's 2,000 cycles of latency and 4,000 bytes at
    // 15.75 GB/s x 0.85 (10.07 bytes a cycle at 1.33 GHz): ceil(397.4) = 398.
    CHECK(engine.ipusimCycles() == 2 * (126 + 2000 + 398));
    CHECK(poplar_test::summaryFigure(engine, "/breakdown/streaming_memory") == 2 * (2000 + 398));
}

TEST_CASE("Poplar programs: a SupervisorVertex runs once, the engine keeps the program as it was, regions of the flattened tensor")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    graph.addCodelets(codelet("tutorial.cpp"));
    Tensor runs = graph.addVariable(UNSIGNED_INT, {}, "runs");
    graph.setTileMapping(runs, 0);
    ComputeSet cs = graph.addComputeSet("count");
    VertexRef v = graph.addVertex(cs, "CountRuns", {{"runs", runs}});
    graph.setTileMapping(v, 0);
    graph.setPerfEstimate(v, 10);
    graph.createHostRead("runs", runs);
    Sequence prog{Execute(cs)};
    Engine engine(graph, prog);
    prog.add(Execute(cs)); // after the engine: not part of its program
    engine.load(device);
    engine.run();
    unsigned n = 0;
    engine.readTensor("runs", &n, &n + 1);
    CHECK(n == 1);

    Tensor a = graph.addVariable(FLOAT, {4}, "a"), b = graph.addVariable(FLOAT, {4}, "b");
    const Tensor joined = concat(a.slice(2, 4), b.slice(0, 3));
    CHECK(joined.getContiguousRegions() == std::vector<Interval>{{0, 2}, {2, 5}});
}

TEST_CASE("Poplar memory: a compute set run twice holds its vertex state once, each vertex type's code only where it runs")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    graph.addCodelets(codelet("tutorial.cpp"));
    Tensor x = graph.addVariable(FLOAT, {2, 4}, "x"), y = graph.addVariable(FLOAT, {2}, "y"), n = graph.addVariable(UNSIGNED_INT, {}, "n");
    graph.setTileMapping(x, 0);
    graph.setTileMapping(y, 0);
    graph.setTileMapping(n, 1);
    ComputeSet cs = graph.addComputeSet("work");
    for (unsigned i = 0; i < 2; ++i) {
        VertexRef v = graph.addVertex(cs, "SumVertex", {{"in", x[i]}, {"out", y[i]}});
        graph.setTileMapping(v, 0);
        graph.setPerfEstimate(v, 10);
    }
    VertexRef c = graph.addVertex(cs, "CountRuns", {{"runs", n}});
    graph.setTileMapping(c, 1);
    graph.setPerfEstimate(c, 10);
    auto memory = [&](const Program& p) {
        Engine engine(graph, p);
        engine.load(device);
        engine.run();
        return nlohmann::json::parse(engine.ipusimSummary()).at("memory").at(0).at("bytes_by_kind");
    };
    const auto once = memory(Execute(cs)), twice = memory(Sequence{Execute(cs), Execute(cs)});
    CHECK(once == twice);
    // mk2.json: SumVertex's code on tile 0 and CountRuns's on tile 1 (1,024 bytes a type a tile),
    // three vertices' state (48 bytes each) and the compute set's control code on its two tiles
    // (16 bytes each), whether it runs once or twice.
    CHECK(once.at("code").get<std::uint64_t>() == 2 * 1024 + 3 * 48 + 2 * 16);
}
