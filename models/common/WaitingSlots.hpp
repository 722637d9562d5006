// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <vector>

namespace ipusim {

/** The participants of a rendezvous that wait now: those whose slot holds a callback (for
 *  deadlock reports). */
template <typename Callback>
std::vector<uint32_t> waitingSlots(const std::vector<Callback>& slots)
{
    std::vector<uint32_t> out;
    for (uint32_t i = 0; i < slots.size(); ++i)
        if (slots[i])
            out.push_back(i);
    return out;
}

} // namespace ipusim
