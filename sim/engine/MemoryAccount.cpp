// SPDX-License-Identifier: MIT
#include "sim/engine/MemoryAccount.hpp"

namespace ipusim {

MemoryAccount accountMemory(const Experiment& e)
{
    MemoryAccount a;
    for (std::size_t i = 0; i < e.schedule.programs.size(); ++i) {
        a.memory.push_back(e.memory.empty() ? std::make_shared<const TileMemory>(e.schedule.programs[i], e.system.ipu)
                                            : e.memory.at(i));
        if (!a.memory.back()->fits()) {
            a.firstOver = i;
            break;
        }
    }
    return a;
}

} // namespace ipusim
