// SPDX-License-Identifier: MIT
// The host's limits move throughput the way the memory and performance guide says (seed 002
// §4.3-4.5): more device iterations amortise the per-call overhead, more loader workers or PopRun
// instances help only a loader-bound run, deeper prefetching only a host slow to answer, 8-bit
// inputs help only where the host link limits,
// and replicas sharing an IPU-M2000's link to the host stop scaling when it is the limit. Each
// check compares one knob's two settings on the same config, and its opposite where the guide
// says it should not matter.
#include "Simulate.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using namespace ipusim;
using json = nlohmann::json;

namespace {

double samplesPerSecond(const std::string& file, std::vector<std::string> sets)
{
    return test::simulateFile(file, sets).at("samples_per_second").get<double>();
}

/** The MLP's inference, data-parallel with `replicas` on `hardware`, `run` and `host` merged in. */
double replicatedMlp(const char* hardware, uint32_t replicas, const json& run, const json& system = json::object())
{
    json doc = {{"base", "graph/mlp.json"},
                {"system", {{"base", hardware}}},
                {"workload", {{"strategy", {{"kind", "single"}, {"replicas", replicas}}}}},
                {"run", {{"host_calls", 8}}}};
    doc["run"].update(run);
    doc["system"].update(system);
    return test::simulateDoc(doc).at("samples_per_second").get<double>();
}

/** Over an IPU-POD16, 102,400 samples a host call, 8 calls. */
double podMlp(const json& run, const json& system = json::object())
{
    return replicatedMlp("hardware/pod16.json", 16, run, system);
}

} // namespace

TEST_CASE("Guide 4.5.3: device iterations amortise the host's per-call overhead, and only that", "[sim][host][metamorphic]")
{
    auto rate = [](uint32_t iterations, const char* overhead) {
        return samplesPerSecond("configs/mnist/train.json", {"/run/gradient_accumulation=1", "/run/host_calls=3",
                                                             "/run/device_iterations=" + std::to_string(iterations),
                                                             std::string("/system/host/call_overhead_seconds=") + overhead});
    };
    CHECK(rate(10, "1e-3") > 2 * rate(1, "1e-3"));
    CHECK(rate(50, "1e-3") > rate(10, "1e-3"));
    // An ideal host: only the call's one output transfer (OutputMode Final) is amortised.
    CHECK(rate(10, "0") >= rate(1, "0"));
    CHECK(rate(10, "0") < 1.05 * rate(1, "0"));
}

TEST_CASE("Guide 4.3.2: loader workers and PopRun instances help a loader-bound run, not a device-bound one", "[sim][host][metamorphic]")
{
    // 10 us a sample on 4 cores a server: 102,400 samples a call keep one process busy for 1 s.
    auto with = [](uint32_t workers, uint32_t instances, uint32_t servers, double sampleSeconds = 1e-5) {
        return podMlp({{"instances", instances}, {"data_loader", {{"mode", "async"}, {"workers", workers}, {"sample_seconds", sampleSeconds}}}},
                      {{"host", {{"cores", 4}, {"servers", servers}}}});
    };
    const double one = with(0, 1, 1), workers = with(4, 1, 1), instances = with(4, 4, 1), servers = with(4, 4, 4);
    CHECK(workers > 3 * one);                            // 4 workers on the 4 cores
    CHECK(instances == Approx(workers).epsilon(0.01));   // 16 workers on the same 4 cores: no faster
    CHECK(servers > 3 * instances);                      // 4 servers: 4 times the cores
    // A loader that costs nothing: workers, instances and servers change nothing.
    const double free = with(0, 1, 1, 0);
    CHECK(with(4, 4, 4, 0) == Approx(free).epsilon(1e-9));
    CHECK(free > servers);
}

TEST_CASE("Guide 4.4.1: deeper prefetching hides a slow host's answers, and only those", "[sim][host][metamorphic]")
{
    auto rate = [](uint32_t depth, const char* latency) {
        return samplesPerSecond("configs/mnist/train.json", {"/workload/io_tiles=32", "/workload/prefetch_depth=" + std::to_string(depth),
                                                             std::string("/system/host/sync_latency_seconds=") + latency});
    };
    // 100 us an answer, longer than a micro-batch: depth 1 waits for every fetch, depth 2 hides it.
    CHECK(rate(2, "1e-4") > 1.5 * rate(1, "1e-4"));
    CHECK(rate(3, "1e-4") >= 0.999 * rate(2, "1e-4"));
    // An ideal host: nothing to hide.
    CHECK(rate(3, "0") == Approx(rate(1, "0")).epsilon(1e-4));
    // What it costs: the IO tiles hold depth + 1 buffers of the images, 4 against 2.
    auto ioBytes = [](uint32_t depth) {
        return test::simulateFile("configs/mnist/train.json", {"/workload/io_tiles=32", "/workload/prefetch_depth=" + std::to_string(depth)})
            .at("memory")
            .at(0)
            .at("bytes_by_kind")
            .at("io tiles")
            .get<uint64_t>();
    };
    CHECK(ioBytes(3) == 2 * ioBytes(1));
}

TEST_CASE("Guide 4.4.3: 8-bit inputs help where the link to the host limits", "[sim][host][metamorphic]")
{
    auto rate = [](const char* dtype, const char* bandwidth) {
        return samplesPerSecond("configs/mnist/train.json", {std::string("/workload/input_dtype=") + dtype,
                                                             std::string("/system/gateway_host_link/bandwidth_bytes_per_second=") + bandwidth,
                                                             std::string("/system/host_link/bandwidth_bytes_per_second=") + bandwidth});
    };
    // 100 MB/s: the images' 3,136 B (fp32) or 784 B (uint8) each dominate the step.
    CHECK(rate("uint8", "1e8") > 2 * rate("fp32", "1e8"));
    // Links that cost nothing: 8-bit inputs gain nothing (their cast on the IPU costs a little).
    CHECK(rate("uint8", "1e15") < 1.01 * rate("fp32", "1e15"));
}

TEST_CASE("Guide 4.3.2: replicas stop scaling when their IPU-M2000's link to the host is the limit", "[sim][host][metamorphic]")
{
    auto rate = [](uint32_t replicas, double bandwidth) {
        return replicatedMlp("hardware/m2000.json", replicas, json::object(),
                             {{"gateway_host_link", {{"bandwidth_bytes_per_second", bandwidth}}}});
    };
    // 4 replicas of one M2000 share its gateway: at 1 GB/s they hardly beat one replica.
    CHECK(rate(4, 1e9) < 1.5 * rate(1, 1e9));
    // When it costs nothing (each IPU's own PCIe link then sets the pace), they scale 4 times.
    CHECK(rate(4, 1e15) > 3.9 * rate(1, 1e15));
}
