// SPDX-License-Identifier: MIT
// Compiling checks each program and accounts its memory as it is finished, so that a model that
// does not fit stops at the first IPU over.
#include "workloads/strategies/CompiledSchedule.hpp"

#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

using namespace ipusim;

namespace {

/** A program holding one always-live tensor of `bytes` on tile 0, and a copy to `peer` when
 *  given one (its program must list the receive). */
Program programOf(uint32_t ipu, uint64_t bytes, std::optional<uint32_t> peer = std::nullopt)
{
    Program p;
    p.ipu = ipu;
    TensorAlloc t;
    t.name = "weights";
    t.kind = "weight";
    t.bytes.add(0, 1, bytes);
    t.alwaysLive = true;
    p.tensors.push_back(t);
    if (peer) {
        IpuCopyStep copy;
        copy.name = "copy";
        copy.send.push_back({*peer, 64});
        p.steps.push_back({copy});
        p.numPoints = 1;
    }
    return p;
}

SystemParams threeIpus()
{
    SystemParams system;
    system.numIpus = 3;
    return system;
}

} // namespace

TEST_CASE("Compiled schedule: accounting stops at the first program that does not fit", "[memory][compile]")
{
    const SystemParams system = threeIpus();
    const uint64_t tile = system.ipu.tileMemoryBytes;
    Schedule s;
    s.name = "kept";
    s.programs = {programOf(0, tile / 2), programOf(1, tile + 1), programOf(2, tile / 2)};

    const CompiledSchedule stopped = accountSchedule(s, system);
    REQUIRE(stopped.memory.size() == 2); // IPU 2 comes after the first over: not accounted
    CHECK(stopped.memory[0]->fits());
    CHECK_FALSE(stopped.memory[1]->fits());
    CHECK(stopped.memory[1]->tiles()[0].peak() == tile + 1);
    CHECK(stopped.schedule.programs.size() == 3); // a finished schedule keeps every program
    CHECK(stopped.schedule.name == "kept");
    CHECK(stopped.ipusNotCompiled.empty());

    const CompiledSchedule every = accountSchedule(s, system, false);
    REQUIRE(every.memory.size() == 3);
    CHECK(every.memory[2]->fits());
    CHECK(every.memory[1]->tiles()[0].peak() == stopped.memory[1]->tiles()[0].peak());
}

TEST_CASE("Compiled schedule: a strategy compiling IPU by IPU stops at the first over", "[memory][compile]")
{
    const SystemParams system = threeIpus();
    const uint64_t tile = system.ipu.tileMemoryBytes;
    CompiledScheduleBuilder out(system, true);
    out.add(programOf(0, tile, 2)); // exactly full fits; its copy's receiver is never compiled
    CHECK_FALSE(out.stopped());
    out.add(programOf(1, tile + 1));
    REQUIRE(out.stopped());
    out.notCompiled(2);
    CHECK_THROWS_AS(out.add(programOf(2, 0)), std::logic_error);
    // The copy to IPU 2 pairs with nothing: not a broken schedule when IPU 2 was left out.
    const CompiledSchedule c = out.finish();
    CHECK(c.schedule.programs.size() == 2);
    CHECK(c.memory.size() == 2);
    CHECK(c.ipusNotCompiled == std::vector<uint32_t>{2});
    // A copy between two IPUs that were both compiled is still checked.
    CompiledScheduleBuilder unpaired(system, true);
    unpaired.add(programOf(0, tile, 1)); // IPU 1's program lists no receive
    unpaired.add(programOf(1, tile + 1));
    unpaired.notCompiled(2);
    CHECK_THROWS_WITH(unpaired.finish(),
                      Catch::Contains("IPU 0: IPU copy \"copy\" sends to IPU 1, whose program receives nothing from IPU 0"));

    // Compiled whole, the same copy is a broken schedule: the compiler's fault.
    CompiledScheduleBuilder whole(system, false);
    whole.add(programOf(0, tile, 2));
    whole.add(programOf(1, tile + 1));
    CHECK_FALSE(whole.stopped());
    whole.add(programOf(2, 0));
    try {
        whole.finish();
        FAIL("an unpaired copy passed");
    } catch (const std::logic_error& e) {
        CHECK(std::string(e.what()).find("IPU 0: IPU copy \"copy\" sends to IPU 2, whose program receives nothing from IPU 0") !=
              std::string::npos);
    }
}

TEST_CASE("Compiled schedule: a broken program is refused before its memory is accounted", "[memory][compile]")
{
    const SystemParams system = threeIpus();
    CompiledScheduleBuilder out(system, true);
    Program p = programOf(0, 8);
    p.tensors[0].bytes.add(system.ipu.tiles, 1, 8); // a tile past the IPU's last
    try {
        out.add(p);
        FAIL("a program with a tensor past the last tile passed");
    } catch (const std::logic_error& e) {
        CHECK(std::string(e.what()).find("IPU 0: tensor \"weights\": tiles up to 1473, the IPU has 1472") != std::string::npos);
    }
    // One program per IPU holds across the programs added.
    CompiledScheduleBuilder twice(system, true);
    twice.add(programOf(1, 8));
    CHECK_THROWS_WITH(twice.add(programOf(1, 8)), Catch::Contains("IPU 1: has more than one program"));
}
