// SPDX-License-Identifier: MIT
// The Poplar API's tests link the shared library a Poplar program links (ipusim::poplar) and
// nothing of the simulator's own: what they use is what a program can.
#define CATCH_CONFIG_MAIN
#include "PoplarTest.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace poplar_test {

std::uint64_t summaryFigure(const poplar::Engine& engine, const std::string& pointer)
{
    const auto summary = nlohmann::json::parse(engine.ipusimSummary());
    return summary.at(nlohmann::json::json_pointer(pointer)).get<std::uint64_t>();
}

} // namespace poplar_test
