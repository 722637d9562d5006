// SPDX-License-Identifier: MIT
// Shared links: max-min fair rates, streams whose rate changes at whole cycles, routes and the
// physical ring order (models/timing/FlowShare, models/hw/Topology). Expectations by hand.
#include "models/common/SaturatingCycles.hpp"
#include "models/hw/Topology.hpp"
#include "models/timing/CollectivePlan.hpp"
#include "models/timing/FlowShare.hpp"
#include "models/timing/LinkTable.hpp"
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
    // A custom topology has no known ring: IPU order, however the members are listed.
    const Topology line = Topology::custom(3, {{{0, 1, 1}}, {{1, 2, 1}}});
    CHECK(line.alongRing({2, 0, 1}) == std::vector<uint32_t>{0, 1, 2});
    CHECK(line.path(0, 2) == std::vector<uint32_t>{0, 1, 2});
    CHECK(Topology::custom(3, {{{0, 1, 1}}}).path(0, 2).empty());
}

TEST_CASE("IPU-POD128 and IPU-POD256: racks of wrapped ladders joined through their gateways by GW-Links", "[unit][links][pod]")
{
    const Topology p128 = Topology::pod(128, 2);
    CHECK(p128.ipus() == 128);
    CHECK(p128.nodes() == 128 + 32 + 1); // a gateway per IPU-M2000, and the host
    CHECK(p128.links(0, 64) == 0);   // no IPU-Link between racks
    CHECK(p128.links(0, 62) == 2);   // each rack a torus
    CHECK(p128.edge(1, 128).kind == LinkKind::GatewayPcie); // IPU 1 in M2000 0
    CHECK(p128.edge(128, 144).kind == LinkKind::GwLink);    // M2000 0 of each rack
    CHECK(p128.edge(128, 144).lanes == 2);                  // both ports to the other rack
    CHECK(p128.nodeName(144) == "gw16");
    // Across racks: up to the gateway, over the GW-Link, down to the IPU.
    CHECK(p128.path(0, 64) == std::vector<uint32_t>{0, 128, 144, 64});
    CHECK(p128.route(0, 64).hops == 3);
    // The physical ring runs through one rack, then the next.
    const auto ring = p128.alongRing({64, 65, 0, 1});
    CHECK(ring == std::vector<uint32_t>{0, 1, 64, 65});
    // Four racks: the gateways of one position form a ring of single ports.
    const Topology p256 = Topology::pod(256, 4);
    CHECK(p256.nodes() == 256 + 64 + 1);
    CHECK(p256.edge(256, 272).lanes == 1);
    CHECK(p256.edge(304, 256).lanes == 1);
    CHECK(p256.allLinks().count({256, 288}) == 0); // not across the ring
    CHECK(p256.unreachable().empty());
}

TEST_CASE("Every system has its host tier: each IPU's PCIe link to its gateway, each gateway's link to the host", "[unit][links][host]")
{
    // One IPU: its gateway (node 1) and the host (node 2); half a rung adds no IPU-Link.
    const Topology one = Topology::ladder(1, false);
    CHECK(one.nodes() == 3);
    CHECK(one.edge(0, 1).kind == LinkKind::GatewayPcie);
    CHECK(one.edge(0, 1).lanes == 1);
    CHECK(one.edge(1, 2).kind == LinkKind::GatewayHost);
    CHECK(one.nodeName(2) == "host");
    CHECK(one.path(2, 0) == std::vector<uint32_t>{2, 1, 0});
    // Five IPUs: two IPU-M2000s, the second holding IPU 4 alone.
    const Topology five = Topology::ladder(5, false);
    CHECK(five.gateways() == 2);
    CHECK(five.gatewayOf(4) == 6);
    CHECK(five.edge(4, 6).kind == LinkKind::GatewayPcie);
    CHECK(five.allLinks().count({4, 5}) == 0); // IPU 4 has no rung partner: node 5 is a gateway
    // Routes go neither through the host nor from IPU to IPU through their gateway.
    const Topology line = Topology::custom(8, {{{0, 1, 1}}, {{1, 2, 1}}, {{2, 3, 1}}, {{3, 4, 1}}, {{4, 5, 1}}, {{5, 6, 1}}, {{6, 7, 1}}});
    CHECK(line.path(0, 7).size() == 8); // not 0, gw0, host, gw1, 7
    CHECK(line.path(0, 3).size() == 4); // not 0, gw0, 3
    CHECK(Topology::custom(2, {}).unreachable() == std::vector<uint32_t>{1});
}

