// SPDX-License-Identifier: MIT
#include "sim/cli/Cli.hpp"
#include "sim/run/ProcessHeap.hpp"

#include <cstdlib>
#include <systemc> // declares sc_main with the C linkage libsystemc expects

// SystemC prints its banner before sc_main; ipusim's output is the simulator's own.
int main(int argc, char* argv[])
{
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    ipusim::prepareHeapForRun();
    return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[])
{
    return ipusim::cli::main(argc, argv);
}
