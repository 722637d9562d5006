// SPDX-License-Identifier: MIT
// Hand-written schedules: parsing, vertex costing and every bad input.
#include "models/json/ScheduleJson.hpp"
#include "models/timing/VertexCosts.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/config/ExperimentSpec.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;

namespace {

json withSteps(const json& steps, const json& tensors = json::array())
{
    json d = {{"system", {{"base", "hardware/mk2.json"}}},
              {"workload", {{"kind", "schedule"}, {"steps", steps}, {"tensors", tensors}}}};
    return d;
}

Schedule load(const json& d)
{
    auto cfg = config::loadConfig(d, std::string(IPUSIM_SOURCE_DIR) + "/configs/s.json");
    return std::get<ScheduleSpec>(decodeExperiment(cfg).workload).schedule;
}

std::string errorOf(const json& d)
{
    try {
        load(d);
    } catch (const config::ConfigError& e) {
        return e.what();
    }
    return "no error";
}

} // namespace

TEST_CASE("Schedule JSON: vertices are costed by the compiler's cost model", "[schedule]")
{
    json v = {{"vertex", "ConvPartial1x1Out"},
              {"params", {{"positions", 96}, {"in_chans", 16}, {"out_chans", 16}, {"input", "fp16"}, {"partials", "fp16"}}}};
    json u = {{"vertex", "UnaryOp1D"}, {"params", {{"op", "relu"}, {"elements", 1200}, {"type", "fp32"}}}};
    Schedule s = load(withSteps(json::array({{{"op", "compute"}, {"name", "cs"},
                                               {"tiles", json::array({{{"tiles", "all"}, {"vertices", json::array({v, u})}}})}}})));
    const auto& c = std::get<ComputeStep>(s.programs[0].steps[0].op);
    REQUIRE(c.cycles.runs().size() == 1);
    CHECK(c.cycles.runs()[0].count == 1472);
    CHECK(c.cycles.runs()[0].value == 679 + 32 + 1922); // 64-bit weight loads: L = 64, not test_costs' 32
    CHECK(c.vertices.at(7) == 2);
    // The popnn and in-place popops vertices, at the check values of the cost tests.
    json gelu = {{"vertex", "NonLinearity1DInPlace"}, {"params", {{"nonlinearity", "gelu"}, {"elements", 3072}, {"type", "fp16"}}}};
    json grad = {{"vertex", "NonLinearityGrad1D"}, {"params", {{"nonlinearity", "relu"}, {"elements", 3072}, {"type", "fp16"}}}};
    json relu = {{"vertex", "UnaryOp1DInPlace"}, {"params", {{"op", "relu"}, {"elements", 3072}, {"type", "fp16"}}}};
    Schedule n = load(withSteps(json::array({{{"op", "compute"}, {"name", "nl"},
                                               {"tiles", json::array({{{"tiles", {0, 0}}, {"vertices", json::array({gelu, grad, relu})}}})}}})));
    CHECK(std::get<ComputeStep>(n.programs[0].steps[0].op).cycles.at(0) == 4041 + 2481 + 1886);
    // The pooling check value of the cost tests: 2x2 max pool, 12 x 12 fp32 outputs, 5 groups of 2 channels.
    json pool = {{"vertex", "MaxPooling"},
                 {"params", {{"positions", 144}, {"row_width", 12}, {"items_per_row", 4}, {"channel_groups", 5}}}};
    Schedule p = load(withSteps(json::array({{{"op", "compute"}, {"name", "pool"},
                                               {"tiles", json::array({{{"tiles", {0, 0}}, {"vertices", json::array({pool})}}})}}})));
    CHECK(std::get<ComputeStep>(p.programs[0].steps[0].op).cycles.at(0) == 13243);
}

TEST_CASE("Schedule JSON: tile ranges must be inside the IPU and in order", "[schedule][errors]")
{
    auto step = [](json runs) { return json::array({{{"op", "compute"}, {"name", "cs"}, {"tiles", runs}}}); };
    CHECK_THAT(errorOf(withSteps(step(json::array({{{"tiles", {0, 2000}}, {"cycles", 5}}})))),
               Catch::Contains("/workload/steps/0/tiles/0/tiles: expected a tile range [first, last] with first <= last <= 1471"));
    CHECK_THAT(errorOf(withSteps(step(json::array({{{"tiles", {5, 9}}, {"cycles", 5}}, {{"tiles", {8, 9}}, {"cycles", 5}}})))),
               Catch::Contains("/workload/steps/0/tiles/1/tiles: tile runs must be listed in increasing tile order"));
    CHECK_THAT(errorOf(withSteps(step(json::array({{{"tiles", "all"}}})))),
               Catch::Contains("/workload/steps/0/tiles/0: expected exactly one of \"cycles\" or \"vertices\""));
}

