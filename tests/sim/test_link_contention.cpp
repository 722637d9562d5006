// SPDX-License-Identifier: MIT
// IPU-Links as shared resources: ring collectives that cross one link at once share its
// bandwidth, and rings run along the physical ring. Figures by hand: one IPU-Link moves
// 16e9 x 0.85 / 1.33e9 = 10.2256 B a cycle one way; a hop's latency is 400 cycles.
#include "Simulate.hpp"
#include "models/reference/ReferenceEngine.hpp"
#include "sim/engine/Simulation.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;
using test::kRoot;

namespace {
/** The bytes the summary lists on the link from `from` to `to` (0 when it lists none). */
uint64_t linkBytes(const json& s, uint32_t from, uint32_t to)
{
    for (const auto& l : s["links"])
        if (l["from"] == from && l["to"] == to)
            return l["bytes"];
    return 0;
}
} // namespace

TEST_CASE("Two rings over one IPU-Link share it: each share takes the sum of both shares over its bandwidth", "[sim][links][contention]")
{
    // Rings 0-2 and 1-3 on the line 0-1-2-3 of single links: every share of 500,000 B crosses
    // two hops, and the links 1->2 and 2->1 each carry one share of each ring. Max-min, every
    // share gets half a link: ceil(1,000,000 / 10.2256) = 97,795 cycles, then 2 x 400.
    const json s = test::simulateFile("configs/schedules/shared_link.json");
    CHECK(s["total_cycles"] == 97795 + 800);
    CHECK(linkBytes(s, 1, 2) == 1000000);
    CHECK(linkBytes(s, 2, 1) == 1000000);
    CHECK(linkBytes(s, 0, 1) == 500000);
    for (const auto& l : s["links"])
        if (l["from"] == 1 && l["to"] == 2) {
            CHECK(l["busy_cycles"] == 97795); // 1,000,000 B at a link's full bandwidth
            CHECK(l["utilisation"].get<double>() == Approx(97795.0 / 98595.0));
        }
    // Alone, a ring's shares have their links to themselves: ceil(500,000 / 10.2256) = 48,898.
    const json alone = test::simulateFile("configs/schedules/shared_link.json",
                                          {R"(/workload/programs/1/steps=[])", R"(/workload/programs/3/steps=[])"});
    CHECK(alone["total_cycles"] == 48898 + 800);
}

TEST_CASE("A ring laid along the physical ring uses each link once per step", "[sim][links][collective]")
{
    // One programmed IPU of eight replicas on a POD16's ladder: the ring runs 0-2-4-6-7-5-3-1,
    // every hop a direct link, the 2-link rails the narrowest: 20.4511 B a cycle. An all-reduce
    // of 8 MB takes 14 steps of 1 MB: 400 + ceil(1,000,000 / 20.4511) = 400 + 48,898 each.
    const json doc = {{"system", {{"base", "hardware/pod16.json"}}},
                      {"workload",
                       {{"kind", "schedule"},
                        {"programs",
                         {{{"ipu", 0},
                           {"steps",
                            {{{"op", "collective"}, {"name", "grads"}, {"kind", "all_reduce"}, {"bytes", 8000000},
                              {"ring", {0, 1, 2, 3, 4, 5, 6, 7}}}}}}}}}}};
    const json s = test::simulateDoc(doc);
    CHECK(s["total_cycles"] == 14 * (400 + 48898));
    const std::vector<std::pair<uint32_t, uint32_t>> ring{{0, 2}, {2, 4}, {4, 6}, {6, 7}, {7, 5}, {5, 3}, {3, 1}, {1, 0}};
    CHECK(s["links"].size() == ring.size()); // no other link carries anything
    for (const auto& [from, to] : ring)
        CHECK(linkBytes(s, from, to) == 14 * 1000000);
}

TEST_CASE("A ring starts once every programmed member is there, and earlier ones wait as sync", "[sim][links][collective]")
{
    // IPU 1 computes 5,000 cycles first; IPU 0 waits for it, then both all-reduce 1 MB over
    // their 4-link rung: 2 steps of 400 + ceil(500,000 / 40.9023) = 12,625.
    const json doc = {{"system", {{"base", "hardware/m2000.json"}}},
                      {"workload",
                       {{"kind", "schedule"},
                        {"programs",
                         {{{"ipu", 0},
                           {"steps", {{{"op", "collective"}, {"name", "r"}, {"kind", "all_reduce"}, {"bytes", 1000000}, {"ring", {0, 1}}}}}},
                          {{"ipu", 1},
                           {"steps",
                            {{{"op", "compute"}, {"name", "work"}, {"tiles", {{{"tiles", "all"}, {"cycles", 5000}}}}},
                             {{"op", "collective"}, {"name", "r"}, {"kind", "all_reduce"}, {"bytes", 1000000}, {"ring", {0, 1}}}}}}}}}}};
    const json s = test::simulateDoc(doc);
    CHECK(s["total_cycles"] == 5000 + 2 * 12625);
    CHECK(s["ipus"][0]["breakdown"]["sync"] == 5000);
    CHECK(s["ipus"][0]["breakdown"]["collective"] == 2 * 12625);
}

