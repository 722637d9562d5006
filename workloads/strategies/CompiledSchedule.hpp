// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/memory/TileMemory.hpp"
#include "models/program/Schedule.hpp"
#include "models/program/ScheduleCheck.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace ipusim {

/** What compiling gives: the Schedule, checked against the invariants the engines rely on, and
 *  each program's tile memory, accounted as soon as the program was finished. The first
 *  program that does not fit normally ends the accounting, as Poplar's graph compile fails
 *  there: `memory` then ends with it, and a pipeline compiles no IPU after it
 *  (`ipusNotCompiled`). */
struct CompiledSchedule
{
    Schedule schedule;
    std::vector<std::shared_ptr<const TileMemory>> memory; // by program, from the first
    std::vector<uint32_t> ipusNotCompiled;
};

/** Collects a strategy's programs as it finishes them, IPU by IPU: checks each and accounts its
 *  memory there and then, so that the strategy need compile no further than the first IPU that
 *  does not fit. */
class CompiledScheduleBuilder
{
public:
    /** `stopAtFirstOver` false: every program is accounted, whether or not those before fit. */
    CompiledScheduleBuilder(const SystemParams& system, bool stopAtFirstOver)
        : m_system(system), m_stopAtFirstOver(stopAtFirstOver), m_checker(system)
    {
    }

    /** A program did not fit and accounting stopped there: compile no more IPUs. */
    [[nodiscard]] bool stopped() const { return m_stopped; }
    /** Adds `program`, checked, with its memory accounted unless accounting stopped. An IPU
     *  whose program replays the one before it (a middle pipeline stage) takes its figures. */
    void add(Program program);
    /** Names an IPU left out because accounting stopped before it. */
    void notCompiled(uint32_t ipu) { m_out.ipusNotCompiled.push_back(ipu); }
    /** The schedule, its copies checked to pair up (a send on one IPU, a receive on the other)
     *  but for those to IPUs left out. */
    CompiledSchedule finish();

private:
    const SystemParams& m_system;
    const bool m_stopAtFirstOver;
    bool m_stopped = false;
    ProgramChecker m_checker;
    CompiledSchedule m_out;
};

/** A finished Schedule (every program compiled, or read from a document) checked and accounted
 *  program by program. */
CompiledSchedule accountSchedule(Schedule schedule, const SystemParams& system, bool stopAtFirstOver = true);

} // namespace ipusim
