// SPDX-License-Identifier: MIT
// Host transfers as flows: each crosses the IPU's PCIe link to its IPU-Gateway (15.75 GB/s x
// 0.85 / 1.33 GHz = 10.0658 B a cycle, 2,000 cycles) and the gateway's 100 GbE RoCE link to the
// host (12.5 GB/s x 0.9 / 1.33 GHz = 8.4586 B a cycle, 2,660 cycles), which the IPUs of one
// IPU-M2000 share, replicas' IPUs included.
#include "Simulate.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;
using test::kRoot;

namespace {

/** The gateway's link to the host as the figures above take it. */
const json kRoce = {{"bandwidth_bytes_per_second", 12.5e9}, {"efficiency", 0.9}, {"latency_cycles", 2660}};

/** IPUs `ipus` each read 1 MB from the host at cycle 0. */
json hostReads(const char* hardware, const std::vector<uint32_t>& ipus)
{
    json programs = json::array();
    for (uint32_t ipu : ipus)
        programs.push_back({{"ipu", ipu},
                            {"steps", {{{"op", "host_transfer"}, {"name", "in"}, {"direction", "to_ipu"}, {"bytes", 1000000}}}}});
    return {{"system", {{"base", hardware}, {"gateway_host_link", kRoce}}}, {"workload", {{"kind", "schedule"}, {"programs", programs}}}};
}

uint64_t linkBytes(const json& s, uint32_t from, uint32_t to)
{
    for (const auto& l : s["links"])
        if (l["from"] == from && l["to"] == to)
            return l["bytes"];
    return 0;
}


/** A data-parallel MLP on an IPU-M2000: host phase cycles of IPU 0. */
json replicatedMlp(uint32_t replicas, double gatewayHostBandwidth)
{
    return {{"base", "graph/mlp.json"},
            {"system",
             {{"base", "hardware/m2000.json"},
              {"gateway_host_link", {{"bandwidth_bytes_per_second", gatewayHostBandwidth}, {"efficiency", 0.9}, {"latency_cycles", 2660}}}}},
            {"workload", {{"strategy", {{"kind", "single"}, {"replicas", replicas}}}}},
            {"run", {{"device_iterations", 4}}}};
}

} // namespace

TEST_CASE("IPUs of one IPU-M2000 share its gateway's link to the host, by hand", "[sim][host][contention]")
{
    // Alone: the RoCE link is the narrower, ceil(1,000,000 / 8.4586) = 118,223 cycles, then
    // 2,000 + 2,660 cycles of latency.
    CHECK(test::simulateDoc(hostReads("hardware/m2000.json", {0}))["total_cycles"] == 118223 + 4660);
    // IPUs 0 and 1 at once: half the RoCE link each, ceil(1,000,000 / 4.2293) = 236,445.
    const json both = test::simulateDoc(hostReads("hardware/m2000.json", {0, 1}));
    CHECK(both["ipus"][0]["cycles"] == 236445 + 4660);
    CHECK(both["ipus"][1]["cycles"] == 236445 + 4660);
    // Nodes: IPUs 0-3, gateway 4, the host 5.
    CHECK(linkBytes(both, 5, 4) == 2000000);
    CHECK(linkBytes(both, 4, 0) == 1000000);
    CHECK(linkBytes(both, 4, 1) == 1000000);
    for (const auto& l : both["links"])
        if (l["from"] == 5)
            CHECK(l["kind"] == "gateway_host");
    // IPUs 0 and 4 of a POD16 are in different IPU-M2000s: each has its gateway's link alone.
    const json apart = test::simulateDoc(hostReads("hardware/pod16.json", {0, 4}));
    CHECK(apart["ipus"][0]["cycles"] == 118223 + 4660);
    CHECK(apart["ipus"][1]["cycles"] == 118223 + 4660);
    // With a gateway link wider than PCIe, PCIe sets the pace: ceil(1,000,000 / 10.0658) = 99,347.
    json wide = hostReads("hardware/m2000.json", {0});
    wide["system"]["gateway_host_link"] = {{"bandwidth_bytes_per_second", 1e15}, {"latency_cycles", 0}};
    CHECK(test::simulateDoc(wide)["total_cycles"] == 99347 + 2000);
    // The reference engine, ticking every cycle, agrees phase by phase.
    CHECK(test::engineDisagreement(hostReads("hardware/m2000.json", {0, 1})) == "");
    CHECK(test::engineDisagreement(hostReads("hardware/pod16.json", {0, 4})) == "");
}

TEST_CASE("Replicas share their IPU-M2000's link to the host as their own IPUs would", "[sim][host][contention]")
{
    // One programmed IPU; the other replicas' IPUs make the same transfers in lockstep, so with
    // 4 replicas in one M2000 each gets a quarter of the RoCE link: 4 times its bandwidth gives
    // every transfer the rate one replica has at the default (PCIe being wider still).
    auto host = [](uint32_t replicas, double bandwidth) {
        return test::simulateDoc(replicatedMlp(replicas, bandwidth))["ipus"][0]["breakdown"]["host"].get<uint64_t>();
    };
    const uint64_t one = host(1, 12.5e9), two = host(2, 12.5e9), four = host(4, 12.5e9);
    CHECK(one < two);
    CHECK(two < four);
    CHECK(host(4, 4 * 12.5e9) == one);
    CHECK(host(2, 2 * 12.5e9) == one);
    // Compute never changes with replicas.
    CHECK(test::simulateDoc(replicatedMlp(4, 12.5e9))["ipus"][0]["breakdown"]["compute"] ==
          test::simulateDoc(replicatedMlp(1, 12.5e9))["ipus"][0]["breakdown"]["compute"]);
    CHECK(test::engineDisagreement(replicatedMlp(4, 12.5e9)) == "");
}

TEST_CASE("More bandwidth to the host never costs cycles, and a bad link is named", "[sim][host][metamorphic]")
{
    uint64_t last = UINT64_MAX;
    for (const char* bandwidth : {"2e9", "6.25e9", "12.5e9", "50e9"}) {
        const uint64_t t = test::simulateFile("configs/mnist/pipelined.json",
                                              {"/run/epochs=1", std::string("/system/gateway_host_link/bandwidth_bytes_per_second=") + bandwidth})
                               .at("total_cycles");
        INFO(bandwidth);
        CHECK(t <= last);
        last = t;
    }
    CHECK(test::configErrorOf({{"base", "mnist/pipelined.json"}, {"system", {{"gateway_host_link", {{"efficiency", 0}}}}}},
                              kRoot + "/configs/bad.json")
              .find("/system/gateway_host_link/efficiency") != std::string::npos);
}
