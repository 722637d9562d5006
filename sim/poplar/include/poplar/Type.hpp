// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API (written from Graphcore's public API reference): element types.
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>

namespace poplar {

/** An element type of tensors and vertex fields: a name and a size in bytes on the IPU. */
class Type
{
public:
    constexpr Type() = default;
    constexpr Type(const char* name, unsigned size, bool floating, bool isSigned) : m_name(name), m_size(size), m_float(floating), m_signed(isSigned) {}
    [[nodiscard]] std::string toString() const { return m_name; }
    [[nodiscard]] constexpr unsigned size() const { return m_size; }
    [[nodiscard]] constexpr bool isFloatingPoint() const { return m_float; }
    [[nodiscard]] constexpr bool isSigned() const { return m_signed; }
    friend bool operator==(const Type& a, const Type& b) { return std::string(a.m_name) == b.m_name; }
    friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }
    friend bool operator<(const Type& a, const Type& b) { return std::string(a.m_name) < b.m_name; }
    friend std::ostream& operator<<(std::ostream& os, const Type& t) { return os << t.m_name; }

private:
    const char* m_name = "";
    unsigned m_size = 0;
    bool m_float = false;
    bool m_signed = false;
};

inline constexpr Type BOOL{"bool", 1, false, false};
inline constexpr Type CHAR{"char", 1, false, true};
inline constexpr Type UNSIGNED_CHAR{"unsigned char", 1, false, false};
inline constexpr Type SIGNED_CHAR{"signed char", 1, false, true};
inline constexpr Type SHORT{"short", 2, false, true};
inline constexpr Type UNSIGNED_SHORT{"unsigned short", 2, false, false};
inline constexpr Type INT{"int", 4, false, true};
inline constexpr Type UNSIGNED_INT{"unsigned int", 4, false, false};
inline constexpr Type LONGLONG{"long long", 8, false, true};
inline constexpr Type UNSIGNED_LONGLONG{"unsigned long long", 8, false, false};
inline constexpr Type HALF{"half", 2, true, true};
inline constexpr Type FLOAT{"float", 4, true, true};

/** The IPU type of a host type (the element type readTensor and writeTensor expect). */
template <class T> struct equivalent_device_type;
template <> struct equivalent_device_type<bool> { static constexpr Type value = BOOL; };
template <> struct equivalent_device_type<char> { static constexpr Type value = CHAR; };
template <> struct equivalent_device_type<unsigned char> { static constexpr Type value = UNSIGNED_CHAR; };
template <> struct equivalent_device_type<signed char> { static constexpr Type value = SIGNED_CHAR; };
template <> struct equivalent_device_type<short> { static constexpr Type value = SHORT; };
template <> struct equivalent_device_type<unsigned short> { static constexpr Type value = UNSIGNED_SHORT; };
template <> struct equivalent_device_type<int> { static constexpr Type value = INT; };
template <> struct equivalent_device_type<unsigned> { static constexpr Type value = UNSIGNED_INT; };
template <> struct equivalent_device_type<long long> { static constexpr Type value = LONGLONG; };
template <> struct equivalent_device_type<unsigned long long> { static constexpr Type value = UNSIGNED_LONGLONG; };
template <> struct equivalent_device_type<float> { static constexpr Type value = FLOAT; };

} // namespace poplar
