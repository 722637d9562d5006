// SPDX-License-Identifier: MIT
#pragma once
#include "sim/sweep/Sweep.hpp"

namespace ipusim::cli {

/** True when this process was started by mpirun (OpenMPI or a PMI launcher). */
bool launchedByMpi();

/** The sweep spread over MPI ranks: rank 0 hands out point indices on request (dynamic load
 *  balancing) and appends every row; the other ranks simulate each point in a child process.
 *  Returns failed points on rank 0, 0 elsewhere. */
std::size_t runSweepMpi(int argc, char** argv, const Sweep& sweep, const SweepOptions& options);

} // namespace ipusim::cli
