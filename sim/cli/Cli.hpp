// SPDX-License-Identifier: MIT
#pragma once

namespace ipusim::cli {

/** Exit codes: 0 success, 1 bad input (config, file), 2 usage, 3 out of memory, 4 internal error. */
enum ExitCode { kOk = 0, kBadInput = 1, kUsage = 2, kOutOfMemory = 3, kInternal = 4 };

int main(int argc, char** argv);

} // namespace ipusim::cli
