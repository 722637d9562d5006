// SPDX-License-Identifier: MIT
// The op table (`ipusim ops`, docs/reference/ops.md): the importer's registry and the compiler's
// vertices per graph op, read from probes. The page itself is checked by docs.op_table.
#include "Simulate.hpp"
#include "models/timing/VertexTable.hpp"
#include "sim/config/OnnxModel.hpp"
#include "sim/config/Schema.hpp"
#include "sim/report/OpTable.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

using namespace ipusim;

namespace {

std::set<std::string> schemaGraphOps()
{
    std::set<std::string> names;
    for (const auto& [name, form] : config::Schema::instance().root().at("definitions").at("graph_ops").items())
        names.insert(name);
    return names;
}

} // namespace

TEST_CASE("Op table: every ONNX op of the registry names graph ops a JSON graph takes", "[onnx][ops]")
{
    const std::set<std::string> graphOps = schemaGraphOps();
    std::vector<std::string> ops;
    for (const config::OnnxOpRow& row : config::onnxOpTable()) {
        INFO(row.op);
        ops.push_back(row.op);
        CHECK_FALSE(row.how.empty());
        for (const std::string& g : row.graphOps)
            CHECK(graphOps.count(g));
    }
    CHECK(ops == config::supportedOnnxOps()); // what an unsupported-op error lists
    CHECK(std::is_sorted(ops.begin(), ops.end()));
}

TEST_CASE("Op table: every graph op compiles in its probe, to the vertices its recipe uses", "[graph][ops]")
{
    std::map<std::string, GraphOpVertices> probed;
    for (const GraphOpVertices& v : probeGraphOps())
        probed.emplace(v.graphOp, v);
    const std::set<std::string> graphOps = schemaGraphOps();
    REQUIRE(probed.size() == graphOps.size());
    const std::set<std::string> noCompute = {"flatten", "parameter", "reshape", "transpose"};
    for (const std::string& g : graphOps) {
        INFO(g);
        REQUIRE(probed.count(g));
        CHECK(probed[g].forward.empty() == (noCompute.count(g) > 0));
        for (const auto* list : {&probed[g].forward, &probed[g].gradient})
            for (const std::string& vertex : *list)
                CHECK(vertexNamed(vertex)); // a row of the vertex table: its estimator and source
    }
    using V = std::vector<std::string>;
    // A few by hand: global pooling is a reduction, its gradient a scaled broadcast; ReLU runs
    // in place, its gradient popnn's; a weight's update is the optimizer's, not the op's.
    CHECK(probed["global_avg_pool"].forward == V{"ReduceContinuous"});
    CHECK(probed["global_avg_pool"].gradient == V{"BroadcastScalar1DInPlace"});
    CHECK(probed["relu"].forward == V{"UnaryOp1DInPlace"});
    CHECK(probed["relu"].gradient == V{"NonLinearityGrad1D"});
    CHECK(probed["embedding"].gradient == V{"Fill", "MultiUpdateAdd"});
    CHECK(probed["add"].gradient.empty()); // the gradient passes to both operands as it is
    CHECK(probed["attention_mask"].gradient.empty()); // integer ids: nothing to differentiate
}

TEST_CASE("Op table: the Markdown lists every ONNX op, graph op and vertex it uses, with its source", "[ops]")
{
    const std::string md = opTableMarkdown();
    for (const config::OnnxOpRow& row : config::onnxOpTable())
        CHECK_THAT(md, Catch::Contains("| `" + row.op + "` |"));
    for (const GraphOpVertices& v : probeGraphOps()) {
        CHECK_THAT(md, Catch::Contains("| `" + v.graphOp + "` |"));
        for (const std::string& vertex : v.forward)
            CHECK_THAT(md, Catch::Contains(fmt::format("| `{}` | {} |", vertex, rowOf(*vertexNamed(vertex)).source)));
    }
}
