// SPDX-License-Identifier: MIT
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <functional>
#include <string>

namespace ipusim::config {

const char* embeddedSchemaText();

/** The experiment JSON Schema: validation, defaults and the parameter table. */
class Schema
{
public:
    static const Schema& instance();
    /** The bound of an integer whose schema names none: the simulator's 32-bit fields. */
    static constexpr uint64_t kIntegerMaximum = 4294967295u;

    /** Validates `doc` against the schema node at `schemaPointer`; throws ConfigError naming
     *  `basePointer` + the failing path. `fileOf` maps a document pointer to the file it came from. */
    void validate(const nlohmann::json& doc,
                  const std::string& schemaPointer,
                  const std::string& basePointer,
                  const std::function<std::string(const std::string&)>& fileOf) const;

    /** Inserts schema defaults for absent keys below the node at `schemaPointer`. */
    void applyDefaults(nlohmann::json& doc, const std::string& schemaPointer) const;

    [[nodiscard]] const nlohmann::json& root() const { return m_root; }

    struct Param
    {
        std::string pointer, type, unit, defaultValue, source, description;
        std::string range; // "integer, >= 1, <= 1048576"
    };
    /** Every key the schema accepts (list elements as "*", a map's entries as "<name>", the
     *  workload's per kind as "/workload(kind)/..."), with its default ("-": none), unit,
     *  range, source and description. */
    [[nodiscard]] std::vector<Param> params() const;

private:
    Schema();
    nlohmann::json m_root;
};

} // namespace ipusim::config