TEST_CASE("Schedule JSON: unknown vertices and bad vertex params", "[schedule][errors]")
{
    auto vertex = [](json v) {
        return json::array({{{"op", "compute"}, {"name", "cs"}, {"tiles", json::array({{{"tiles", "all"}, {"vertices", json::array({v})}}})}}});
    };
    // Codelets a step names for its code must be the table's, spelt as PopLibs spells them.
    json named = json::array({{{"op", "compute"}, {"name", "cs"}, {"vertex_types", {"BinaryOp1D<MULTIPLY>", "BinaryOp<MUL>"}},
                               {"tiles", json::array({{{"tiles", "all"}, {"cycles", 5}}})}}});
    CHECK_THAT(errorOf(withSteps(named)), Catch::Contains("/workload/steps/0/vertex_types/1: expected a codelet of the vertex table"));
    CHECK_THAT(errorOf(withSteps(named)), Catch::Contains("found \"BinaryOp<MUL>\" (vertices: ConvPartial1x1Out, ConvPartialnx1, UnaryOp1D"));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "Matmul"}, {"params", json::object()}}))),
               Catch::Contains("/workload/steps/0/tiles/0/vertices/0/vertex: unknown vertex \"Matmul\""));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "UnaryOp1D"}, {"params", {{"op", "relu"}, {"type", "fp32"}}}}))),
               Catch::Contains("vertices/0/params: missing required key \"elements\""));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "UnaryOp1D"}, {"params", {{"op", "relu"}, {"type", "fp32"}, {"elements", 0}}}}))),
               Catch::Contains("params/elements: expected integer from 1 to 4294967295, found 0"));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "UnaryOp1D"}, {"params", {{"op", "cube"}, {"type", "fp32"}, {"elements", 4}}}}))),
               Catch::Contains("params/op: expected one of relu, exp"));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "ScaledAddSupervisor"}, {"params", {{"type", "fp32"}, {"elements", 4}, {"scale", 2}}}}))),
               Catch::Contains("params/scale: unknown key \"scale\""));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "UnaryOp1D"}, {"params", {{"op", "relu"}, {"type", "fp32"}, {"elements", 4}, {"in_place", true}}}}))),
               Catch::Contains("params/in_place: unknown key \"in_place\""));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "BroadcastScalar1DInPlace"}, {"params", {{"op", "max"}, {"type", "fp32"}, {"elements", 4}}}}))),
               Catch::Contains("params/op: expected one of add, sub, mul, div, found \"max\""));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "NonLinearity1DInPlace"}, {"params", {{"nonlinearity", "relu"}, {"type", "fp32"}, {"elements", 4}}}}))),
               Catch::Contains("params/nonlinearity: expected one of gelu, found \"relu\""));
}

TEST_CASE("Schedule JSON: steps and tensors are checked", "[schedule][errors]")
{
    CHECK_THAT(errorOf(withSteps(json::array({{{"op", "jump"}}}))), Catch::Contains("/workload/steps/0/op: expected one of"));
    CHECK_THAT(errorOf(withSteps(json::array({{{"op", "repeat"}, {"count", 2}, {"body", json::array({{{"op", "sync"}, {"kind", "global"}}})}}}))),
               Catch::Contains("/workload/steps/0/body/0/kind: expected one of [\"internal\",\"external\"], found string \"global\""));
    json steps = json::array({{{"op", "compute"}, {"name", "cs"}, {"tiles", json::array({{{"tiles", "all"}, {"cycles", 5}}})}}});
    json tensors = json::array({{{"name", "t"}, {"tiles", json::array({{{"tiles", "all"}, {"bytes", 5}}})}, {"live", {{"from", "cs"}, {"to", "nope"}}}}});
    CHECK_THAT(errorOf(withSteps(steps, tensors)), Catch::Contains("/workload/tensors/0/live/to: expected the name of a compute"));
}

