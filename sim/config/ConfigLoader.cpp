// SPDX-License-Identifier: MIT
#include "sim/config/ConfigLoader.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/config/HardwarePresets.hpp"
#include "sim/config/Schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
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

// Deeper than any config, graph or schedule needs (a compiled BERT schedule nests 12 levels), and
// shallow enough that the recursive passes over a document (bases, schema, defaults) stay well
// inside the stack.
constexpr int kMaxDepth = 128;

/** Throws if `value` nests objects or arrays deeper than kMaxDepth, naming the first too-deep value. */
void checkDepth(const json& value, const std::string& file, const std::string& ptr, int depth = 0)
{
    if (!value.is_structured())
        return;
    if (depth == kMaxDepth)
        throw ConfigError(file, ptr, fmt::format("nested deeper than {} levels of objects and arrays", kMaxDepth));
    if (value.is_object())
        for (const auto& [k, v] : value.items())
            checkDepth(v, file, ptr + "/" + escapePointerToken(k), depth + 1);
    else
        for (std::size_t i = 0; i < value.size(); ++i)
            checkDepth(value[i], file, ptr + "/" + std::to_string(i), depth + 1);
}

/** The message for a number nlohmann cannot hold (it names the literal, e.g. "1e400"). */
std::string numberOverflow(const json::out_of_range& e)
{
    std::string what = e.what();
    auto quote = what.find('\'');
    std::string literal = quote == std::string::npos ? what : what.substr(quote + 1, what.rfind('\'') - quote - 1);
    return fmt::format("the number {} is out of range (a double holds magnitudes up to 1.8e308)", literal);
}

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
        if (!baseDoc.is_object())
            throw ConfigError(baseFile, "", fmt::format("expected a JSON object (a base is merged into the object that names it), found {}",
                                                        baseDoc.type_name()));
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

/** The document's /workload/kind when it is a string, else nullptr. */
const json* workloadKind(const json& doc)
{
    const auto w = doc.find("workload");
    if (w == doc.end() || !w->is_object())
        return nullptr;
    const auto k = w->find("kind");
    return k != w->end() && k->is_string() ? &*k : nullptr;
}

/** Where `jp` will go in `doc`: missing objects on the way are created (the schema then checks
 *  what they hold), an array takes an existing index or its next one ("-" or its size);
 *  anything else names the step that does not fit. `walked` becomes the pointer resolved
 *  ("-" as the index it appended). */
json& slotFor(json& doc, const json::json_pointer& jp, const std::string& origin, const std::string& ptr,
              std::map<std::string, std::string>& origins, std::string& walked)
{
    std::vector<std::string> tokens;
    for (auto p = jp; !p.empty(); p.pop_back())
        tokens.insert(tokens.begin(), p.back());
    json* at = &doc;
    walked.clear();
    for (const std::string& token : tokens) {
        std::string step = token;
        if (at->is_null())
            *at = json::object();
        if (at->is_object()) {
            if (!at->contains(token)) // created here: errors about it name the --set
                origins[walked + "/" + escapePointerToken(token)] = origin;
            at = &(*at)[token];
        } else if (at->is_array()) {
            const bool append = token == "-" || token == std::to_string(at->size());
            const bool digits = !token.empty() && token.find_first_not_of("0123456789") == std::string::npos && (token == "0" || token[0] != '0');
            if (!append && !(digits && token.size() < 10 && std::stoul(token) < at->size()))
                throw ConfigError(origin, ptr, fmt::format("\"{}\" is a list of {}: expected an index below {}, or {} or \"-\" to "
                                                           "append, found \"{}\"", walked, at->size(), at->size(), at->size(), token));
            if (append) {
                step = std::to_string(at->size());
                at->push_back(json());
            }
            at = &(*at)[std::stoul(step)];
        } else {
            throw ConfigError(origin, ptr, fmt::format("\"{}\" holds {} {}, not an object or a list", walked, at->type_name(), at->dump()));
        }
        walked += "/" + escapePointerToken(step);
    }
    return *at;
}

