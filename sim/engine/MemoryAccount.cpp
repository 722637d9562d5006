// SPDX-License-Identifier: MIT
#include "sim/engine/MemoryAccount.hpp"

namespace ipusim {

MemoryAccount accountMemory(const Experiment& e)
{
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
