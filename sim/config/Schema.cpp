// SPDX-License-Identifier: MIT
#include "sim/config/Schema.hpp"

#include "sim/config/ConfigError.hpp"

#include <fmt/format.h>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>

#include <map>
#include <memory>
#include <mutex>

namespace ipusim::config {
namespace {

using json = nlohmann::json;

// valijson reports context as ["<root>", "[a]", "[0]"]; turn it into "/a/0".
std::string contextToPointer(const std::vector<std::string>& context)
{
    std::string out;
    for (const auto& c : context) {
        if (c.size() >= 2 && c.front() == '[' && c.back() == ']') {
            std::string token = c.substr(1, c.size() - 2);
            if (token.size() >= 2 && token.front() == '"' && token.back() == '"')
                token = token.substr(1, token.size() - 2);
            out += "/" + escapePointerToken(token);
        }
    }
    return out;
}

std::string typeName(const json& v)
{
    switch (v.type()) {
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return "number";
    default: return v.type_name();
    }
}

std::string shortDump(const json& v)
{
    std::string s = v.dump();
    return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

// Follows a document pointer through the schema (properties, items, $ref) to find the node
// that says what was expected there.
const json* schemaAt(const json& root, const json* node, const std::string& rel)
{
    auto deref = [&](const json* n) {
        return n && n->contains("$ref")
                   ? &root.at(json::json_pointer(n->at("$ref").get<std::string>().substr(1)))
                   : n;
    };
    std::vector<std::string> tokens;
    for (auto p = json::json_pointer(rel); !p.empty(); p.pop_back())
        tokens.insert(tokens.begin(), p.back());
    for (const auto& token : tokens) {
        node = deref(node);
        if (!node)
            return nullptr;
        if (node->contains("properties") && node->at("properties").contains(token))
            node = &node->at("properties").at(token);
        else if (node->contains("items") && node->at("items").is_object())
            node = &node->at("items");
        else
            return nullptr;
    }
    return deref(node);
}

// A bound as people write it: 1e6, not 1000000.0; integers as they are.
std::string bound(const json& v)
{
    if (!v.is_number_float())
        return v.dump();
    std::string s = fmt::format("{:g}", v.get<double>());
    if (auto e = s.find("e+"); e != std::string::npos)
        s.erase(e + 1, 1);
    for (auto e = s.find('e'); e != std::string::npos && e + 2 < s.size() && (s[e + 1] == '0' || (s[e + 1] == '-' && s[e + 2] == '0'));)
        s.erase(s[e + 1] == '0' ? e + 1 : e + 2, 1);
    return s;
}

std::string expectation(const json* s)
{
    if (!s)
        return "";
    std::vector<std::string> parts;
    if (s->contains("enum"))
        parts.push_back("one of " + s->at("enum").dump());
    if (s->contains("const"))
        parts.push_back(s->at("const").dump());
    if (s->contains("type") && s->at("type").is_string())
        parts.push_back(s->at("type").get<std::string>());
    else if (s->contains("type"))
        parts.push_back(fmt::format("{}", fmt::join(s->at("type").get<std::vector<std::string>>(), " or ")));
    if (s->contains("pattern"))
        parts.push_back("matching " + s->at("pattern").get<std::string>());
    if (s->contains("minimum"))
        parts.push_back(">= " + bound(s->at("minimum")));
    if (s->contains("exclusiveMinimum"))
        parts.push_back("> " + bound(s->at("exclusiveMinimum")));
    if (s->contains("maximum"))
        parts.push_back("<= " + bound(s->at("maximum")));
    if (s->contains("exclusiveMaximum"))
        parts.push_back("< " + bound(s->at("exclusiveMaximum")));
    if (s->contains("oneOf"))
        parts.push_back(s->value("description", std::string("a listed form")));
    std::string out;
    for (const auto& p : parts)
        out += (out.empty() ? "" : ", ") + p;
    return out;
}

// The simulator reads integers into 32-bit fields unless the schema says otherwise: an integer
// without a maximum gets the 32-bit one, so a larger value is an error naming its range rather
// than a value that wraps (4294967296 tiles would be 0).
void boundIntegers(json& node)
{
    if (node.is_object()) {
        const auto type = node.find("type");
        const bool integer = type != node.end() && (*type == "integer" || (type->is_array() && type->dump().find("\"integer\"") != std::string::npos));
        if (integer && !node.contains("maximum") && !node.contains("exclusiveMaximum"))
            node["maximum"] = Schema::kIntegerMaximum;
    }
    if (node.is_structured())
        for (auto& child : node)
            boundIntegers(child);
}

json boundedSchema()
{
    json root = json::parse(embeddedSchemaText());
    boundIntegers(root);
    return root;
}

} // namespace

Schema::Schema() : m_root(boundedSchema()) {}

const Schema& Schema::instance()
{
    static const Schema schema;
    return schema;
}

void Schema::validate(const json& doc,
                      const std::string& schemaPointer,
                      const std::string& basePointer,
                      const std::function<std::string(const std::string&)>& fileOf) const
{
    // One parsed valijson schema per schema node; the root's definitions stay reachable
    // because we wrap the node with the root's definitions.
    static std::mutex mutex;
    static std::map<std::string, std::shared_ptr<valijson::Schema>> cache;
    std::shared_ptr<valijson::Schema> parsed;
    {
        std::lock_guard<std::mutex> lock(mutex);
        auto& slot = cache[schemaPointer];
        if (!slot) {
            json wrapped = m_root.at(json::json_pointer(schemaPointer));
            wrapped["definitions"] = m_root.at("definitions");
            slot = std::make_shared<valijson::Schema>();
            valijson::SchemaParser parser;
            valijson::adapters::NlohmannJsonAdapter adapter(wrapped);
            parser.populateSchema(adapter, *slot);
        }
        parsed = slot;
    }
    valijson::Validator validator;
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter target(doc);
    if (validator.validate(*parsed, target, &results))
        return;

    // Report the deepest concrete error (valijson adds "Failed to validate ..." wrappers).
    valijson::ValidationResults::Error error, best;
    std::size_t bestDepth = 0;
    bool found = false;
    while (results.popError(error)) {
        bool wrapper = error.description.rfind("Failed to validate", 0) == 0;
        std::size_t depth = error.context.size() * 2 + (wrapper ? 0 : 1);
        if (!found || depth > bestDepth) {
            best = error;
            bestDepth = depth;
            found = true;
        }
    }
    std::string rel = contextToPointer(best.context);
    std::string ptr = basePointer + rel;
    const json* node = schemaAt(m_root, &m_root.at(json::json_pointer(schemaPointer)), rel);
    std::string message;
    const std::string& d = best.description;
    auto quoted = d.find('\'');
    if (d.find("could not be validated using 'properties'") != std::string::npos) {
        auto key = d.substr(d.rfind(": '") + 3);
        key = key.substr(0, key.rfind('\''));
        std::vector<std::string> allowed;
        if (node && node->contains("properties"))
            for (const auto& [k, v] : node->at("properties").items())
                allowed.push_back(k);
        message = fmt::format("unknown key \"{}\" (allowed: {})", key, fmt::join(allowed, ", "));
        ptr += "/" + key;
    } else if (d.find("Missing required property") != std::string::npos && quoted != std::string::npos) {
        auto key = d.substr(quoted + 1);
        key = key.substr(0, key.find('\''));
        message = fmt::format("missing required key \"{}\"", key);
        ptr += "/" + key;
    } else {
        const json* found = nullptr;
        json::json_pointer jp(rel);
        if (doc.contains(jp))
            found = &doc.at(jp);
        std::string want = expectation(node);
        message = fmt::format("expected {}, found {}{}", want.empty() ? "a valid value" : want,
                              found ? typeName(*found) + " " + shortDump(*found) : std::string("nothing"),
                              want.empty() ? " (" + d + ")" : "");
    }
    throw ConfigError(fileOf(ptr), ptr, message);
}

void Schema::applyDefaults(json& doc, const std::string& schemaPointer) const
{
    auto deref = [&](const json& node) -> const json& {
        return node.contains("$ref") ? m_root.at(json::json_pointer(node.at("$ref").get<std::string>().substr(1))) : node;
    };
    std::function<void(json&, const json&)> fill = [&](json& value, const json& node) {
        const json* n = &deref(node);
        if (!value.is_object() || !n->contains("properties"))
            return;
        for (const auto& [key, ref] : n->at("properties").items()) {
            const json& sub = deref(ref);
            if (!value.contains(key)) {
                if (sub.contains("default"))
                    value[key] = sub.at("default");
                // An absent optional object is filled in only if an empty one would be valid.
                else if (sub.contains("type") && sub.at("type") == "object" && sub.contains("properties") && !sub.contains("required") &&
                         !(n->contains("required") && n->at("required").dump().find("\"" + key + "\"") != std::string::npos))
                    value[key] = json::object();
                else
                    continue;
            }
            fill(value[key], sub);
        }
    };
    fill(doc, m_root.at(json::json_pointer(schemaPointer)));
}

std::vector<Schema::Param> Schema::params() const
{
    // Every key the schema accepts: object properties, the keys of list elements ("*") and of a
    // map's entries ("<name>"), each alternative of a oneOf; the workload's keys once per kind.
    std::vector<Param> out;
    std::map<std::string, std::size_t> rowOf; // pointer -> its row in `out`
    std::map<std::string, std::string> dispatchAt; // "steps" -> the pointer its kinds are listed below
    auto deref = [&](const json& n) -> const json& {
        return n.contains("$ref") ? m_root.at(json::json_pointer(n.at("$ref").get<std::string>().substr(1))) : n;
    };
    // A key gets a row unless it only holds named keys (an object with properties); a list or
    // map of objects also lists the keys of its elements.
    auto holdsObjects = [&](const json& n) { return deref(n).contains("properties") || deref(n).contains("oneOf"); };
    // A description beside a $ref, or on a oneOf, describes what it refers to or each alternative.
    std::function<void(const json&, const std::string&, int, const std::string&)> walk = [&](const json& ref, const std::string& ptr,
                                                                                            int depth, const std::string& outer) {
        const json& node = deref(ref);
        const std::string description = ref.value("description", node.value("description", outer));
        if (depth > 12)
            return; // recursive definitions (none today) would not end
        if (!ptr.empty() && !node.contains("properties") && !node.contains("oneOf") && rowOf.count(ptr)) {
            // Another alternative of a oneOf: the key accepts its values too.
            std::string& range = out[rowOf.at(ptr)].range;
            if (const std::string more = expectation(&node); !more.empty() && range.find(more) == std::string::npos)
                range += (range.empty() ? "" : "; or ") + more;
        } else if (!ptr.empty() && !node.contains("properties") && !node.contains("oneOf")) {
            rowOf[ptr] = out.size();
            const json d = node.value("default", json("-"));
            std::string type = node.contains("type") ? (node.at("type").is_string() ? node.at("type").get<std::string>() : node.at("type").dump()) : "";
            out.push_back({ptr, type, node.value("x-unit", std::string("-")), d.is_string() ? d.get<std::string>() : d.dump(),
                           node.value("x-source", std::string()), description, expectation(&node)});
        }
        if (node.contains("properties"))
            for (const auto& [k, v] : node.at("properties").items())
                walk(v, ptr + "/" + k, depth + 1, "");
        if (node.contains("items") && node.at("items").is_object() && holdsObjects(node.at("items"))) {
            // Schedule steps and graph ops are checked per "op" against their own definitions.
            const std::string ref = node.at("items").value("$ref", std::string());
            const char* kinds = ref == "#/definitions/step" ? "steps" : ref == "#/definitions/graph_op" ? "graph_ops" : nullptr;
            // Each kind's keys are listed once, below the shortest list of them (a repeat's
            // body and an IPU's own steps take the workload's steps' keys).
            if (kinds && (!dispatchAt.count(kinds) || ptr.size() < dispatchAt[kinds].size()))
                dispatchAt[kinds] = ptr;
            else if (!kinds)
                walk(node.at("items"), ptr + "/*", depth + 1, "");
        }
        if (node.contains("additionalProperties") && node.at("additionalProperties").is_object() && holdsObjects(node.at("additionalProperties")))
            walk(node.at("additionalProperties"), ptr + "/<name>", depth + 1, "");
        if (node.contains("oneOf"))
            for (const auto& alternative : node.at("oneOf"))
                walk(alternative, ptr, depth + 1, description);
    };
    walk(m_root, "", 0, "");
    for (const auto& [kind, node] : m_root.at("definitions").at("workloads").items())
        walk(node, "/workload(" + kind + ")", 0, "");
    for (const auto& [kinds, ptr] : dispatchAt)
        for (const auto& [op, definition] : m_root.at("definitions").at(kinds).items())
            walk(definition, ptr + "/*(" + op + ")", 1, "");
    return out;
}

} // namespace ipusim::config