TEST_CASE("A ring whose member never comes is reported, not hung", "[sim][links][errors]")
{
    const json doc = {{"system", {{"base", "hardware/m2000.json"}}},
                      {"workload",
                       {{"kind", "schedule"},
                        {"programs",
                         {{{"ipu", 0},
                           {"steps", {{{"op", "collective"}, {"name", "r"}, {"kind", "all_reduce"}, {"bytes", 1000}, {"ring", {0, 1}}}}}},
                          {{"ipu", 1}, {"steps", json::array()}}}}}}};
    CHECK_THROWS_WITH(test::simulateDoc(doc), Catch::Contains("collective \"r\" over IPUs 0, 1 waits for members that never come (only IPU 0 came)"));
}

TEST_CASE("More IPU-Link bandwidth never costs cycles, contended or not", "[sim][links][metamorphic]")
{
    uint64_t last = UINT64_MAX;
    for (const char* bw : {"8e9", "16e9", "32e9"}) {
        const json s = test::simulateFile("configs/schedules/shared_link.json", {std::string("/system/ipu_link/bandwidth_bytes_per_second=") + bw});
        CHECK(s["total_cycles"].get<uint64_t>() <= last);
        last = s["total_cycles"];
    }
}

TEST_CASE("A ring that would run past SystemC's clock is reported, not wrapped", "[sim][links][errors]")
{
    const json doc = {{"system", {{"base", "hardware/m2000.json"}}},
                      {"workload",
                       {{"kind", "schedule"},
                        {"programs",
                         {{{"ipu", 0},
                           {"steps",
                            {{{"op", "collective"}, {"name", "r"}, {"kind", "all_reduce"}, {"bytes", uint64_t(1e18)}, {"ring", {0, 1}}}}}}}}}}};
    CHECK_THROWS_WITH(test::simulateDoc(doc), Catch::Contains("a transfer or collective over the links would run past cycle 24534159804369"));
}

namespace {
/** IPU-copy programs on the line 0-1-2-3 of single links: IPU 0 sends 1 MB to IPU 2, IPU 1
 *  (after `delay` cycles of compute, as IPU 3) 1 MB to IPU 3. Both routes cross link 1->2. */
json crossingCopies(uint64_t delay)
{
    auto compute = [&](json steps) {
        const json work = {{"op", "compute"}, {"name", "work"}, {"tiles", {{{"tiles", "all"}, {"cycles", delay}}}}};
        if (delay > 0)
            steps.insert(steps.begin(), work);
        return steps;
    };
    auto copy = [](const char* way, uint32_t peer) {
        return json{{"op", "ipu_copy"}, {"name", "move"}, {way, {{{"ipu", peer}, {"bytes", 1000000}}}}};
    };
    return {{"system", {{"base", "hardware/m2000.json"}, {"topology", {{"kind", "custom"}, {"links", {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}}}}}}},
            {"workload",
             {{"kind", "schedule"},
              {"programs",
               {{{"ipu", 0}, {"steps", {copy("send", 2)}}},
                {{"ipu", 1}, {"steps", compute({copy("send", 3)})}},
                {{"ipu", 2}, {"steps", {copy("recv", 0)}}},
                {{"ipu", 3}, {"steps", compute({copy("recv", 1)})}}}}}}};
}
} // namespace

