// SPDX-License-Identifier: MIT
// Multi-IPU timing rules and topologies against hand computations.
#include "models/timing/LinkTiming.hpp"
#include "models/sync/ExternalSync.hpp"
#include "models/hw/Topology.hpp"
#include "models/timing/SyncTiming.hpp"
#include "sim/config/ConfigError.hpp"
#include "sim/engine/Experiment.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;

TEST_CASE("Ladder topology: rungs of 4 links, rails of 2, one cross link each way", "[system]")
{
    Topology m2000 = Topology::ladder(4, false);
    CHECK(m2000.links(0, 1) == 4);
    CHECK(m2000.links(2, 3) == 4);
    CHECK(m2000.links(0, 2) == 2);
    CHECK(m2000.links(1, 3) == 2);
    CHECK(m2000.links(0, 3) == 1);
    CHECK(m2000.links(1, 2) == 1);
    CHECK(m2000.unreachable().empty());
    CHECK(m2000.route(1, 2).hops == 1);
    CHECK(m2000.route(1, 2).links == 1);

    Topology pod16 = Topology::ladder(16, false);
    CHECK(pod16.links(14, 0) == 0);
    CHECK(pod16.route(0, 14).hops == 7);
    CHECK(pod16.route(0, 14).links == 2); // along a rail
    Topology pod64 = Topology::ladder(64, true);
    CHECK(pod64.links(62, 0) == 2);         // the torus wraps
    CHECK(pod64.route(0, 62).hops == 1);
    for (uint32_t i = 2; i < 62; ++i) { // every interior IPU uses its 10 links
        uint32_t n = 0;
        for (uint32_t j = 0; j < 64; ++j)
            n += pod64.links(i, j);
        CHECK(n == 10);
    }
    Topology split = Topology::custom(4, {{{0, 1, 2}}, {{2, 3, 2}}});
    CHECK(split.unreachable() == std::vector<uint32_t>{2, 3});
}

TEST_CASE("External sync latency grows with the group, as PopLibs' IPU model has it", "[system]")
{
    // ceil(2 x 15 ns x 1.33 GHz x hops), hops = 1 + (n/2)/2: ipu-facts.md §1.4
    CHECK(externalSyncCycles(2, 15e-9, 1.33e9) == 40);
    CHECK(externalSyncCycles(4, 15e-9, 1.33e9) == 80);
    CHECK(externalSyncCycles(16, 15e-9, 1.33e9) == 200);
    CHECK(externalSyncCycles(64, 15e-9, 1.33e9) == 679);
}

TEST_CASE("IPU-Link transfer: hops x latency + bytes over the narrowest hop", "[system]")
{
    Topology t = Topology::ladder(4, false);
    const LinkParams link{16e9, 0.85, 400};
    // 4 links x 16e9 x 0.85 / 1.33e9 = 40.90 B/cycle: 1e6 B -> 24,449 cycles
    CHECK(ipuLinkTransferCycles(t, link, 1.33e9, 0, 1, 1000000) == 400 + 24449);
    // 1 cross link: 10.23 B/cycle -> 97,795 cycles
    CHECK(ipuLinkTransferCycles(t, link, 1.33e9, 1, 2, 1000000) == 400 + 97795);
    CHECK(ipuLinkTransferCycles(t, link, 1.33e9, 0, 0, 1000000) == 0);
    CHECK(ipuLinkTransferCycles(t, link, 1.33e9, 0, 1, 0) == 0);
}

