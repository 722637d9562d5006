// SPDX-License-Identifier: MIT
// Exchange, sync and host-link timing rules against hand computations.
#include "models/exchange/Exchange.hpp"
#include "models/host/HostLink.hpp"
#include "models/sync/Sync.hpp"
#include "models/tile/TileArray.hpp"
#include "models/timing/ExchangeTiming.hpp"
#include "models/timing/HostCallTiming.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace ipusim;

TEST_CASE("Exchange: bytes per cycle, shared receive bus, latency of the longest path", "[exchange]")
{
    IpuParams hw;
    CHECK(exchangeTileCycles(hw, {10, 0, 0}) == 3);   // ceil(10 / 4)
    CHECK(exchangeTileCycles(hw, {0, 8, 0}) == 2);
    CHECK(exchangeTileCycles(hw, {0, 0, 8}) == 1);    // both bus tiles take it: 8 B at 8 B/cycle
    CHECK(exchangeTileCycles(hw, {0, 8, 8}) == 3);    // ceil((8*2 + 8) / 8)
    CHECK(exchangeTileCycles(hw, {100, 8, 0}) == 25); // send-bound
    // 1,472 tiles in 16 columns: 92 rows; 52 + 2 x 91
    CHECK(exchangeLatencyCycles(hw) == 234);
    hw.tiles = 64;
    CHECK(exchangeLatencyCycles(hw) == 52 + 2 * 3);
    hw.sendBytesPerCycle = hw.recvBytesPerCycle = 8;
    CHECK(exchangeTileCycles(hw, {10, 0, 0}) == 2);
}

TEST_CASE("Exchange phase lasts as long as its busiest tile plus latency", "[exchange]")
{
    IpuParams hw;
    Exchange x("x", hw);
    ExchangeStep step;
    step.bytes.add(0, 100, {400, 40, 0});
    step.bytes.add(100, 1, {4, 4000, 0});
    CHECK(x.phaseCycles(step) == 1000 + 234);
    CHECK(x.phaseCycles(ExchangeStep{}) == 0);
}

TEST_CASE("Exchange phase: the busiest tile found without costing every run", "[exchange]")
{
    // Against costing every tile: random runs, bandwidths and receive buses.
    std::mt19937 rng(7);
    auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n)(rng); };
    for (int trial = 0; trial < 200; ++trial) {
        IpuParams hw;
        hw.sendBytesPerCycle = uint32_t(1 + pick(7));
        hw.recvBytesPerCycle = uint32_t(1 + pick(7));
        hw.tilesPerReceiveBus = uint32_t(1 + pick(3));
        ExchangeStep step;
        uint64_t busiest = 0;
        for (uint32_t tile = 0, runs = uint32_t(pick(6)); runs > 0; --runs) {
            const ExchangeBytes b{pick(1000), pick(1000), pick(3) == 0 ? pick(1000) : 0};
            const uint32_t count = uint32_t(1 + pick(4));
            step.bytes.add(tile, count, b);
            busiest = std::max(busiest, exchangeTileCycles(hw, b));
            tile += count + uint32_t(pick(2));
        }
        INFO("trial " << trial);
        CHECK(exchangePhaseCycles(hw, step) == (busiest == 0 ? 0 : busiest + exchangeLatencyCycles(hw)));
    }
}

TEST_CASE("Exchange keeps each step's cost, numbered or not", "[exchange]")
{
    IpuParams hw;
    Exchange x("x", hw, 2);
    ExchangeStep a, b, c; // a and b share point 0, as in a program not numbered
    a.bytes.add(0, 1, {400, 0, 0});
    b.bytes.add(0, 1, {40, 0, 0});
    c.bytes.add(0, 2, {4, 0, 0});
    c.point = 7; // past the points the exchange was told of
    for (int round = 0; round < 2; ++round) {
        CHECK(x.phaseCycles(a) == 100 + 234);
        CHECK(x.phaseCycles(b) == 10 + 234);
        CHECK(x.phaseCycles(c) == 1 + 234);
    }
    x.account(a);
    x.account(b);
    x.account(c);
    CHECK(x.bytesSent() == 400 + 40 + 8);
}

TEST_CASE("Sync releases its latency after the last arrival", "[sync]")
{
    IpuParams hw;
    Sync s("s", hw);
    CHECK(s.release(1000) == 1126);
    CHECK(s.barriers() == 1);
}

TEST_CASE("Host link: latency plus bytes at the effective bandwidth, in tile cycles", "[host]")
{
    HostLink link("h", LinkParams{15.75e9, 0.85, 2000}, 1.33e9);
    // 15.75e9 x 0.85 / 1.33e9 = 10.0658 B/cycle; 1e6 / 10.0658 = 99,346.4 -> 99,347
    CHECK(link.transferCycles(1000000) == 101347);
    CHECK(link.transferCycles(0) == 0);
    CHECK(link.transfer(Direction::ToIpu, 10) == 2001);
    CHECK(link.bytesToIpu() == 10);
}

TEST_CASE("Host call overhead: seconds at the IPU clock, rounded up to whole cycles", "[host]")
{
    HostParams host;
    CHECK(hostCallOverheadCycles(host, 1.33e9) == 0); // the default: an ideal host
    host.callOverheadSeconds = 1e-3;
    CHECK(hostCallOverheadCycles(host, 1.33e9) == 1330000);
    host.callOverheadSeconds = 1.5e-9; // 1.995 cycles
    CHECK(hostCallOverheadCycles(host, 1.33e9) == 2);
    host.callOverheadSeconds = 2e-9; // 2.66 cycles
    CHECK(hostCallOverheadCycles(host, 1.33e9) == 3);
}

TEST_CASE("Tile runs add tile by tile", "[tiles]")
{
    TileRuns<uint64_t> a, b;
    a.add(0, 10, 5);
    b.add(5, 10, 7);
    auto c = addRuns(a, b);
    CHECK(c.at(0) == 5);
    CHECK(c.at(5) == 12);
    CHECK(c.at(9) == 12);
    CHECK(c.at(10) == 7);
    CHECK(c.at(15) == 0);
    CHECK(c.runs().size() == 3);
}