TEST_CASE("IPU copies over one link share it, and a late one slows an early one only while both run", "[sim][links][contention]")
{
    // At once: each transfer gets half of link 1->2, so both stream the 2 MB the link carries:
    // ceil(2,000,000 / 10.2256) = 195,589 cycles, then 2 hops x 400.
    const json both = test::simulateDoc(crossingCopies(0));
    CHECK(both["ipus"][0]["cycles"] == 195589 + 800);
    CHECK(both["ipus"][1]["cycles"] == 195589 + 800);
    // IPU 1's transfer starts at 40,000: IPU 0's has moved 40,000 x 10.2256 = 409,022.6 B alone,
    // then streams its 590,977.4 B left at half: ceil(590,977.4 / 5.1128) = 115,589 cycles, and
    // ends at 155,589 + 800. IPU 1's has then moved 115,589 x 5.1128 = 590,981.4 B and streams
    // the rest alone: ceil(409,018.6 / 10.2256) = 40,000 cycles, ending at 195,589 + 800 (the
    // link was full throughout).
    const json late = test::simulateDoc(crossingCopies(40000));
    CHECK(late["ipus"][0]["cycles"] == 155589 + 800);
    CHECK(late["ipus"][2]["cycles"] == 155589 + 800);
    CHECK(late["ipus"][1]["cycles"] == 195589 + 800);
    CHECK(late["ipus"][1]["breakdown"]["ipu_copy"] == 195589 + 800 - 40000);
    // The reference engine, ticking every cycle, agrees phase by phase.
    for (const uint64_t delay : {uint64_t(0), uint64_t(40000)}) {
        const Experiment e = buildExperiment(config::loadConfig(crossingCopies(delay), kRoot + "/configs/x.json"));
        PhaseRecorder fast;
        {
            Simulation sim(e, &fast);
            sim.run();
        }
        const ReferenceResult ref = runReference(e.schedule, e.system, e.run.hostCalls);
        CHECK(firstDifference(fast.byIpu(), ref.phases) == "");
    }
}

TEST_CASE("Across racks of an IPU-POD128 a transfer crosses two gateways, by hand", "[sim][links][pod]")
{
    // IPU 0 to IPU 64: PCIe up (1 lane, 15.75 GB/s x 0.85: 10.0658 B a cycle), the GW-Link
    // (2 ports of 12.5 GB/s x 0.9: 16.917 B a cycle), PCIe down. The PCIe hops set the pace:
    // ceil(1,000,000 / 10.0658) = 99,347 cycles, then 2,000 + 2,660 + 2,000 cycles of latency.
    auto copy = [](const char* way, uint32_t peer) {
        return json{{"op", "ipu_copy"}, {"name", "across"}, {way, {{{"ipu", peer}, {"bytes", 1000000}}}}};
    };
    json doc = {{"system", {{"base", "hardware/pod128.json"}}},
                {"workload",
                 {{"kind", "schedule"},
                  {"programs", {{{"ipu", 0}, {"steps", {copy("send", 64)}}}, {{"ipu", 64}, {"steps", {copy("recv", 0)}}}}}}}};
    const json s = test::simulateDoc(doc);
    CHECK(s["total_cycles"] == 99347 + 6660);
    bool gw = false;
    for (const auto& l : s["links"])
        if (l["kind"] == "gw_link") {
            gw = true;
            CHECK(l["from"] == 128);
            CHECK(l["to"] == 144);
            CHECK(l["bytes"] == 1000000);
        }
    CHECK(gw);
    // An all-reduce of 2 MB over the same two IPUs: 2 steps of 1 MB each way at once (the two
    // directions are separate links): 2 x (99,347 + 6,660).
    const json ring = {{"op", "collective"}, {"name", "r"}, {"kind", "all_reduce"}, {"bytes", 2000000}, {"ring", {0, 64}}};
    doc["workload"]["programs"] = {{{"ipu", 0}, {"steps", {ring}}}, {{"ipu", 64}, {"steps", {ring}}}};
    CHECK(test::simulateDoc(doc)["total_cycles"] == 2 * (99347 + 6660));
    // The reference engine agrees phase by phase.
    const Experiment e = buildExperiment(config::loadConfig(doc, kRoot + "/configs/x.json"));
    PhaseRecorder fast;
    {
        Simulation sim(e, &fast);
        sim.run();
    }
    CHECK(firstDifference(fast.byIpu(), runReference(e.schedule, e.system, e.run.hostCalls).phases) == "");
}

TEST_CASE("Bad pod topologies name the key and what was expected", "[sim][links][errors]")
{
    auto error = [](const json& system) -> std::string {
        try {
            test::simulateDoc({{"system", system}, {"workload", {{"kind", "mnist"}}}});
        } catch (const std::exception& e) {
            return e.what();
        }
        return "";
    };
    CHECK_THAT(error({{"base", "hardware/mk2.json"}, {"num_ipus", 128}, {"topology", {{"kind", "pod"}, {"racks", 3}}}}),
               Catch::Contains("/system/topology/racks: expected racks of whole IPU-M2000s: num_ipus (128) / racks a multiple of 4, found 3 racks"));
    CHECK_THAT(error({{"base", "hardware/pod64.json"}, {"topology", {{"racks", 2}}}}),
               Catch::Contains("/system/topology/racks: expected 1 (racks are for kind \"pod\"), found 2"));
    CHECK_THAT(error({{"base", "hardware/pod128.json"}, {"topology", {{"links", {{0, 1, 4}}}}}}),
               Catch::Contains("/system/topology/links: expected no links for kind \"pod\", which lays its racks out itself"));
}

