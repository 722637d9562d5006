// SPDX-License-Identifier: MIT
// Bad Poplar programs: each error is Poplar's exception type, naming the vertex, the field and
// the tensor, and saying what would be accepted.
#include "PoplarTest.hpp"

#include <poplar/Program.hpp>
#include <poplar/exceptions.hpp>

#include <catch2/catch.hpp>

#include <sstream>

using namespace poplar;
using namespace poplar::program;
using Catch::Matchers::Contains;
using poplar_test::codelet;

namespace {

struct Fixture
{
    Device device = poplar_test::device();
    Graph graph{device.getTarget()};
    ComputeSet cs = graph.addComputeSet("cs");
    Tensor in = graph.addVariable(FLOAT, {4}, "in");
    Tensor out = graph.addVariable(FLOAT, {1}, "out");
    Fixture() { graph.addCodelets(codelet("tutorial.cpp")); }
};

} // namespace

TEST_CASE("Poplar errors: an unknown vertex type lists the codelets' vertex classes")
{
    Fixture f;
    CHECK_THROWS_MATCHES(f.graph.addVertex(f.cs, "SumVertx"), unknown_vertex_type,
                         Catch::Matchers::Message("addVertex: unknown vertex type 'SumVertx': the codelets added define CountRuns, Countdown, EdgeSums, "
                                                  "Scale<float,true>, Scale<int,false>, ScaleInPlace, SumVertex, tutorial::Negate"));
}

TEST_CASE("Poplar errors: an unknown field, an edge of the wrong type or size, state connected as an edge")
{
    Fixture f;
    VertexRef v = f.graph.addVertex(f.cs, "SumVertex");
    CHECK_THROWS_MATCHES(f.graph.connect(v["input"], f.in), unknown_field,
                         Catch::Matchers::Message("vertex 0 (SumVertex) has no field 'input': its fields are in, out"));
    Tensor ints = f.graph.addVariable(INT, {4}, "ints");
    CHECK_THROWS_WITH(f.graph.connect(v["in"], ints),
                      "connect field 'in' of vertex 0 (SumVertex) to tensor 'ints' of shape {4}: the field holds float, the tensor int");
    CHECK_THROWS_AS(f.graph.connect(v["in"], ints), type_error);
    CHECK_THROWS_WITH(f.graph.connect(v["out"], f.in),
                      "connect field 'out' of vertex 0 (SumVertex) to tensor 'in' of shape {4}: the field is one float element, the tensor has 4");
    VertexRef s = f.graph.addVertex(f.cs, "ScaleInPlace");
    CHECK_THROWS_WITH(f.graph.connect(s["scale"], f.out), Contains("field 'scale' of vertex 1 (ScaleInPlace)") &&
                                                              Contains("vertex state, not an edge: give it a value with setInitialValue"));
}

TEST_CASE("Poplar errors: compiling names an unconnected field, an unmapped tensor, an unmapped vertex, a missing value")
{
    Fixture f;
    f.graph.setTileMapping(f.out, 0);
    VertexRef v = f.graph.addVertex(f.cs, "SumVertex", {{"out", f.out}});
    f.graph.setTileMapping(v, 0);
    f.graph.setPerfEstimate(v, 10);
    CHECK_THROWS_MATCHES(Engine(f.graph, Execute(f.cs)), graph_connection_error,
                         Catch::Matchers::Message("field 'in' of vertex 0 (SumVertex) is not connected to a tensor"));
    f.graph.connect(v["in"], f.in);
    CHECK_THROWS_MATCHES(Engine(f.graph, Execute(f.cs)), invalid_tile_mapping,
                         Catch::Matchers::Message("field 'in' of vertex 0 (SumVertex) uses tensor 'in' of shape {4}, whose element 0 is "
                                                  "not mapped to a tile (setTileMapping)"));
    f.graph.setTileMapping(f.in.slice(0, 2), 0);
    CHECK_THROWS_WITH(Engine(f.graph, Execute(f.cs)), Contains("whose element 2 is not mapped"));
    f.graph.setTileMapping(f.in, 1);
    VertexRef s = f.graph.addVertex(f.cs, "ScaleInPlace", {{"x", f.in}});
    f.graph.setPerfEstimate(s, 10);
    CHECK_THROWS_WITH(Engine(f.graph, Execute(f.cs)),
                      "vertex 1 (ScaleInPlace) in compute set 'cs' is not mapped to a tile (setTileMapping)");
    f.graph.setTileMapping(s, 1);
    CHECK_THROWS_WITH(Engine(f.graph, Execute(f.cs)), "field 'scale' of vertex 1 (ScaleInPlace) has no value: give it one with setInitialValue");
    f.graph.setInitialValue(s["scale"], 2);
    CHECK_NOTHROW(Engine(f.graph, Execute(f.cs)));
    CHECK_THROWS_AS(f.graph.setTileMapping(f.in, 1472), invalid_tile_mapping);
}

