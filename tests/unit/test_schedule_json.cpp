// SPDX-License-Identifier: MIT
// Hand-written schedules: parsing, vertex costing and every bad input.
#include "models/program/ScheduleJson.hpp"
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
    json u = {{"vertex", "UnaryOp"}, {"params", {{"op", "relu"}, {"elements", 1200}, {"type", "fp32"}}}};
    Schedule s = load(withSteps(json::array({{{"op", "compute"}, {"name", "cs"},
                                               {"tiles", json::array({{{"tiles", "all"}, {"vertices", json::array({v, u})}}})}}})));
    const auto& c = std::get<ComputeStep>(s.programs[0].steps[0].op);
    REQUIRE(c.cycles.runs().size() == 1);
    CHECK(c.cycles.runs()[0].count == 1472);
    CHECK(c.cycles.runs()[0].value == 679 + 4322);
    CHECK(c.vertices.at(7) == 2);
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
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "Matmul"}, {"params", json::object()}}))),
               Catch::Contains("/workload/steps/0/tiles/0/vertices/0/vertex: unknown vertex \"Matmul\""));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "UnaryOp"}, {"params", {{"op", "relu"}, {"type", "fp32"}}}}))),
               Catch::Contains("vertices/0/params: missing required key \"elements\""));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "UnaryOp"}, {"params", {{"op", "relu"}, {"type", "fp32"}, {"elements", 0}}}}))),
               Catch::Contains("params/elements: expected integer >= 1, found 0"));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "UnaryOp"}, {"params", {{"op", "cube"}, {"type", "fp32"}, {"elements", 4}}}}))),
               Catch::Contains("params/op: expected one of relu, exp"));
    CHECK_THAT(errorOf(withSteps(vertex({{"vertex", "ScaledAdd"}, {"params", {{"type", "fp32"}, {"elements", 4}, {"scale", 2}}}}))),
               Catch::Contains("params/scale: unknown key \"scale\""));
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
