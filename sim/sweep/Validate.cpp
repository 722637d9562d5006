// SPDX-License-Identifier: MIT
#include "sim/sweep/Validate.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/Interrupt.hpp"
#include "sim/sweep/SimulatePoint.hpp"
#include "sim/sweep/WorkerPool.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <unistd.h>

namespace ipusim {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using config::ConfigError;

struct Case
{
    std::string name, config, metric;
    std::vector<std::string> sets;
    double expected = 0, absolute = 0, relative = 0;
    bool relativeTolerance = false;
};

// The metric's value in a summary, or an error naming the case.
double metricOf(const json& summary, const Case& c, const std::string& file, const std::string& ptr)
{
    const std::string prefix = "compute_set:";
    if (c.metric.rfind(prefix, 0) == 0) {
        const std::string name = c.metric.substr(prefix.size());
        double total = 0;
        bool found = false;
        for (const auto& cs : summary.at("tile_balance"))
            if (cs.at("compute_set") == name) {
                total += cs.at("phase_cycles").get<double>();
                found = true;
            }
        if (!found)
            throw ConfigError(file, ptr + "/metric", fmt::format("the simulation has no compute set \"{}\"", name));
        return total;
    }
    json::json_pointer jp;
    try {
        jp = json::json_pointer(c.metric);
    } catch (const json::exception&) {
        throw ConfigError(file, ptr + "/metric", fmt::format("expected a JSON pointer into the summary or compute_set:NAME, found \"{}\"", c.metric));
    }
    if (!summary.contains(jp) || !summary.at(jp).is_number())
        throw ConfigError(file, ptr + "/metric", fmt::format("the summary has no number at \"{}\"", c.metric));
    return summary.at(jp).get<double>();
}

/** A validation file's top level: a non-empty list of cases and, optionally, a description. */
void checkValidationFileKeys(const std::string& path, const json& doc)
{
    if (!doc.is_object() || !doc.contains("cases") || !doc.at("cases").is_array() || doc.at("cases").empty())
        throw ConfigError(path, "/cases", "expected a non-empty list of cases");
    for (const auto& [k, v] : doc.items())
        if (k != "cases" && k != "description")
            throw ConfigError(path, "/" + k, fmt::format("unknown key \"{}\" (allowed: cases, description)", k));
}

/** A case's keys and their types, all checked before any is read. */
void checkValidationCaseKeys(const std::string& path, const json& j, const std::string& ptr)
{
    static const std::set<std::string> allowed{"name", "config", "set", "metric", "expected", "tolerance"};
    if (!j.is_object())
        throw ConfigError(path, ptr, "expected an object");
    for (const auto& [k, v] : j.items())
        if (!allowed.count(k))
            throw ConfigError(path, ptr + "/" + k, fmt::format("unknown key \"{}\" (allowed: {})", k, fmt::join(allowed, ", ")));
    for (const char* key : {"config", "metric"})
        if (!j.contains(key) || !j.at(key).is_string())
            throw ConfigError(path, ptr + "/" + key, fmt::format("missing \"{}\" (a string)", key));
    if (!j.contains("expected") || !j.at("expected").is_number())
        throw ConfigError(path, ptr + "/expected", "missing \"expected\" (a number)");
    if (j.contains("name") && !j.at("name").is_string())
        throw ConfigError(path, ptr + "/name", fmt::format("expected a string, found {}", j.at("name").dump()));
}

/** A case's overrides of its config ("set"), in the form --set takes. */
std::vector<std::string> validationCaseSets(const std::string& path, const json& j, const std::string& ptr)
{
    const json sets = j.value("set", json::object());
    if (!sets.is_object())
        throw ConfigError(path, ptr + "/set", fmt::format("expected an object of JSON pointer: value, found {}", sets.dump()));
    std::vector<std::string> out;
    for (const auto& [p, v] : sets.items())
        out.push_back(p + "=" + v.dump());
    return out;
}

/** How far the simulated value may be from the expected one: exact unless the case says. */
void readValidationTolerance(const std::string& path, const json& j, const std::string& ptr, Case& c)
{
    const json tol = j.value("tolerance", json{{"absolute", 0}});
    if (!tol.is_object() || tol.size() != 1 || !(tol.contains("absolute") || tol.contains("relative")) || !tol.begin()->is_number() ||
        tol.begin()->get<double>() < 0)
        throw ConfigError(path, ptr + "/tolerance", "expected {\"absolute\": x} or {\"relative\": r} with a number >= 0");
    c.relativeTolerance = tol.contains("relative");
    (c.relativeTolerance ? c.relative : c.absolute) = tol.begin()->get<double>();
}

/** Case i of the file, checked up to loading its config, so that every mistake in the file is
 *  reported before anything is simulated. */
Case validationCaseAt(const std::string& path, const json& j, std::size_t i)
{
    const std::string ptr = fmt::format("/cases/{}", i);
    checkValidationCaseKeys(path, j, ptr);
    Case c;
    c.name = j.value("name", fmt::format("case {}", i));
    c.config = (fs::path(path).parent_path() / j.at("config").get<std::string>()).lexically_normal().string();
    c.metric = j.at("metric");
    c.expected = j.at("expected");
    c.sets = validationCaseSets(path, j, ptr);
    // A case that cannot load is bad input (exit 1), not a result outside tolerance.
    try {
        config::loadConfig(c.config, c.sets, path + " " + ptr + "/set");
    } catch (const ConfigError& e) {
        throw ConfigError(path, ptr + "/config", e.what());
    }
    readValidationTolerance(path, j, ptr, c);
    return c;
}

/** Simulates every case, jobs at a time; result i is case i's {"status", "summary" or "error"}. */
std::vector<json> simulateValidationCases(const std::string& path, const std::vector<Case>& cases, unsigned jobs)
{
    std::vector<json> results(cases.size());
    // Cases that change only what the compiler ignores share a worker's compiled schedule.
    CompileCache compiled;
    auto origin = [&](std::size_t i) { return fmt::format("{} /cases/{}/set", path, i); };
    WorkerPool pool(jobs, [&](std::size_t i) { return simulatePointInWorker(cases[i].config, cases[i].sets, origin(i), compiled); });
    std::vector<std::size_t> everyCase(cases.size());
    for (std::size_t i = 0; i < everyCase.size(); ++i)
        everyCase[i] = i;
    pool.run(everyCase, [&](std::size_t i) { return compileGroup(cases[i].config, cases[i].sets); }, [](std::size_t) {},
             [&](std::size_t i, json r) { results[i] = std::move(r); });
    if (pool.interrupted())
        throw Interrupted("interrupted: the validation compared nothing");
    return results;
}

/** A case found invalid while compiling (a cross-field rule, say) is bad input like one whose
 *  config does not load: the file is refused before any comparison is printed. */
void rejectInvalidValidationCases(const std::string& path, const std::vector<json>& results)
{
    for (std::size_t i = 0; i < results.size(); ++i)
        if (results[i].value("status", std::string()) == "invalid")
            throw ConfigError(path, fmt::format("/cases/{}", i), results[i].value("error", std::string("?")));
}

/** The relative errors so far, and whether every case passed. */
struct ValidationTally
{
    bool allPass = true;
    double sumRel = 0, maxRel = 0;
};

/** Case i's row of the table: expected, simulated, error, relative error and the verdict (a
 *  case that did not simulate fails, with its error). */
void printValidationRow(std::ostream& out, const std::string& path, std::size_t i, const Case& c, const json& result,
                        ValidationTally& tally)
{
    if (result.at("status") != "ok") {
        fmt::print(out, "{:<56} {:>16} {:>16} {:>12} {:>9}  FAIL: {}\n", c.name, c.expected, "-", "-", "-",
                   result.value("error", std::string("?")));
        tally.allPass = false;
        return;
    }
    const double got = metricOf(result.at("summary"), c, path, fmt::format("/cases/{}", i));
    const double err = got - c.expected;
    const double rel = c.expected != 0 ? std::abs(err) / std::abs(c.expected) : (err == 0 ? 0.0 : INFINITY);
    const bool pass = c.relativeTolerance ? rel <= c.relative : std::abs(err) <= c.absolute;
    tally.allPass = tally.allPass && pass;
    tally.sumRel += rel;
    tally.maxRel = std::max(tally.maxRel, rel);
    fmt::print(out, "{:<56} {:>16} {:>16} {:>12} {:>8.4f}%  {}\n", c.name, c.expected, got, err, 100 * rel, pass ? "ok" : "FAIL");
}

} // namespace

bool runValidation(const std::string& path, unsigned jobs, std::ostream& out)
{
    const json doc = config::readJsonFile(path);
    checkValidationFileKeys(path, doc);
    std::vector<Case> cases;
    for (std::size_t i = 0; i < doc.at("cases").size(); ++i)
        cases.push_back(validationCaseAt(path, doc.at("cases")[i], i));
    const std::vector<json> results = simulateValidationCases(path, cases, jobs);
    rejectInvalidValidationCases(path, results);

    fmt::print(out, "{:<56} {:>16} {:>16} {:>12} {:>9}  {}\n", "case", "expected", "simulated", "error", "rel. err", "");
    ValidationTally tally;
    for (std::size_t i = 0; i < cases.size(); ++i)
        printValidationRow(out, path, i, cases[i], results[i], tally);
    fmt::print(out, "{} cases: mean relative error {:.4f} %, max {:.4f} %; {}\n", cases.size(), 100 * tally.sumRel / double(cases.size()),
               100 * tally.maxRel, tally.allPass ? "all within tolerance" : "SOME OUTSIDE TOLERANCE");
    return tally.allPass;
}

} // namespace ipusim
