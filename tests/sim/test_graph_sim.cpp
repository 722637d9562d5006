// SPDX-License-Identifier: MIT
// Graph workloads simulated: the tutorial's CNN written op by op runs to the MNIST workload's
// figures, training and inference, pipelined too.
#include "Simulate.hpp"

#include <catch2/catch.hpp>
#include <fmt/format.h>

using namespace ipusim;
using json = nlohmann::json;

namespace {

json withoutOrigin(json s)
{
    for (const char* key : {"name", "config", "workload", "simulator"})
        s.erase(key);
    return s;
}

} // namespace

TEST_CASE("Graph workload: the tutorial's CNN as a graph simulates to the MNIST figures", "[graph]")
{
    for (const std::vector<std::string>& sets :
         {std::vector<std::string>{}, {"/workload/mode=infer", "/run/gradient_accumulation=1"},
          {"/system/num_ipus=4", "/system/topology={\"kind\": \"ladder\", \"wrap\": false}", "/workload/strategy={\"kind\": \"pipelined\"}"}}) {
        const json graph = withoutOrigin(test::simulateFile("configs/graph/mnist.json", sets));
        const json mnist = withoutOrigin(test::simulateFile("configs/mnist/train.json", sets));
        INFO(fmt::format("{}", fmt::join(sets, " ")) << "\ndifferences: " << json::diff(mnist, graph).dump());
        CHECK(graph == mnist);
    }
}