TEST_CASE("Collective plans: one ring in a rack, hierarchical across racks", "[unit][links][pod]")
{
    using Rings = std::vector<std::vector<uint32_t>>;
    // In one rack: one ring along the ladder, 2(R - 1) steps of bytes / R.
    const auto flat = collectivePlan(Topology::ladder(8, false), {0, 1, 2, 3}, 4000000, CollectiveKind::AllReduce);
    REQUIRE(flat.size() == 1);
    CHECK(flat[0].rings == Rings{{0, 2, 3, 1}});
    CHECK(flat[0].share == 1000000);
    CHECK(flat[0].steps == 6);
    // Two members in each of two racks: reduce-scatter 2 MB in each rack (1 step), all-reduce
    // each member's 2 MB across the racks on two rings (2 steps of 1 MB), all-gather in each rack.
    const Topology pod = Topology::pod(128, 2);
    const auto all = collectivePlan(pod, {66, 0, 64, 2}, 4000000, CollectiveKind::AllReduce);
    REQUIRE(all.size() == 3);
    CHECK(all[0].rings == Rings{{0, 2}, {64, 66}});
    CHECK((all[0].share == 2000000 && all[0].steps == 1));
    CHECK(all[1].rings == Rings{{0, 64}, {2, 66}});
    CHECK((all[1].share == 1000000 && all[1].steps == 2));
    CHECK(all[2].rings == all[0].rings);
    // The halves: reduce-scatter in racks then across; all-gather across then in racks.
    const auto rs = collectivePlan(pod, {0, 2, 64, 66}, 4000000, CollectiveKind::ReduceScatter);
    REQUIRE(rs.size() == 2);
    CHECK((rs[0].rings == all[0].rings && rs[1].rings == all[1].rings && rs[1].steps == 1));
    const auto ag = collectivePlan(pod, {0, 2, 64, 66}, 4000000, CollectiveKind::AllGather);
    REQUIRE(ag.size() == 2);
    CHECK((ag[0].rings == all[1].rings && ag[1].rings == all[0].rings));
    // One member a rack: only the phase across racks. Uneven racks: one flat ring.
    CHECK(collectivePlan(pod, {0, 64}, 4000000, CollectiveKind::AllReduce).size() == 1);
    const auto uneven = collectivePlan(pod, {0, 2, 64}, 3000000, CollectiveKind::AllReduce);
    REQUIRE(uneven.size() == 1);
    CHECK(uneven[0].rings == Rings{{0, 2, 64}});
}

TEST_CASE("Link table: each link's bytes per cycle by kind, each route's latency hop by hop", "[unit][links][pod]")
{
    SystemParams s;
    s.numIpus = 128;
    s.topology = Topology::pod(128, 2);
    const LinkTable table(s);
    // IPU 0 to IPU 64: PCIe (2,000) + GW-Link (2,660) + PCIe (2,000).
    const auto& r = table.route(0, 64);
    CHECK(r.links.size() == 3);
    CHECK(r.latency == 6660);
    // PCIe Gen4 x8 at 0.85: 10.0658 B a cycle; 2 GW-Link ports at 0.9: 16.917; 2-link rail: 20.451.
    CHECK(table.capacity().at(table.id(0, 128)) == Approx(15.75e9 * 0.85 / 1.33e9));
    CHECK(table.capacity().at(table.id(128, 144)) == Approx(2 * 12.5e9 * 0.9 / 1.33e9));
    CHECK(table.capacity().at(table.id(2, 0)) == Approx(2 * 16e9 * 0.85 / 1.33e9));
    CHECK(table.route(0, 2).latency == 400);
    // No route between unlinked IPUs is a logic error, not a flow that never ends.
    SystemParams apart;
    apart.numIpus = 2;
    apart.topology = Topology::custom(2, {});
    CHECK_THROWS_AS(LinkTable(apart).route(0, 1), std::logic_error);
}
