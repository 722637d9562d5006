// SPDX-License-Identifier: MIT
// The host's answer to each host exchange (system.host.sync_latency_seconds): a run of
// consecutive host transfers in an IPU's program is one exchange; its first transfer waits for
// the host, then the data moves over the links (1 MB: 118,223 + 4,660 cycles; 1,000 B:
// ceil(1,000 / 8.4586) = 119, + 4,660; see test_host_network.cpp).
#include "Simulate.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using json = nlohmann::json;
using test::kRoot;

namespace {

constexpr uint64_t kMegabyte = 118223 + 4660, kKilobyte = 119 + 4660;

json hostStep(const char* name, const char* direction, uint64_t bytes)
{
    return {{"op", "host_transfer"}, {"name", name}, {"direction", direction}, {"bytes", bytes}};
}

/** One IPU, `iterations` times: images (1 MB) and labels (1,000 B) in, 1,000 cycles of compute
 *  on tile 0, the output (1,000 B) out; the host answers each exchange in `latency` seconds. */
json loop(uint64_t iterations, double latency, uint64_t hostCalls = 1)
{
    const json compute = {{"op", "compute"}, {"name", "work"}, {"tiles", {{{"tiles", {0, 0}}, {"cycles", 1000}}}}};
    const json body = {hostStep("images", "to_ipu", 1000000), hostStep("labels", "to_ipu", 1000), compute,
                       hostStep("output", "from_ipu", 1000)};
    return {{"system",
             {{"base", "hardware/mk2.json"},
              {"gateway_host_link", {{"bandwidth_bytes_per_second", 12.5e9}, {"efficiency", 0.9}, {"latency_cycles", 2660}}},
              {"host", {{"sync_latency_seconds", latency}}}}},
            {"workload", {{"kind", "schedule"}, {"steps", {{{"op", "repeat"}, {"name", "loop"}, {"count", iterations}, {"body", body}}}}}},
            {"run", {{"host_calls", hostCalls}}}};
}


} // namespace

TEST_CASE("Each host exchange waits once for the host, by hand", "[sim][host]")
{
    // 10 us at 1.33 GHz is 13,300 cycles. An iteration has two exchanges: images with labels
    // (consecutive), and the output after the compute; the output and the next iteration's images
    // are two exchanges (a loop body is a sequence of its own).
    const uint64_t iteration = kMegabyte + kKilobyte + 1000 + kKilobyte;
    const json s = test::simulateDoc(loop(5, 1e-5));
    CHECK(s["total_cycles"] == 5 * (2 * 13300 + iteration));
    CHECK(s["breakdown"]["host_wait"] == 5 * 2 * 13300);
    CHECK(s["ipus"][0]["host_syncs"] == 10);
    CHECK(s["ipus"][0]["host_sync_cycles"] == 10 * 13300);
    // An ideal host (the default) costs nothing.
    CHECK(test::simulateDoc(loop(5, 0))["total_cycles"] == 5 * iteration);
    // A new host call is a new exchange, though its first transfer follows the last call's.
    CHECK(test::simulateDoc(loop(1, 1e-5, 3))["total_cycles"] == 3 * (2 * 13300 + iteration));
    // The reference engine, ticking every cycle, agrees phase by phase.
    CHECK(test::engineDisagreement(loop(5, 1e-5)) == "");
    CHECK(test::engineDisagreement(loop(1, 1e-5, 3)) == "");
}

TEST_CASE("Host exchanges in a pipeline: the last stage waits for its labels and outputs", "[sim][host]")
{
    // The tutorial's pipeline with every micro-batch's output returned: per host call of 100
    // micro-batches, IPU 0 has one exchange each (images), IPU 3 two (labels before the loss,
    // outputs after it); the middle stages none.
    const std::vector<std::string> ideal{"/run/epochs=1", "/workload/output_mode=all", "/system/host=ideal"};
    std::vector<std::string> latency = ideal;
    latency.push_back("/system/host/sync_latency_seconds=1e-5");
    const json s = test::simulateFile("configs/mnist/pipelined.json", latency);
    const uint64_t calls = 15;
    CHECK(s["ipus"][0]["host_syncs"] == calls * 100);
    CHECK(s["ipus"][1]["host_syncs"] == 0);
    CHECK(s["ipus"][2]["host_syncs"] == 0);
    CHECK(s["ipus"][3]["host_syncs"] == calls * 200);
    // More latency never makes the run faster than an ideal host.
    const uint64_t slow = s["total_cycles"];
    const uint64_t fast = test::simulateFile("configs/mnist/pipelined.json", ideal)["total_cycles"];
    CHECK(fast < slow);
    // IPU 0, the slowest stage, waits for its 100 exchanges a call in pipeline cycles whose length
    // it sets; IPU 3's waits hide partly behind IPU 0's longer compute.
    CHECK(slow - fast >= calls * 100 * 13300);
}