namespace {

json onM2000(const json& programs, const json& extra = json::object())
{
    json w = {{"kind", "schedule"}, {"programs", programs}};
    w.update(extra);
    return {{"system", {{"base", "hardware/m2000.json"}}}, {"workload", w}};
}

json computeOn(const std::string& name, uint64_t cycles)
{
    return {{"op", "compute"}, {"name", name}, {"tiles", json::array({{{"tiles", "all"}, {"cycles", cycles}}})}};
}

// Every step kind, fragments, tensors and the placement, built as the compiler builds them.
Schedule everyStepKind()
{
    Program p;
    p.ipu = 0;
    ComputeStep c;
    c.name = "mm";
    c.cycles.add(0, 10, 100);
    c.vertices.add(0, 5, 2); // splits the cycle run in two
    c.vertexTypes = {"ConvPartial1x1Out", "BinaryOp1D<MULTIPLY>"};
    c.outline = "layer";
    ExchangeStep x;
    x.name = "x";
    x.bytes.add(3, 2, {8, 0, 4});
    x.outline = "layer";
    p.fragments = {{{c}, {x}}};
    p.fragmentNames = {"forward"};
    RepeatStep loop{"steady", 3, {{CallStep{0, 2, true, 1}}, {CallStep{0, -1, false, 4}}}};
    p.steps = {{HostTransferStep{"in", Direction::ToIpu, 64, 0, true, 3}}, {loop}, {SyncStep{SyncKind::External}},
               {IpuCopyStep{"copy", {{1, 32}}, {}}}, {CollectiveStep{"ar", CollectiveKind::ReduceScatter, 4096, {0, 1}}},
               {StreamingMemoryStep{"opt", Direction::FromIpu, 256}}};
    numberPoints(p);
    TensorAlloc w{"w", "weight", {}, true};
    w.bytes.add(0, 4, 16);
    TensorAlloc a{"a", "activation", {}, false, 1, 3};
    a.bytes.add(5, 1, 24);
    p.tensors = {w, a};
    Program q;
    q.ipu = 1;
    q.steps = {{IpuCopyStep{"copy", {}, {{0, 32}}}}, {CollectiveStep{"ar", CollectiveKind::ReduceScatter, 4096, {0, 1}}}};
    numberPoints(q);
    Schedule s;
    s.programs = {p, q};
    s.samplesPerHostCall = 40;
    s.sampleKind = "rows";
    s.sequencesPerSample = 2.25;
    s.modelFlopsPerSample = 1.5e9;
    s.peakMacsPerTileCycle = 64;
    s.strategy = StrategyInfo{"pipelined", "grouped", 1234, 1, false, {{0, {"B1"}, 2, 0, -1}, {1, {"B2"}, 0, -1, -1}}};
    return s;
}

} // namespace

TEST_CASE("Schedule JSON: the writer spells out every step kind and reads back to the same Schedule", "[schedule]")
{
    const Schedule s = everyStepKind();
    const json w = scheduleToJson(s);
    const json& p0 = w.at("programs").at(0);
    // The cycle run splits where the vertex count changes; zero counts and bytes are left out.
    CHECK(p0.at("fragments").at(0).at("steps").at(0) ==
          json::parse(R"({"op": "compute", "name": "mm", "outline": "layer", "vertex_types": ["ConvPartial1x1Out", "BinaryOp1D<MULTIPLY>"],
                          "tiles": [{"tiles": [0, 4], "cycles": 100, "vertex_count": 2}, {"tiles": [5, 9], "cycles": 100}]})"));
    CHECK(p0.at("fragments").at(0).at("steps").at(1) ==
          json::parse(R"({"op": "exchange", "name": "x", "outline": "layer", "tiles": [{"tiles": [3, 4], "send_bytes": 8, "recv_shared_bytes": 4}]})"));
    CHECK(p0.at("steps").at(1).at("body") == json::parse(R"([{"op": "call", "fragment": 0, "micro_batch": 2, "per_iteration": true},
                                                              {"op": "call", "fragment": 0, "period": 4}])"));
    CHECK(p0.at("steps").at(0) ==
          json::parse(R"({"op": "host_transfer", "name": "in", "direction": "to_ipu", "bytes": 64, "prefetch": true, "prefetch_depth": 3})"));
    CHECK(p0.at("steps").at(4) == json::parse(R"({"op": "collective", "name": "ar", "kind": "reduce_scatter", "bytes": 4096, "ring": [0, 1]})"));
    CHECK(p0.at("steps").at(5) == json::parse(R"({"op": "streaming_memory", "name": "opt", "direction": "from_ipu", "bytes": 256})"));
    // Liveness by program point: fragment steps are points 0 and 1, the host transfer 2.
    CHECK(p0.at("tensors").at(1).at("live") == json::parse(R"({"from": 1, "to": 3})"));
    CHECK(p0.at("tensors").at(0).at("live") == "always");
    CHECK(w.at("placement").at("stages").at(0) == json::parse(R"({"ipu": 0, "blocks": ["B1"], "stash_depth": 2, "forward_fragment": 0})"));

    const Schedule back = load(onM2000(w.at("programs"), w));
    CHECK(scheduleToJson(back) == w);
    CHECK(back.programs[0].numPoints == s.programs[0].numPoints);
    CHECK(back.sampleKind == "rows");
    CHECK(back.sequencesPerSample == 2.25);
    CHECK(back.modelFlopsPerSample == 1.5e9);
}