TEST_CASE("Poplar errors: a vertex without a cycle estimate names the three ways to give one")
{
    Fixture f;
    f.graph.setTileMapping(f.in, 0);
    f.graph.setTileMapping(f.out, 0);
    VertexRef v = f.graph.addVertex(f.cs, "SumVertex", {{"in", f.in}, {"out", f.out}});
    f.graph.setTileMapping(v, 0);
    CHECK_THROWS_MATCHES(Engine(f.graph, Execute(f.cs)), missing_perf_estimate,
                         Catch::Matchers::Message(
                             "vertex 0 (SumVertex) in compute set 'cs' has no cycle estimate; give one in any of three ways: "
                             "Graph::setPerfEstimate(vertex, cycles) for this vertex, Graph::registerPerfEstimator(\"SumVertex\", "
                             "estimator) for every vertex of its type, or an entry \"SumVertex\": cycles in the JSON file "
                             "IPUSIM_PERF_ESTIMATES names"));
}

TEST_CASE("Poplar errors: a codelet that does not compile reports the compiler's file and line")
{
    Fixture f;
    std::ostringstream log;
    CHECK_THROWS_AS(f.graph.addCodelets(codelet("broken.cpp"), CodeletFileType::Auto, "", log), graph_program_compilation_error);
    CHECK_THAT(log.str(), Contains("broken.cpp:10:") && Contains("undeclared_value"));
    CHECK_THROWS_WITH(f.graph.addCodelets(codelet("missing.cpp")), Contains("missing.cpp: no such file"));
    CHECK_THROWS_WITH(f.graph.addCodelets(codelet("tutorial.cpp"), CodeletFileType::Auto, "-fno-exceptions"),
                      Contains("codelet flag '-fno-exceptions' is not supported"));
}

TEST_CASE("Poplar errors: a vertex's compute() returning false, an unconnected stream, a host buffer of the wrong size")
{
    Fixture f;
    f.graph.addCodelets(codelet("failing.cpp"));
    f.graph.setTileMapping(f.in, 0);
    f.graph.setTileMapping(f.out, 0);
    VertexRef v = f.graph.addVertex(f.cs, "Fails", {{"in", f.in[0]}});
    f.graph.setTileMapping(v, 0);
    f.graph.setPerfEstimate(v, 5);
    auto stream = f.graph.addHostToDeviceFIFO("feed", FLOAT, 4);
    f.graph.createHostRead("out", f.out);
    Engine engine(f.graph, {Execute(f.cs), Copy(stream, f.in)});
    CHECK_THROWS_WITH(engine.run(0), "Engine::run: no device: call Engine::load(device) first");
    engine.load(f.device);
    CHECK_THROWS_WITH(engine.run(0), "vertex 0 (Fails) in compute set 'cs' returned false from compute()");
    CHECK_THROWS_MATCHES(engine.run(1), stream_connection_error,
                         Catch::Matchers::Message("stream 'feed' is not connected: call Engine::connectStream(\"feed\", buffer) before run()"));
    std::vector<float> two(2);
    CHECK_THROWS_WITH(engine.readTensor("out", two.data(), two.data() + 2),
                      "Engine::readTensor 'out': a buffer of 8 bytes for 1 float elements (4 bytes)");
    CHECK_THROWS_WITH(engine.run(2), "Engine::run(2): the engine has programs 0 to 1");
}

TEST_CASE("Poplar errors: a graph that does not fit in a tile's memory fails to compile, naming the tile and what is live there")
{
    Fixture f;
    Tensor big = f.graph.addVariable(FLOAT, {170000}, "big"); // 680,000 bytes on one tile of 638,976
    f.graph.setTileMapping(big, 7);
    f.graph.setTileMapping(f.in, 0);
    f.graph.setTileMapping(f.out, 0);
    CHECK_THROWS_MATCHES(Engine(f.graph, Sequence{}), graph_memory_allocation_error,
                         Catch::Matchers::Message("program 0 does not fit in the IPUs' tile memory: out of memory on IPU 0: 1 tiles over "
                                                  "638976 bytes (peak 680000); tile 7 needs 680000 bytes, the largest live there: "
                                                  "'big' (680000 bytes)"));
}

TEST_CASE("Poplar errors: a program holding itself, a virtual graph across IPUs, a constant of the wrong size, a stream of nothing")
{
    Fixture f;
    Sequence outer, inner;
    outer.add(inner);
    inner.add(outer);
    CHECK_THROWS_MATCHES(Engine(f.graph, outer), invalid_program,
                         Catch::Matchers::Message("program '' holds itself (a Sequence added to one inside it): programs are trees"));
    Device two = poplar_test::device(2);
    Graph both(two.getTarget());
    CHECK_THROWS_WITH(both.createVirtualGraph(1000, 2000), Contains("ipusim's virtual graphs are whole IPUs or tiles of one IPU"));
    CHECK_THROWS_AS(f.graph.addConstant<float>(FLOAT, {3}, {1.0f, 2.0f}), tensor_creation_error);
    f.graph.setTileMapping(f.in, 0);
    f.graph.setTileMapping(f.out, 0);
    CHECK_NOTHROW(Engine(f.graph, Sequence{})); // no constant was left behind unmapped
    CHECK_THROWS_WITH(f.graph.addHostToDeviceFIFO("none", FLOAT, 0), "addHostToDeviceFIFO 'none': a stream of no elements");
}