/** One IPU, 10 times: an input of 1,000 B prefetched into IO tiles `depth` ahead, then 100,000
 *  cycles of compute on tile 0; the host answers each exchange in `latency` seconds. */
json prefetchLoop(uint32_t depth, double latency)
{
    json in = hostStep("images", "to_ipu", 1000);
    in["prefetch"] = true;
    in["prefetch_depth"] = depth;
    const json compute = {{"op", "compute"}, {"name", "work"}, {"tiles", {{{"tiles", {0, 0}}, {"cycles", 100000}}}}};
    json doc = loop(10, latency);
    doc["workload"]["steps"] = {{{"op", "repeat"}, {"name", "loop"}, {"count", 10}, {"body", {in, compute}}}};
    return doc;
}

TEST_CASE("Deeper prefetching hides the host's answer to each fetch, by hand", "[sim][host][slow]")
{
    // The host answers in 100 us (133,000 cycles), so a fetch takes 133,000 + 4,779 = 137,779
    // cycles, more than a micro-batch's compute. Depth 1 fetches the next micro-batch as this one
    // is consumed: every iteration waits for it, 137,779 cycles each, then the last compute.
    const uint64_t one = test::simulateDoc(prefetchLoop(1, 1e-4))["total_cycles"];
    CHECK(one == 10 * 137779 + 100000);
    // Depth 3 fetches micro-batches 2-4 at once (sharing the link to the host: about 355 cycles
    // for their 3,000 B); only micro-batch 2 is waited for, then the compute sets the pace.
    const uint64_t three = test::simulateDoc(prefetchLoop(3, 1e-4))["total_cycles"];
    CHECK(three >= 137779 + 355 + 4660 + 133000 - 2 + 9 * 100000 - 355);
    CHECK(three <= 137779 + 355 + 4660 + 133000 + 2 + 9 * 100000);
    // An ideal host: a fetch takes 4,779 cycles, hidden at any depth behind the compute.
    CHECK(test::simulateDoc(prefetchLoop(1, 0))["total_cycles"] == 4779 + 10 * 100000);
    CHECK(test::simulateDoc(prefetchLoop(3, 0))["total_cycles"] == 4779 + 10 * 100000);
    CHECK(test::engineDisagreement(prefetchLoop(1, 1e-4)) == "");
    CHECK(test::engineDisagreement(prefetchLoop(3, 1e-4)) == "");
}

TEST_CASE("Prefetching stops at a host call's end, and skipped loop iterations count their fetches", "[sim][host][slow]")
{
    // 10 us answers: a fetch (18,079 cycles) is in long before a micro-batch's compute ends.
    auto calls = [](uint64_t iterations, uint64_t hostCalls) {
        json doc = prefetchLoop(3, 1e-5);
        doc["workload"]["steps"][0]["count"] = iterations;
        doc["run"]["host_calls"] = hostCalls;
        return doc;
    };
    // Nothing is fetched for a call before it starts: 3 calls take 3 times one.
    const json one = test::simulateDoc(calls(50, 1)), three = test::simulateDoc(calls(50, 3));
    CHECK(three["total_cycles"] == 3 * one["total_cycles"].get<uint64_t>());
    // Each call fetches its own 50 micro-batches, no more: 150 x 1,000 B from the host (node 2)
    // to the gateway (node 1).
    for (const auto& l : three["links"])
        if (l["from"] == 2)
            CHECK(l["bytes"] == 150000);
    // Loops skipped while fetches are ahead give what simulating every iteration gives.
    RunOptions every;
    every.everyIteration = true;
    const json all = test::simulate(config::loadConfig(calls(50, 3), kRoot + "/configs/inline.json"), every);
    CHECK(three["simulator"]["loop_iterations_skipped"].get<uint64_t>() > 0);
    CHECK(all["total_cycles"] == three["total_cycles"]);
    CHECK(all["links"] == three["links"]);
    CHECK(test::engineDisagreement(calls(6, 3)) == "");
}

TEST_CASE("Bad host sync latency is named", "[sim][host][bad-input]")
{
    CHECK(test::configErrorOf({{"base", "mnist/pipelined.json"}, {"system", {{"host", {{"sync_latency_seconds", -1}}}}}},
                              kRoot + "/configs/bad.json")
              .find("/system/host/sync_latency_seconds") != std::string::npos);
}
