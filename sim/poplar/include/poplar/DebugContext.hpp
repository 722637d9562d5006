// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: the name Poplar calls take for profiles and messages.
#include <string>

namespace poplar {

class DebugContext
{
public:
    DebugContext() = default;
    DebugContext(const char* name) : m_name(name ? name : "") {}
    DebugContext(std::string name) : m_name(std::move(name)) {}
    DebugContext(const DebugContext& parent, const std::string& name)
        : m_name(parent.m_name.empty() ? name : name.empty() ? parent.m_name : parent.m_name + "/" + name) {}
    [[nodiscard]] const std::string& getPathName() const { return m_name; }

private:
    std::string m_name;
};

using DebugNameAndId = DebugContext;

} // namespace poplar
