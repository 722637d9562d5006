// SPDX-License-Identifier: MIT
#include "workloads/strategies/CompiledSchedule.hpp"

#include <stdexcept>

namespace ipusim {

void CompiledScheduleBuilder::add(Program program)
{
    if (!m_out.ipusNotCompiled.empty())
        throw std::logic_error("a program added after an IPU left out");
    // A broken program is the compiler's fault; accounting it could read past its tiles.
    m_checker.require(program);
    if (!m_stopped) {
        const TileMemory* before = m_out.memory.empty() ? nullptr : m_out.memory.back().get();
        m_out.memory.push_back(std::make_shared<const TileMemory>(program, m_system.ipu, before));
        m_stopped = m_stopAtFirstOver && !m_out.memory.back()->fits();
    }
    m_out.schedule.programs.push_back(std::move(program));
}

CompiledSchedule CompiledScheduleBuilder::finish()
{
    requireNoProblems(checkCopyPairs(m_out.schedule, m_out.ipusNotCompiled));
    return std::move(m_out);
}

CompiledSchedule accountSchedule(Schedule schedule, const SystemParams& system, bool stopAtFirstOver)
{
    CompiledScheduleBuilder out(system, stopAtFirstOver);
    for (Program& program : schedule.programs)
        out.add(std::move(program));
    CompiledSchedule accounted = out.finish();
    schedule.programs = std::move(accounted.schedule.programs);
    accounted.schedule = std::move(schedule);
    return accounted;
}

} // namespace ipusim
