// SPDX-License-Identifier: MIT
#pragma once
#include <stdexcept>
#include <string>

namespace ipusim::config {

/** Escapes one JSON-pointer reference token (RFC 6901: ~ as ~0, / as ~1). */
inline std::string escapePointerToken(const std::string& token)
{
    std::string out;
    for (char c : token) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

/** A user input problem: names the file, the JSON pointer and what was expected. */
class ConfigError : public std::runtime_error
{
public:
    ConfigError(std::string file, std::string pointer, const std::string& message)
        : std::runtime_error(format(file, pointer, message)),
          m_file(std::move(file)),
          m_pointer(std::move(pointer)),
          m_message(message)
    {
    }
    /** An error already formatted elsewhere (a child process's), passed on as it is. */
    static ConfigError preformatted(const std::string& what) { return ConfigError(what); }
    [[nodiscard]] const std::string& file() const { return m_file; }
    [[nodiscard]] const std::string& pointer() const { return m_pointer; }
    /** What was expected, without the file and pointer; a preformatted error's whole text. */
    [[nodiscard]] const std::string& message() const { return m_message; }

private:
    explicit ConfigError(const std::string& what) : std::runtime_error(what), m_message(what) {}
    static std::string format(const std::string& file, const std::string& pointer, const std::string& message)
    {
        std::string out = file.empty() ? std::string("<config>") : file;
        out += ": ";
        if (!pointer.empty())
            out += pointer + ": ";
        return out + message;
    }
    std::string m_file;
    std::string m_pointer;
    std::string m_message;
};

} // namespace ipusim::config
