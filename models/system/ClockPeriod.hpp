// SPDX-License-Identifier: MIT
#pragma once
#include <systemc>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ipusim {

/** A tile cycle as SystemC time, in whole femtoseconds (the kernel's resolution, which must be
 *  set first): 751,880 fs at 1.33 GHz. */
inline sc_core::sc_time clockPeriod(double clockHz) { return sc_core::sc_time(std::round(1e15 / clockHz), sc_core::SC_FS); }

/** The last cycle SystemC's 64-bit femtosecond clock can hold at `period`: a run past it would
 *  wrap the clock. */
inline uint64_t lastCycle(const sc_core::sc_time& period)
{
    return sc_core::sc_max_time().value() / std::max<uint64_t>(period.value(), 1);
}

/** SystemC's present time in whole cycles of `period`. */
inline uint64_t presentCycle(const sc_core::sc_time& period)
{
    return sc_core::sc_time_stamp().value() / std::max<uint64_t>(period.value(), 1);
}

} // namespace ipusim
