// SPDX-License-Identifier: MIT
#pragma once

namespace ipusim::cli {

/** Exit codes: 0 success, 1 bad input (config, file), 2 usage, 3 out of memory, 4 internal
 *  error, 5 a sweep finished with failed points, 6 validation outside tolerance, 130 interrupted. */
enum ExitCode { kOk = 0, kBadInput = 1, kUsage = 2, kOutOfMemory = 3, kInternal = 4, kSweepFailures = 5, kValidationFailed = 6 };

int main(int argc, char** argv);

} // namespace ipusim::cli
