// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: Poplar takes names as StringRef; a std::string serves (it converts from
// string literals and std::string alike).
#include <string>

namespace poplar {
using StringRef = std::string;
} // namespace poplar