TEST_CASE("Collectives across racks run hierarchically, against the closed form", "[sim][links][pod]")
{
    // IPUs 0, 2 (rack 0) and 64, 66 (rack 1) of a POD128, 4 MB; one programmed IPU, the others
    // its replicas. In each rack, a 2 MB share over a 2-link rail: 400 + ceil(2,000,000 /
    // 20.4511) = 98,195 cycles. Across, 1 MB shares 0->64 and 2->66 both cross GW-Link
    // 128->144 (2 ports, 16.917 B a cycle): 8.4586 each, below the PCIe hops' 10.0658:
    // ceil(1,000,000 / 8.4586) + 2,000 + 2,660 + 2,000 = 124,883 a step.
    auto collective = [](const char* kind) {
        const json doc = {{"system", {{"base", "hardware/pod128.json"}}},
                          {"workload",
                           {{"kind", "schedule"},
                            {"programs",
                             {{{"ipu", 0},
                               {"steps",
                                {{{"op", "collective"}, {"name", "grads"}, {"kind", kind}, {"bytes", 4000000}, {"ring", {0, 2, 64, 66}}}}}}}}}}};
        // The reference engine, ticking every cycle, agrees phase by phase.
        const Experiment e = buildExperiment(config::loadConfig(doc, kRoot + "/configs/x.json"));
        PhaseRecorder fast;
        {
            Simulation sim(e, &fast);
            sim.run();
        }
        CHECK(firstDifference(fast.byIpu(), runReference(e.schedule, e.system, e.run.hostCalls).phases) == "");
        return test::simulateDoc(doc)["total_cycles"].get<uint64_t>();
    };
    CHECK(collective("all_reduce") == 98195 + 2 * 124883 + 98195);
    CHECK(collective("reduce_scatter") == 98195 + 124883);
    CHECK(collective("all_gather") == 124883 + 98195);
}

TEST_CASE("The members of a ring must list one collective, in any order", "[sim][links][errors]")
{
    // Two IPUs joined by one link (custom topology: rings run in IPU order), each listing the
    // ring its own way: they meet. 1 MB all-reduce: 2 steps of 400 + ceil(500,000 / 10.2256).
    auto doc = [](uint64_t bytes1) {
        auto ring = [](std::vector<uint32_t> members, uint64_t bytes) {
            return json{{"op", "collective"}, {"name", "r"}, {"kind", "all_reduce"}, {"bytes", bytes}, {"ring", members}};
        };
        return json{{"system", {{"base", "hardware/m2000.json"}, {"topology", {{"kind", "custom"}, {"links", {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}}}}}}},
                    {"workload",
                     {{"kind", "schedule"},
                      {"programs",
                       {{{"ipu", 0}, {"steps", {ring({0, 1}, 1000000)}}}, {{"ipu", 1}, {"steps", {ring({1, 0}, bytes1)}}}}}}}};
    };
    CHECK(test::simulateDoc(doc(1000000))["total_cycles"] == 2 * (400 + 48898));
    // Listings that disagree on the bytes are the schedule's fault, named.
    CHECK_THROWS_WITH(test::simulateDoc(doc(2000)),
                      Catch::Contains("collective \"r\": IPU 1 lists 2000 bytes (all_reduce) but IPU 0 lists 1000000 bytes (all_reduce): every member"));
}

TEST_CASE("Weak scaling over racks: total throughput rises, throughput per IPU never does", "[sim][links][pod][metamorphic]")
{
    // ResNet-50 at the POD64 settings on 64, 128 and 256 replicas: more replicas share the
    // all-reduce over more links (and, beyond a rack, the gateways), never less.
    SKIP_WITHOUT_BUNDLED_MODELS();
    double lastTotal = 0, lastPerIpu = 1e300;
    for (const char* config : {"configs/resnet/resnet50_pod64.json", "configs/resnet/resnet50_pod128.json", "configs/resnet/resnet50_pod256.json"}) {
        INFO(config);
        const json s = test::simulateFile(config);
        const double total = s["samples_per_second"], perIpu = total / s["num_ipus"].get<double>();
        CHECK(total > lastTotal);
        CHECK(perIpu <= lastPerIpu);
        lastTotal = total;
        lastPerIpu = perIpu;
    }
    // More GW-Link or gateway PCIe bandwidth never costs cycles.
    uint64_t last = UINT64_MAX;
    for (const char* bw : {"6.25e9", "12.5e9", "25e9"}) {
        const json s = test::simulateFile("configs/resnet/resnet50_pod256.json", {std::string("/system/gw_link/bandwidth_bytes_per_second=") + bw});
        CHECK(s["total_cycles"].get<uint64_t>() <= last);
        last = s["total_cycles"];
    }
}
