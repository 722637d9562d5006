// SPDX-License-Identifier: MIT
#include "sim/config/ConfigLoader.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/config/Schema.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace ipusim::config {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

void recordOrigins(const json& value, const std::string& ptr, const std::string& file,
                   std::map<std::string, std::string>& origins)
{
    // Drop what an earlier layer recorded below this pointer, then record this layer.
    for (auto it = origins.lower_bound(ptr); it != origins.end() && it->first.rfind(ptr, 0) == 0;)
        it = origins.erase(it);
    origins[ptr] = file;
    if (value.is_object())
        for (const auto& [k, v] : value.items())
            recordOrigins(v, ptr + "/" + escapePointerToken(k), file, origins);
}

void mergeInto(json& target, json&& source)
{
    for (auto& [key, value] : source.items()) {
        if (target.contains(key) && target[key].is_object() && value.is_object())
            mergeInto(target[key], std::move(value));
        else
            target[key] = std::move(value);
    }
}

// Resolves every "base" in `value` (read from `file`) depth first; a base is laid down first
// and the keys beside it override it. Each value records the file that set it last. Values are
// moved, not copied: a compiled schedule is a document of a hundred megabytes.
json compose(json value, const std::string& file, const std::string& ptr,
             std::map<std::string, std::string>& origins, std::vector<std::string>& stack)
{
    origins[ptr] = file;
    if (!value.is_object())
        return value;
    json out = json::object();
    if (value.contains("base")) {
        const json& base = value.at("base");
        if (!base.is_string())
            throw ConfigError(file, ptr + "/base", fmt::format("expected a file name (string), found {}", base.dump()));
        std::string baseFile = resolveRelative(file, base.get<std::string>());
        for (const auto& s : stack)
            if (s == baseFile)
                throw ConfigError(file, ptr + "/base", "\"" + baseFile + "\" includes itself through its bases");
        json baseDoc;
        try {
            baseDoc = readJsonFile(baseFile);
        } catch (const ConfigError& e) {
            throw ConfigError(file, ptr + "/base", e.what());
        }
        stack.push_back(baseFile);
        out = compose(std::move(baseDoc), baseFile, ptr, origins, stack);
        stack.pop_back();
        origins[ptr] = file;
    }
    for (auto& [key, sub] : value.items()) {
        if (key == "base")
            continue;
        json composed = compose(std::move(sub), file, ptr + "/" + escapePointerToken(key), origins, stack);
        if (out.contains(key) && out[key].is_object() && composed.is_object())
            mergeInto(out[key], std::move(composed));
        else
            out[key] = std::move(composed);
    }
    return out;
}

/** One "/pointer=value" assignment; errors name `origin` (the CLI's --set, the Python API's overrides). */
void applySet(json& doc, const std::string& assignment, const std::string& origin, std::map<std::string, std::string>& origins)
{
    auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
        throw ConfigError(origin, assignment, "expected /json/pointer=value");
    std::string ptr = assignment.substr(0, eq);
    std::string text = assignment.substr(eq + 1);
    json::json_pointer jp;
    try {
        jp = json::json_pointer(ptr);
    } catch (const json::exception&) {
        throw ConfigError(origin, ptr, "not a JSON pointer (it must start with '/', e.g. /system/ipu/tiles)");
    }
    if (jp.empty())
        throw ConfigError(origin, ptr, "cannot replace the whole document");
    if (!doc.contains(jp.parent_pointer()) || !doc.at(jp.parent_pointer()).is_object())
        throw ConfigError(origin, ptr, fmt::format("\"{}\" does not name an object in the config", jp.parent_pointer().to_string()));
    json value;
    try {
        value = json::parse(text);
    } catch (const json::parse_error&) {
        value = text;   // bare words are strings: --set /workload/mode=infer
    }
    doc[jp] = value;
    recordOrigins(value, ptr, origin, origins);
}

} // namespace

std::string LoadedConfig::fileOf(const std::string& pointer) const
{
    std::string p = pointer;
    while (true) {
        auto it = origins.find(p);
        if (it != origins.end())
            return it->second;
        auto slash = p.rfind('/');
        if (slash == std::string::npos || p.empty())
            return file;
        p = p.substr(0, slash);
    }
}

void LoadedConfig::raise(const std::string& pointer, const std::string& message) const
{
    throw ConfigError(fileOf(pointer), pointer, message);
}

std::string resolveRelative(const std::string& fromFile, const std::string& path)
{
    return (fs::path(fromFile).parent_path() / path).lexically_normal().string();
}

json readJsonFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ConfigError(path, "", fmt::format("cannot read file ({})", std::strerror(errno)));
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string text = buffer.str();
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        std::size_t line = 1, col = 1;
        for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i, ++col)
            if (text[i] == '\n') {
                ++line;
                col = 0;
            }
        std::string what = e.what();
        auto colon = what.find("syntax error");
        throw ConfigError(path, "", fmt::format("invalid JSON at line {}, column {}: {}", line, col,
                                                colon == std::string::npos ? what : what.substr(colon)));
    }
}

LoadedConfig loadConfig(const std::string& path, const std::vector<std::string>& sets, const std::string& setsOrigin)
{
    return loadConfig(readJsonFile(path), path, sets, setsOrigin);
}

LoadedConfig loadConfig(json raw, const std::string& file, const std::vector<std::string>& sets, const std::string& setsOrigin)
{
    LoadedConfig cfg;
    cfg.file = file;
    if (!raw.is_object())
        throw ConfigError(file, "", fmt::format("expected a JSON object, found {}", raw.type_name()));
    std::vector<std::string> stack{fs::path(file).lexically_normal().string()};
    cfg.doc = compose(std::move(raw), file, "", cfg.origins, stack);
    const Schema& schema = Schema::instance();
    // Defaults first, so --set can reach optional objects (e.g. /run/trace/tiles).
    schema.applyDefaults(cfg.doc, "");
    for (const auto& s : sets)
        applySet(cfg.doc, s, setsOrigin, cfg.origins);

    auto fileOf = [&](const std::string& p) { return cfg.fileOf(p); };
    schema.validate(cfg.doc, "", "", fileOf);
    std::string kind = cfg.doc.at("workload").at("kind").get<std::string>();
    schema.validate(cfg.doc.at("workload"), "/definitions/workloads/" + kind, "/workload", fileOf);
    schema.applyDefaults(cfg.doc, "");
    schema.applyDefaults(cfg.doc.at("workload"), "/definitions/workloads/" + kind);
    cfg.name = cfg.doc.value("name", fs::path(file).stem().string());
    return cfg;
}

} // namespace ipusim::config
