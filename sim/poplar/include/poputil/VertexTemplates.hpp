// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: names of template vertex instantiations, "Name<float,2>".
#include <poplar/Type.hpp>

#include <string>
#include <type_traits>

namespace poputil {

inline std::string templateArg(const poplar::Type& t) { return t.toString(); }
inline std::string templateArg(bool b) { return b ? "true" : "false"; }
template <class T, typename = std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>>>
std::string templateArg(T v) { return std::to_string(v); }
inline std::string templateArg(const std::string& s) { return s; }
inline std::string templateArg(const char* s) { return s; }

template <class... Args>
std::string templateVertex(const std::string& name, Args&&... args)
{
    std::string out = name + "<";
    bool first = true;
    ((out += (first ? "" : ","), out += templateArg(args), first = false), ...);
    return out + ">";
}

} // namespace poputil