TEST_CASE("Bad multi-IPU input: unconnected topologies, IPUs outside the system", "[system][errors]")
{
    const std::string root = IPUSIM_SOURCE_DIR;
    json d = {{"system", {{"base", "hardware/m2000.json"}, {"topology", {{"kind", "custom"}, {"links", {{0, 1, 4}, {2, 3, 4}}}}}}},
              {"workload", {{"kind", "mnist"}}}};
    CHECK_THROWS_WITH(buildExperiment(config::loadConfig(d, root + "/configs/x.json")),
                      Catch::Contains("/system/topology: IPUs 2, 3 have no IPU-Link route to IPU 0"));
    d["system"]["topology"]["links"] = {{0, 1, 4}, {1, 7, 4}};
    CHECK_THROWS_WITH(buildExperiment(config::loadConfig(d, root + "/configs/x.json")),
                      Catch::Contains("/system/topology/links/1/1: expected an IPU below num_ipus (4), found 7"));
    json s = {{"system", {{"base", "hardware/m2000.json"}}},
              {"workload", {{"kind", "schedule"}, {"programs", {{{"ipu", 4}, {"steps", json::array()}}}}}}};
    CHECK_THROWS_WITH(buildExperiment(config::loadConfig(s, root + "/configs/x.json")),
                      Catch::Contains("/workload/programs/0/ipu: expected an IPU of the system (0 to 3), found 4"));
    s["workload"]["programs"] = {{{"ipu", 1}, {"steps", {{{"op", "ipu_copy"}, {"name", "c"}, {"send", {{{"ipu", 1}, {"bytes", 4}}}}}}}}};
    CHECK_THROWS_WITH(buildExperiment(config::loadConfig(s, root + "/configs/x.json")),
                      Catch::Contains("/workload/programs/0/steps/0/send/0/ipu: expected another IPU of the system"));
}

TEST_CASE("Ring collectives: 2(R-1) steps of bytes/R for all-reduce, R-1 for the halves", "[system][collective]")
{
    Topology t = Topology::ladder(4, false);
    const LinkParams link{16e9, 0.85, 400};
    auto ring = [&](const std::vector<uint32_t>& members, uint64_t bytes, CollectiveKind kind) {
        return ringCycles(t, link, 1.33e9, members, bytes, kind);
    };
    // Ring 0-1: 4 links both ways; 1 MB / 2 = 500,000 B per step: 400 + ceil(500000 / 40.90) = 12,625
    const uint64_t step2 = 400 + 12225;
    CHECK(ring({0, 1}, 1000000, CollectiveKind::AllReduce) == 2 * step2);
    CHECK(ring({0, 1}, 1000000, CollectiveKind::ReduceScatter) == step2);
    // Ring 0-1-3-2: edges 0-1 (4 links), 1-3 (2), 3-2 (4), 2-0 (2): the 2-link rails set the pace.
    // 250,000 B per step over 2 links (20.45 B/cycle): 400 + 12,225
    const uint64_t step4 = 400 + 12225;
    CHECK(ring({0, 1, 3, 2}, 1000000, CollectiveKind::AllReduce) == 6 * step4);
    CHECK(ring({0, 1, 3, 2}, 1000000, CollectiveKind::AllGather) == 3 * step4);
    CHECK(ring({0}, 1000000, CollectiveKind::AllReduce) == 0);
    // More replicas move less per step but take more steps.
    CHECK(ring({0, 1, 3, 2}, 0, CollectiveKind::AllReduce) == 0);
}

TEST_CASE("Replicas must be a power of two and divide the system", "[system][errors]")
{
    const std::string root = IPUSIM_SOURCE_DIR;
    auto err = [&](std::vector<std::string> sets) -> std::string {
        try {
            buildExperiment(root + "/configs/mnist/pipelined_pod16.json", sets);
        } catch (const config::ConfigError& e) {
            return e.what();
        }
        return "no error";
    };
    CHECK_THAT(err({"/workload/strategy/replicas=3"}), Catch::Contains("/workload/strategy/replicas: expected a power of two"));
    CHECK_THAT(err({"/workload/strategy/replicas=8"}),
               Catch::Contains("8 replicas of 4 IPUs need 32 IPUs and must divide the system's 16"));
    CHECK_THAT(err({"/workload/strategy/replicas=1", "/workload/strategy/replicated_tensor_sharding=true"}),
               Catch::Contains("/workload/strategy/replicated_tensor_sharding: needs more than one replica"));
    CHECK(err({"/workload/strategy/replicas=2"}) == "no error");
}
