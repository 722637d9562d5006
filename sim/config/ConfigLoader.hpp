// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"

#include <nlohmann/json.hpp>
#include <map>
#include <string>
#include <vector>

namespace ipusim::config {

/** A composed, overridden, defaulted and validated experiment document. */
struct LoadedConfig : Diagnostics
{
    nlohmann::json doc;
    std::string file;                            // the top-level file
    std::string name;                            // "name" or the file's stem
    std::vector<std::string> sets;               // the overrides applied, in order
    std::map<std::string, std::string> origins; // JSON pointer -> file that set it
    /** A derived config's values that came from elsewhere in the user's document (the
     *  inference phase's /run/dataset_samples is the user's /inference/dataset_samples):
     *  errors name the user's pointer. */
    std::map<std::string, std::string> renamed;

    /** The file a value at `pointer` came from (the longest recorded prefix). */
    [[nodiscard]] std::string fileOf(const std::string& pointer) const;

protected:
    /** fail(): throws ConfigError for `pointer`, naming the file the value came from. */
    void raise(const std::string& pointer, const std::string& message) const override;
};

/** Notes on keys the user set in their old places (each "file: pointer is deprecated: ..."),
 *  for the command line and the Python API to print once per config they load. */
std::vector<std::string> deprecationNotes(const LoadedConfig& cfg);

/** `text` as a name safe for a folder inside out/: letters, digits, '.', '_' and '-' (others
 *  become '_'), starting with a letter or digit, at most 101 characters. */
std::string safeName(const std::string& text);

/** `path` as named in `fromFile`: relative to that file's folder unless absolute. */
std::string resolveRelative(const std::string& fromFile, const std::string& path);

/** Reads one JSON file; errors name the file and the line and column of a syntax error. */
nlohmann::json readJsonFile(const std::string& path);

/** Loads `path`, resolves "base" (relative to the file that names it) at any object level,
 *  applies `sets` ("/json/pointer=value"; errors and values they set are reported as from
 *  `setsOrigin`), fills defaults and validates against the schema. */
LoadedConfig loadConfig(const std::string& path, const std::vector<std::string>& sets = {}, const std::string& setsOrigin = "--set");

/** Same, from an in-memory document; `file` is used in messages and for bases. */
LoadedConfig loadConfig(nlohmann::json doc, const std::string& file, const std::vector<std::string>& sets = {},
                        const std::string& setsOrigin = "--set");

} // namespace ipusim::config
