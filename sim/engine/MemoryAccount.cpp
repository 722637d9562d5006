// SPDX-License-Identifier: MIT
#include "sim/engine/MemoryAccount.hpp"

#include <stdexcept>

namespace ipusim {

MemoryAccount accountMemory(const Experiment& e)
{
    if (e.memory.size() > e.schedule.programs.size())
        throw std::logic_error("memory accounted for programs the schedule does not hold: after replacing its programs, call "
                               "Experiment::programsReplaced()");
    MemoryAccount a;
    a.memory = e.memory;
    for (std::size_t i = 0; i < e.schedule.programs.size(); ++i) {
        if (i == a.memory.size())
            // An IPU replaying the one before it (a middle pipeline stage) takes its figures.
            a.memory.push_back(std::make_shared<const TileMemory>(e.schedule.programs[i], e.system.ipu,
                                                                  i ? a.memory[i - 1].get() : nullptr));
        if (!a.memory[i]->fits()) {
            a.firstOver = i;
            break;
        }
    }
    return a;
}

} // namespace ipusim
