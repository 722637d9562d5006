// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: the IPU's 16-bit float (IEEE 754 binary16) for codelets compiled for the
// host, as `half`. Arithmetic is done in float and rounded back to nearest-even, as the IPU's
// f16 instructions round.
#include <cstdint>
#include <cstring>

namespace poplar::detail {

inline std::uint16_t floatToHalfBits(float f)
{
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const std::uint32_t exp = (x >> 23) & 0xffu;
    std::uint32_t mant = x & 0x7fffffu;
    if (exp == 0xff) // inf, nan
        return std::uint16_t(sign | 0x7c00u | (mant ? 0x200u : 0));
    const int e = int(exp) - 127 + 15;
    if (e >= 31)
        return std::uint16_t(sign | 0x7c00u);
    if (e <= 0) { // subnormal or zero
        if (e < -10)
            return std::uint16_t(sign);
        mant |= 0x800000u;
        const unsigned shift = unsigned(14 - e);
        std::uint32_t half = mant >> shift;
        const std::uint32_t rest = mant & ((1u << shift) - 1);
        const std::uint32_t mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1u)))
            ++half;
        return std::uint16_t(sign | half);
    }
    std::uint32_t h = sign | (std::uint32_t(e) << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        ++h; // may carry into the exponent: rounds up to the next binade or to infinity, as it should
    return std::uint16_t(h);
}

inline float halfBitsToFloat(std::uint16_t h)
{
    const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1fu;
    std::uint32_t mant = h & 0x3ffu;
    std::uint32_t x;
    if (exp == 0) {
        if (mant == 0) {
            x = sign;
        } else { // subnormal: normalise
            int e = -1;
            do {
                ++e;
                mant <<= 1;
            } while (!(mant & 0x400u));
            x = sign | (std::uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
        }
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

} // namespace poplar::detail

/** The IPU's half on the host: stored as 16 bits, computed in float. */
struct half
{
    std::uint16_t bits = 0;
    half() = default;
    half(float f) : bits(poplar::detail::floatToHalfBits(f)) {}
    half(double f) : half(float(f)) {}
    half(int i) : half(float(i)) {}
    half(unsigned i) : half(float(i)) {}
    operator float() const { return poplar::detail::halfBitsToFloat(bits); }
    half& operator+=(float o) { return *this = float(*this) + o; }
    half& operator-=(float o) { return *this = float(*this) - o; }
    half& operator*=(float o) { return *this = float(*this) * o; }
    half& operator/=(float o) { return *this = float(*this) / o; }
};
