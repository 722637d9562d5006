// SPDX-License-Identifier: MIT
// Shared links: max-min fair rates, streams whose rate changes at whole cycles, routes and the
// physical ring order (models/timing/FlowShare, models/hw/Topology). Expectations by hand.
#include "models/common/SaturatingCycles.hpp"
#include "models/hw/Topology.hpp"
#include "models/timing/FlowShare.hpp"
#include "models/timing/StreamTiming.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;

TEST_CASE("Max-min rates: the fullest link fixes its flows first, the others take what is left", "[unit][links]")
{
    // Two flows over one link of 10 B a cycle: 5 each.
    CHECK(maxMinRates({{0}, {0}}, {10}) == std::vector<long double>{5, 5});
    // Links A (10) and B (4); flow 0 crosses both, flow 1 only A, flow 2 only B. B is the
    // bottleneck (4 / 2 = 2 each); flow 1 then takes A's remaining 10 - 2 = 8.
    CHECK(maxMinRates({{0, 1}, {0}, {1}}, {10, 4}) == std::vector<long double>{2, 8, 2});
    // The order flows are listed in does not change any flow's rate.
    CHECK(maxMinRates({{1}, {0}, {0, 1}}, {10, 4}) == std::vector<long double>{2, 8, 2});
    // A flow crossing no link gets nothing; a link nobody uses changes nothing.
    CHECK(maxMinRates({{}, {1}}, {10, 4}) == std::vector<long double>{0, 4});
}

TEST_CASE("A stream finishes in the fewest whole cycles that move its bytes", "[unit][links]")
{
    // Alone on one IPU-Link it takes what streamCycles says: ceil(1e6 / 10.2256) = 97,795.
    const long double link = 16e9L * 0.85L / 1.33e9L;
    CHECK(cyclesToFinish(0, link, 1000000) == 97795);
    CHECK(cyclesToFinish(0, link, 1000000) == streamCycles(1000000, 16e9, 0.85, 1.33e9));
    // 500 B moved already, 500 B left at 0.5 B a cycle: 1,000 cycles; exactly done: 0.
    CHECK(cyclesToFinish(500, 0.5L, 1000) == 1000);
    CHECK(streamDone(500, 1000, 0.5L, 1000));
    CHECK_FALSE(streamDone(500, 999, 0.5L, 1000));
    CHECK(cyclesToFinish(1000, 0.5L, 1000) == 0);
    // Without a rate it never finishes: the ceiling, which the engines' time limit reports.
    CHECK(cyclesToFinish(0, 0, 1000) == kCycleCeiling);
}

TEST_CASE("Routes follow the widest shortest path, and rings run along the ladder", "[unit][links]")
{
    const Topology t = Topology::ladder(8, false);
    // 0 to 4: two rails (2 links each), not through the cross links (1 link).
    CHECK(t.path(0, 4) == std::vector<uint32_t>{0, 2, 4});
    CHECK(t.route(0, 4).links == 2);
    CHECK(t.path(1, 2) == std::vector<uint32_t>{1, 2}); // a cross link is a direct hop
    CHECK(t.path(3, 3) == std::vector<uint32_t>{3});
    // Up one rail and down the other: every neighbour a direct link.
    CHECK(t.alongRing({0, 1, 2, 3, 4, 5, 6, 7}) == std::vector<uint32_t>{0, 2, 4, 6, 7, 5, 3, 1});
    CHECK(t.alongRing({5, 0, 4}) == std::vector<uint32_t>{0, 4, 5});
    // An odd ladder closes its ring over the last rung's cross link.
    CHECK(Topology::ladder(5, false).alongRing({0, 1, 2, 3, 4}) == std::vector<uint32_t>{0, 2, 4, 3, 1});
    // A custom topology has no known ring: the order given stays.
    const Topology line = Topology::custom(3, {{{0, 1, 1}}, {{1, 2, 1}}});
    CHECK(line.alongRing({2, 0, 1}) == std::vector<uint32_t>{2, 0, 1});
    CHECK(line.path(0, 2) == std::vector<uint32_t>{0, 1, 2});
    CHECK(Topology::custom(3, {{{0, 1, 1}}}).path(0, 2).empty());
}