/** One "/pointer=value" assignment; errors name `origin` (the CLI's --set, the Python API's
 *  overrides). `/system=<preset>` puts a built-in hardware preset in place of the system;
 *  `/system/host=<model>` sets a host model's values (configs/hardware/host/). */
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
    json value;
    try {
        value = json::parse(text);
    } catch (const json::parse_error&) {
        value = text;   // bare words are strings: --set /workload/mode=infer
    } catch (const json::out_of_range& e) {
        throw ConfigError(origin, ptr, numberOverflow(e));
    }
    checkDepth(value, origin, ptr);
    if (ptr == "/system" && value.is_string())
        value = hardwarePreset(value.get<std::string>(), origin, ptr);
    if (ptr == "/system/host" && value.is_string()) { // a host model's values; the host's cores and servers stay
        json host = doc.contains(jp) && doc.at(jp).is_object() ? doc.at(jp) : json::object();
        host.merge_patch(hostModel(value.get<std::string>(), origin, ptr));
        value = std::move(host);
    }
    std::string resolved; // "-" becomes the index it appended
    slotFor(doc, jp, origin, ptr, origins, resolved) = value;
    recordOrigins(value, resolved, origin, origins);
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
    for (const auto& [derived, original] : renamed)
        if (pointer == derived || pointer.rfind(derived + "/", 0) == 0) {
            const std::string user = original + pointer.substr(derived.size());
            throw ConfigError(fileOf(user), user, message);
        }
    throw ConfigError(fileOf(pointer), pointer, message);
}

std::vector<std::string> deprecationNotes(const LoadedConfig& cfg)
{
    // /system/ipu/memory/available_memory_proportion was the old place of a compiler option:
    // still read, as the default of /workload/available_memory_proportion.
    const std::string old = "/system/ipu/memory/available_memory_proportion";
    if (!cfg.origins.count(old))
        return {};
    return {fmt::format("{}: {} is deprecated: set /workload/available_memory_proportion (PopTorch's setAvailableMemoryProportion), "
                        "its one place; this value is still its default", cfg.fileOf(old), old)};
}

std::string safeName(const std::string& text)
{
    std::string out;
    for (char c : text.substr(0, 100))
        out += std::isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' ? c : '_';
    if (out.empty() || !std::isalnum((unsigned char)out.front()))
        out.insert(out.begin(), 'x');
    return out;
}

std::string resolveRelative(const std::string& fromFile, const std::string& path)
{
    return (fs::path(fromFile).parent_path() / path).lexically_normal().string();
}

json readJsonFile(const std::string& path)
{
    // A file or a pipe ends; a directory is not JSON and a device such as /dev/zero never ends.
    std::error_code ec;
    const fs::file_type type = fs::status(path, ec).type();
    if (type == fs::file_type::directory || type == fs::file_type::character || type == fs::file_type::block ||
        type == fs::file_type::socket)
        throw ConfigError(path, "", fmt::format("expected a JSON file, found a {}", type == fs::file_type::directory ? "directory"
                                                                                                                    : "device or socket"));
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ConfigError(path, "", fmt::format("cannot read file ({})", std::strerror(errno)));
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string text = buffer.str();
    try {
        json doc = json::parse(text);
        checkDepth(doc, path, "");
        return doc;
    } catch (const json::out_of_range& e) {
        throw ConfigError(path, "", numberOverflow(e));
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
    cfg.sets = sets;
    if (!raw.is_object())
        throw ConfigError(file, "", fmt::format("expected a JSON object, found {}", raw.type_name()));
    checkDepth(raw, file, "");
    std::vector<std::string> stack{fs::path(file).lexically_normal().string()};
    cfg.doc = compose(std::move(raw), file, "", cfg.origins, stack);
    const Schema& schema = Schema::instance();
    // Defaults first, so --set can reach optional objects (e.g. /run/trace/tiles), the workload
    // kind's too when the kind is known (e.g. /workload/strategy/replicas).
    // (Not when a --set changes the kind: the old kind's defaults would be unknown keys of the new.)
    schema.applyDefaults(cfg.doc, "");
    const bool kindChanges = std::any_of(sets.begin(), sets.end(), [](const std::string& s) {
        return s.rfind("/workload=", 0) == 0 || s.rfind("/workload/kind=", 0) == 0;
    });
    if (const json* kind = workloadKind(cfg.doc);
        kind && !kindChanges && schema.root().at("definitions").at("workloads").contains(kind->get<std::string>()))
        schema.applyDefaults(cfg.doc.at("workload"), "/definitions/workloads/" + kind->get<std::string>());
    for (const auto& s : sets)
        applySet(cfg.doc, s, setsOrigin, cfg.origins);

    auto fileOf = [&](const std::string& p) { return cfg.fileOf(p); };
    schema.validate(cfg.doc, "", "", fileOf);
    std::string kind = cfg.doc.at("workload").at("kind").get<std::string>();
    schema.validate(cfg.doc.at("workload"), "/definitions/workloads/" + kind, "/workload", fileOf);
    schema.applyDefaults(cfg.doc, "");
    schema.applyDefaults(cfg.doc.at("workload"), "/definitions/workloads/" + kind);
    cfg.name = cfg.doc.value("name", safeName(fs::path(file).stem().string()));
    return cfg;
}

} // namespace ipusim::config
