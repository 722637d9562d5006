// SPDX-License-Identifier: MIT
#pragma once
#include <systemc>

namespace ipusim {

/** SystemC elaborates once per kernel context: a simulation after another one in the same
 *  process (tests, or the reference engine before the fast one) gets a fresh context. */
inline void freshKernelIfUsed()
{
    static bool used = false;
    if (used) {
        sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
        sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
    }
    used = true;
}

} // namespace ipusim
