// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>

namespace ipusim {

/** a / b rounded up: the tiles, vectors or chunks it takes to hold `a` in pieces of `b`. */
constexpr uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

} // namespace ipusim
