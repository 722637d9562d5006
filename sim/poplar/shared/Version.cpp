// SPDX-License-Identifier: MIT
// The shared library's own translation unit: what Poplar reports as its version.
#include <poplar/Graph.hpp>

namespace poplar {

std::string versionString() { return "ipusim " IPUSIM_VERSION " (Poplar API, simulated Mk2)"; }
std::string packageHash() { return "ipusim-" IPUSIM_VERSION; }

} // namespace poplar

#include <cstdlib>
#include <systemc> // declares sc_main with the C linkage libsystemc expects

/** libsystemc's entry point, which a Poplar host program never enters: the program has its own
 *  main(), and each Engine::run elaborates a kernel of its own. */
int sc_main(int, char*[])
{
    return 1;
}

namespace {
/** SystemC prints a banner as its first kernel starts; a Poplar program's output is its own. */
const bool g_quietSystemC = [] { return setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0) == 0; }();
} // namespace