TEST_CASE("Schedule JSON: calls, collectives and liveness are checked against the program", "[schedule][errors]")
{
    auto one = [](json steps, json more = json::object()) {
        json p = {{"ipu", 0}, {"steps", steps}};
        p.update(more);
        return json::array({p});
    };
    CHECK_THAT(errorOf(onM2000(one(json::array({{{"op", "call"}, {"fragment", 0}}})))),
               Catch::Contains("/workload/programs/0/steps/0/fragment: expected no call: the program has no fragments, found 0"));
    const json fragments = json::array({{{"name", "f"}, {"steps", json::array({computeOn("a", 5)})}}});
    CHECK_THAT(errorOf(onM2000(one(json::array({{{"op", "call"}, {"fragment", 1}}}), {{"fragments", fragments}}))),
               Catch::Contains("steps/0/fragment: expected a fragment of the program (0 to 0), found 1"));
    CHECK_THAT(errorOf(onM2000(one(json::array({{{"op", "collective"}, {"name", "r"}, {"kind", "all_reduce"}, {"bytes", 8}, {"ring", {1, 2}}}})))),
               Catch::Contains("/workload/programs/0/steps/0/ring: expected the ring to hold this program's IPU 0"));
    CHECK_THAT(errorOf(onM2000(one(json::array({{{"op", "collective"}, {"name", "r"}, {"kind", "all_reduce"}, {"bytes", 8}, {"ring", {0, 1, 0}}}})))),
               Catch::Contains("steps/0/ring/2: IPU 0 is already in the ring"));
    CHECK_THAT(errorOf(onM2000(one(json::array({{{"op", "collective"}, {"name", "r"}, {"kind", "gather"}, {"bytes", 8}, {"ring", {0, 1}}}})))),
               Catch::Contains("steps/0/kind: expected one of [\"all_reduce\",\"reduce_scatter\",\"all_gather\"]"));
    CHECK_THAT(errorOf(onM2000(one(json::array({{{"op", "streaming_memory"}, {"name", "s"}, {"direction", "up"}, {"bytes", 8}}})))),
               Catch::Contains("steps/0/direction: expected one of [\"to_ipu\",\"from_ipu\"]"));
    // A name two steps share cannot say which it means; a program point can.
    const json twice = json::array({computeOn("a", 5), computeOn("a", 6)});
    auto liveFrom = [](json from) {
        return json::array({{{"name", "t"}, {"tiles", json::array({{{"tiles", "all"}, {"bytes", 4}}})}, {"live", {{"from", from}, {"to", 1}}}}});
    };
    CHECK_THAT(errorOf(onM2000(one(twice, {{"tensors", liveFrom("a")}}))),
               Catch::Contains("/workload/programs/0/tensors/0/live/from: \"a\" names 2 steps (program points 0, 1): give the program point instead"));
    CHECK(errorOf(onM2000(one(twice, {{"tensors", liveFrom(0)}}))) == "no error");
    CHECK_THAT(errorOf(onM2000(one(twice, {{"tensors", liveFrom(2)}}))),
               Catch::Contains("tensors/0/live/from: expected a program point of the program (0 to 1), found 2"));
    CHECK_THAT(errorOf(onM2000(one(json::array()), {{"tensors", json::array()}})), Catch::Contains("/workload/tensors: expected inside each program"));
    const json counted = json::array({{{"op", "compute"}, {"name", "cs"},
                                       {"tiles", json::array({{{"tiles", "all"}, {"vertex_count", 2},
                                                               {"vertices", json::array({{{"vertex", "ScaledAddSupervisor"}, {"params", {{"type", "fp32"}, {"elements", 8}}}}})}}})}}});
    CHECK_THAT(errorOf(withSteps(counted)), Catch::Contains("/workload/steps/0/tiles/0/vertex_count: expected only with \"cycles\""));
}
