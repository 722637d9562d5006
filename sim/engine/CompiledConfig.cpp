// SPDX-License-Identifier: MIT
#include "sim/engine/CompiledConfig.hpp"

#include "models/json/ScheduleJson.hpp"

#include <fmt/format.h>

#include <set>
#include <string_view>

namespace ipusim {

nlohmann::json compiledConfig(const Experiment& e)
{
    const nlohmann::json& doc = e.config.doc;
    // Its own name, so its default output folder is not the original config's.
    nlohmann::json system = doc.at("system");
    system["ipu"]["memory"].erase("available_memory_proportion"); // its old place: the workload's figures are in the schedule
    return {{"name", e.config.name + "_compiled"},
            {"description", fmt::format("{} compiled from {} ({} workload){}", e.config.name, e.config.file,
                                        doc.at("workload").at("kind").get<std::string>(),
                                        doc.contains("inference") ? "; its inference phase is not included" : "")},
            {"system", system},
            {"run", doc.at("run")},
            {"workload", scheduleToJson(e.schedule)}};
}

namespace {

using json = nlohmann::json;

// Lists whose items each get a line of their own.
bool listedByLine(std::string_view key)
{
    static const std::set<std::string_view> keys = {"programs", "fragments", "steps", "body", "tensors"};
    return keys.count(key) > 0;
}

// An object is spread key by key when it is a section of the config or holds such a list.
bool spread(const json& j, int depth)
{
    if (!j.is_object())
        return false;
    if (depth < 2)
        return true;
    for (const auto& [key, value] : j.items())
        if (value.is_array() && listedByLine(key))
            return true;
    return false;
}

void writeValue(std::string& out, const json& j, int depth);

void writeList(std::string& out, const json& list, int depth)
{
    if (list.empty()) {
        out += "[]";
        return;
    }
    const std::string pad(std::size_t(depth + 1), ' ');
    out += "[\n";
    for (std::size_t i = 0; i < list.size(); ++i) {
        out += pad;
        writeValue(out, list[i], depth + 1);
        out += i + 1 < list.size() ? ",\n" : "\n";
    }
    out += std::string(std::size_t(depth), ' ') + "]";
}

void writeValue(std::string& out, const json& j, int depth)
{
    if (!spread(j, depth)) {
        out += j.dump();
        return;
    }
    const std::string pad(std::size_t(depth + 1), ' ');
    out += "{\n";
    std::size_t left = j.size();
    for (const auto& [key, value] : j.items()) {
        out += pad + json(key).dump() + ": ";
        if (value.is_array() && listedByLine(key))
            writeList(out, value, depth + 1);
        else
            writeValue(out, value, depth + 1);
        out += --left ? ",\n" : "\n";
    }
    out += std::string(std::size_t(depth), ' ') + "}";
}

} // namespace

std::string compiledConfigText(const json& config)
{
    std::string out;
    writeValue(out, config, 0);
    return out + "\n";
}

} // namespace ipusim
