// SPDX-License-Identifier: MIT
#pragma once
#include <string_view>

namespace ipusim {

/** Writes all of `text` to the file descriptor (a pipe between a parent and its child process),
 *  writing again after a short write or a signal; false when the descriptor takes no more. */
bool writeAll(int fd, std::string_view text);

} // namespace ipusim
