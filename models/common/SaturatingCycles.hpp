// SPDX-License-Identifier: MIT
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ipusim {

/** Durations saturate at 2^62 cycles instead of wrapping. No run gets near it (SystemC's
 *  64-bit femtosecond clock ends at about 2.5e13 cycles at 1.33 GHz), so a saturated duration
 *  only ever meets the engines' time-limit check, which reports it as an error; and a sum of
 *  two saturated durations still fits 64 bits. */
constexpr uint64_t kCycleCeiling = uint64_t(1) << 62;

/** A duration computed in floating point (link and sync timing), rounded down, saturated. */
inline uint64_t saturatedCycles(long double cycles)
{
    if (!(cycles < (long double)kCycleCeiling)) // NaN and infinity saturate too
        return kCycleCeiling;
    return cycles <= 0 ? 0 : uint64_t(cycles);
}

/** A duration given in seconds (a host's time) at `clockHz`, rounded up to whole cycles,
 *  saturated. It forgives the rounding of its inputs (a few parts in 10^16: 5e-6 s is not exact
 *  in binary) but no real fraction of a cycle. */
inline uint64_t secondsToCycles(long double seconds, double clockHz)
{
    const long double cycles = seconds * clockHz;
    return saturatedCycles(std::ceil(cycles - std::max(1e-9L, 1e-15L * cycles)));
}

inline uint64_t saturatingAdd(uint64_t a, uint64_t b) { return std::min(kCycleCeiling, std::min(a, kCycleCeiling) + std::min(b, kCycleCeiling)); }

inline uint64_t saturatingMul(uint64_t a, uint64_t b)
{
    uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? kCycleCeiling : std::min(product, kCycleCeiling);
}

} // namespace ipusim
