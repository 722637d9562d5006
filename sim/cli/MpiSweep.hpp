// SPDX-License-Identifier: MIT
#pragma once
#include "sim/sweep/Sweep.hpp"

#include <optional>

namespace ipusim::cli {

/** True when this process was started by mpirun (OpenMPI or a PMI launcher). */
bool launchedByMpi();

/** The sweep spread over MPI ranks: rank 0 hands out point indices on request (dynamic load
 *  balancing), appends every row and shows progress; the other ranks simulate each point in a
 *  child process. Returns the tally on rank 0 (the one that prints the summary), nothing on the
 *  other ranks. */
std::optional<SweepTally> runSweepMpi(int argc, char** argv, const Sweep& sweep, const SweepOptions& options);

} // namespace ipusim::cli
