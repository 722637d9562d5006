// SPDX-License-Identifier: MIT
#pragma once
#include <ostream>
#include <string>

namespace ipusim {

/** Runs a validation file: cases of {name, config, set, metric, expected, tolerance}, each
 *  simulated in its own process. `metric` is a JSON pointer into the summary, or
 *  "compute_set:NAME" (that compute set's cycles over the run). Prints expected vs simulated
 *  with the error; returns whether every case is within its tolerance. */
bool runValidation(const std::string& path, unsigned jobs, std::ostream& out);

} // namespace ipusim
