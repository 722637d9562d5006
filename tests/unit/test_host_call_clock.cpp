// SPDX-License-Identifier: MIT
// When the host starts each host call: its data loader and dispatch (HostCallClock), by hand.
// A clock of 1 MHz makes a microsecond one cycle.
#include "models/timing/HostCallClock.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;

namespace {

HostParams hostOf(uint32_t cores, double overheadSeconds = 0)
{
    HostParams h;
    h.cores = cores;
    h.callOverheadSeconds = overheadSeconds;
    return h;
}

} // namespace

TEST_CASE("Host call clock: a free loader and an ideal host start each call as the IPUs are back", "[host]")
{
    HostCallClock clock(hostOf(64), DataLoaderParams{}, 4000, 1e6);
    CHECK(clock.batchCycles() == 0);
    for (uint64_t back : {0, 7, 7, 1000}) {
        const auto call = clock.next(back);
        CHECK(call.start == back);
        CHECK(call.loaderWait == 0);
        CHECK(call.dispatch == 0);
    }
}

TEST_CASE("Host call clock: sync without workers builds each batch after the last call returns", "[host]")
{
    // 100 samples at 1 ms each: 100,000 cycles a batch, then 2,000 cycles of dispatch.
    DataLoaderParams loader;
    loader.sampleSeconds = 1e-3;
    HostCallClock clock(hostOf(64, 2e-3), loader, 100, 1e6);
    CHECK(clock.batchCycles() == 100000);
    CHECK(clock.builders() == 1);
    auto call = clock.next(0);
    CHECK(call.loaderWait == 100000);
    CHECK(call.start == 102000);
    call = clock.next(150000); // the IPUs ran 48,000 cycles
    CHECK(call.loaderWait == 100000);
    CHECK(call.start == 252000);
}

TEST_CASE("Host call clock: workers build batches in turn while the IPUs run, time-sharing cores", "[host]")
{
    // Two workers on one core: each takes 2 x 100 x 1 ms = 200,000 cycles a batch.
    DataLoaderParams loader;
    loader.workers = 2;
    loader.async = true;
    loader.sampleSeconds = 1e-3;
    HostCallClock clock(hostOf(1), loader, 100, 1e6);
    CHECK(clock.batchCycles() == 200000);
    CHECK(clock.builders() == 2);
    // Batches 0 and 1 are built at 200,000, batches 2 and 3 at 400,000.
    CHECK(clock.next(0).start == 200000);
    auto call = clock.next(210000); // batch 1 has waited since 200,000
    CHECK(call.start == 210000);
    CHECK(call.loaderWait == 0);
    call = clock.next(220000);
    CHECK(call.start == 400000);
    CHECK(call.loaderWait == 180000);
    CHECK(clock.next(410000).start == 410000);
    // With a core each, the same workers take half as long.
    HostCallClock wide(hostOf(2), loader, 100, 1e6);
    CHECK(wide.batchCycles() == 100000);
    // Rounded up to whole cycles, exactly at any size: 5e-6 s is not exact in binary, yet
    // 4,000 samples of it at 1.33 GHz are 26,600,000 cycles; 10 s each, 53,200,000,000,000.
    loader.workers = 0;
    loader.sampleSeconds = 5e-6;
    CHECK(HostCallClock(hostOf(64), loader, 4000, 1.33e9).batchCycles() == 26600000);
    loader.sampleSeconds = 10;
    CHECK(HostCallClock(hostOf(64), loader, 4000, 1.33e9).batchCycles() == 53200000000000ull);
    loader.sampleSeconds = 1.5e-9; // 1.995 cycles
    CHECK(HostCallClock(hostOf(64), loader, 1, 1.33e9).batchCycles() == 2);
}

TEST_CASE("Host call clock: the loader builds no more than its prefetch ahead of the host", "[host]")
{
    // One sync worker: torch's prefetch factor 2 lets it build batch k once batch k - 2 is
    // taken. Batches of 100 cycles; the IPUs are back at 0, then every call at 1,000.
    DataLoaderParams loader;
    loader.workers = 1;
    loader.sampleSeconds = 1e-6;
    HostCallClock clock(hostOf(64), loader, 100, 1e6);
    CHECK(clock.next(0).start == 100);     // batch 0: built 0..100
    CHECK(clock.next(1000).start == 1000); // batch 1: 100..200
    CHECK(clock.next(1000).start == 1000); // batch 2: 200..300, batch 0 being taken at 100
    const auto call = clock.next(1000);    // batch 3: waits for batch 1 to be taken, at 1,000
    CHECK(call.start == 1100);
    CHECK(call.loaderWait == 100);
    // Async adds the accessor's ring buffer (3): batch 3 is built 300..400, long before.
    loader.async = true;
    HostCallClock buffered(hostOf(64), loader, 100, 1e6);
    for (uint64_t back : {0, 1000, 1000})
        buffered.next(back);
    CHECK(buffered.next(1000).start == 1000);
}

TEST_CASE("Host call clock: async without workers builds in one accessor process, ahead of the host", "[host]")
{
    DataLoaderParams loader;
    loader.async = true;
    loader.sampleSeconds = 1e-6;
    HostCallClock clock(hostOf(64), loader, 300, 1e6); // 300 cycles a batch
    CHECK(clock.builders() == 1);
    CHECK(clock.next(0).start == 300);
    CHECK(clock.next(1000).start == 1000); // built 300..600 while the IPUs ran
    CHECK(clock.next(1100).start == 1100); // built 600..900
    CHECK(clock.next(1200).start == 1200); // built 900..1200
    CHECK(clock.next(1250).start == 1500); // built 1200..1500
}

TEST_CASE("Host call clock: PopRun instances split the samples and their servers' cores", "[host]")
{
    // 1,600 samples a call at 100 us each, 14 workers per instance, 64 cores a server.
    DataLoaderParams loader;
    loader.workers = 14;
    loader.async = true;
    loader.sampleSeconds = 1e-4;
    // One instance: 1,600 x 100 us = 160 ms a batch, its 14 workers on 14 of the 64 cores.
    CHECK(HostCallClock(hostOf(64), loader, 1600, 1e6).batchCycles() == 160000);
    // 8 instances on one server: 200 samples each, 8 cores each for 14 workers: 20 ms x 14 / 8.
    loader.instances = 8;
    CHECK(HostCallClock(hostOf(64), loader, 1600, 1e6).batchCycles() == 35000);
    // On 2 servers, 4 instances each: 16 cores each, enough for the 14 workers.
    HostParams two = hostOf(64);
    two.servers = 2;
    CHECK(HostCallClock(two, loader, 1600, 1e6).batchCycles() == 20000);
    // The main process alone (no workers) of each of 128 instances on one server: half a core.
    loader.workers = 0;
    loader.instances = 128;
    CHECK(HostCallClock(hostOf(64), loader, 1280, 1e6).batchCycles() == 2000);
}
