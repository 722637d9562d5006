// SPDX-License-Identifier: MIT
// The only translation unit that instantiates Catch; libsystemc's sc_elab_and_sim calls sc_main.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <systemc>

#include <cstdlib>

// SystemC prints its banner before sc_main, also when ctest lists the cases as the build
// discovers them: a test's output is its own.
int main(int argc, char* argv[])
{
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
    return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[])
{
    return Catch::Session().run(argc, argv);
}
