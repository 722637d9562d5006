// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: string options, as Poplar's OptionFlags.
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

namespace poplar {

class OptionFlags
{
public:
    using initializer_list = std::initializer_list<std::pair<const std::string, std::string>>;
    OptionFlags() = default;
    OptionFlags(initializer_list flags) : m_flags(flags) {}
    void set(const std::string& option, const std::string& value) { m_flags[option] = value; }
    void set(initializer_list flags)
    {
        for (const auto& [k, v] : flags)
            m_flags[k] = v;
    }
    [[nodiscard]] const std::string& at(const std::string& option) const { return m_flags.at(option); }
    [[nodiscard]] bool contains(const std::string& option) const { return m_flags.count(option) != 0; }
    void remove(const std::string& option) { m_flags.erase(option); }
    void clear() { m_flags.clear(); }
    [[nodiscard]] auto begin() const { return m_flags.begin(); }
    [[nodiscard]] auto end() const { return m_flags.end(); }

private:
    std::map<std::string, std::string> m_flags;
};

} // namespace poplar
