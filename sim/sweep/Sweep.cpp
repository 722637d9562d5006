// SPDX-License-Identifier: MIT
#include "sim/sweep/Sweep.hpp"

#include "models/program/PhaseKind.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/engine/Progress.hpp"
#include "sim/report/Summary.hpp"
#include "sim/sweep/SimulatePoint.hpp"
#include "sim/sweep/WorkerPool.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <unistd.h>

namespace ipusim {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;
using config::ConfigError;

// A million points is weeks of simulation; more is a typo in a range, caught before allocating.
constexpr std::size_t kMaxSweepPoints = 1000000;

std::string nameOf(const std::string& file, const json& doc)
{
    if (!doc.contains("name"))
        return config::safeName(fs::path(file).stem().string());
    const json& n = doc.at("name");
    if (!n.is_string() || n.get<std::string>() != config::safeName(n.get<std::string>()))
        throw ConfigError(file, "/name", fmt::format("expected a name for the results folder (letters, digits, '.', '_' and '-', "
                                                     "starting with a letter or digit, at most 100), found {}", n.dump()));
    return n.get<std::string>();
}

void checkKeys(const std::string& file, const json& obj, const std::string& ptr, const std::set<std::string>& allowed)
{
    if (!obj.is_object())
        throw ConfigError(file, ptr, fmt::format("expected an object, found {}", obj.dump()));
    for (const auto& [k, v] : obj.items())
        if (!allowed.count(k))
            throw ConfigError(file, ptr + "/" + k, fmt::format("unknown key \"{}\" (allowed: {})", k, fmt::join(allowed, ", ")));
}

double number(const std::string& file, const json& obj, const std::string& ptr, const char* key)
{
    if (!obj.contains(key) || !obj.at(key).is_number())
        throw ConfigError(file, ptr + "/" + key, fmt::format("expected a number, found {}", obj.contains(key) ? obj.at(key).dump() : "nothing"));
    return obj.at(key).get<double>();
}

// Keeps integers integral so that integer parameters still validate.
json numberValue(double v)
{
    if (std::abs(v - std::round(v)) < 1e-9 * std::max(1.0, std::abs(v)) && std::abs(v) < 9e15)
        return json(int64_t(std::llround(v)));
    return json(v);
}

// The values of one simple axis.
std::vector<json> axisValues(const std::string& file, const json& axis, const std::string& ptr)
{
    checkKeys(file, axis, ptr, {"pointer", "values", "range", "log"});
    const int forms = int(axis.contains("values")) + int(axis.contains("range")) + int(axis.contains("log"));
    if (forms != 1)
        throw ConfigError(file, ptr, "expected exactly one of \"values\", \"range\" or \"log\"");
    std::vector<json> out;
    if (axis.contains("values")) {
        if (!axis.at("values").is_array())
            throw ConfigError(file, ptr + "/values", fmt::format("expected a list of values, found {}", axis.at("values").dump()));
        for (const auto& v : axis.at("values"))
            out.push_back(v);
    } else if (axis.contains("range")) {
        const json& r = axis.at("range");
        checkKeys(file, r, ptr + "/range", {"from", "to", "step"});
        const double from = number(file, r, ptr + "/range", "from"), to = number(file, r, ptr + "/range", "to");
        const double step = number(file, r, ptr + "/range", "step");
        if (step <= 0)
            throw ConfigError(file, ptr + "/range/step", fmt::format("expected a number > 0, found {}", step));
        const double count = std::floor((to - from) / step + 1e-9) + 1;
        if (!(count <= double(kMaxSweepPoints)))
            throw ConfigError(file, ptr + "/range", fmt::format("the range has {:.3g} values; a sweep takes at most {}", count, kMaxSweepPoints));
        for (std::size_t k = 0; k < std::size_t(std::max(count, 0.0)); ++k)
            out.push_back(numberValue(from + double(k) * step));
    } else {
        const json& l = axis.at("log");
        checkKeys(file, l, ptr + "/log", {"from", "to", "points"});
        const double from = number(file, l, ptr + "/log", "from"), to = number(file, l, ptr + "/log", "to");
        const double n = number(file, l, ptr + "/log", "points");
        if (from <= 0 || to <= 0)
            throw ConfigError(file, ptr + "/log", "expected \"from\" and \"to\" > 0 for a log-spaced range");
        if (n < 2 || n != std::floor(n) || n > double(kMaxSweepPoints))
            throw ConfigError(file, ptr + "/log/points", fmt::format("expected an integer from 2 to {}, found {}", kMaxSweepPoints, n));
        for (int i = 0; i < int(n); ++i)
            out.push_back(numberValue(from * std::pow(to / from, double(i) / (n - 1))));
    }
    if (out.empty())
        throw ConfigError(file, ptr, "the axis has no values");
    return out;
}

std::string csvField(const json& v)
{
    std::string s = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
    if (s.find_first_of(",\"\n") == std::string::npos)
        return s;
    std::string q = "\"";
    for (char c : s)
        q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

const std::vector<std::pair<std::string, std::string>>& csvMetrics()
{
    // Column name, JSON pointer into the summary.
    static const std::vector<std::pair<std::string, std::string>> m = [] {
        std::vector<std::pair<std::string, std::string>> columns = {
            {"total_cycles", "/total_cycles"}, {"seconds", "/seconds"}, {"samples", "/samples"}, {"samples_per_second", "/samples_per_second"}};
        for (const auto& k : kPhaseKinds)
            columns.emplace_back(k.name, std::string("/breakdown/") + k.name);
        columns.insert(columns.end(), {{"peak_tile_bytes", "/memory/0/peak/max"},
                                       {"bubble_fraction", "/pipeline/bubble_fraction"},
                                       {"inference_samples_per_second", "/inference/samples_per_second"},
                                       {"run_total_cycles", "/run_total/cycles"}});
        return columns;
    }();
    return m;
}

// One whole line in one write; a write the disk cut short is taken back, so the file never
// holds half a row (--resume would glue the next row onto it).
void appendLine(const fs::path& path, const std::string& line)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        throw std::runtime_error(fmt::format("{}: cannot append ({})", path.string(), std::strerror(errno)));
    const off_t before = ::lseek(fd, 0, SEEK_END);
    const std::string text = line + "\n";
    const ssize_t written = ::write(fd, text.data(), text.size());
    const int error = written < 0 ? errno : ENOSPC;
    const bool whole = written == ssize_t(text.size());
    const bool takenBack = !whole && before >= 0 && ::ftruncate(fd, before) == 0;
    ::close(fd);
    if (!whole)
        throw std::runtime_error(fmt::format("{}: write failed ({}); {}", path.string(), std::strerror(error),
                                             takenBack ? "the partial row was taken back" : "--resume drops the partial row"));
}

/** The CSV line of one results.jsonl row. */
std::string csvLine(const Sweep& sweep, const json& row)
{
    const std::size_t i = row.at("point").get<std::size_t>();
    std::string line = std::to_string(i);
    for (const auto& [ptr, value] : sweep.points.at(i))
        line += "," + csvField(value);
    line += "," + csvField(row.at("status")) + "," + fmt::format("{:.4f}", row.at("wall_seconds").get<double>());
    for (const auto& [name, ptr] : csvMetrics()) {
        const json::json_pointer jp(ptr);
        line += "," + (row.contains("summary") && row.at("summary").contains(jp) ? csvField(row.at("summary").at(jp)) : "");
    }
    return line + "," + csvField(row.value("error", json("")));
}

std::string csvHeader(const Sweep& sweep)
{
    std::vector<std::string> header{"point"};
    header.insert(header.end(), sweep.axisPointers.begin(), sweep.axisPointers.end());
    for (const char* h : {"status", "wall_seconds"})
        header.push_back(h);
    for (const auto& [name, ptr] : csvMetrics())
        header.push_back(name);
    header.push_back("error");
    std::string line;
    for (const auto& h : header)
        line += (line.empty() ? "" : ",") + csvField(h);
    return line;
}

/** A results.jsonl line this sweep wrote whole: a row of one of its points. */
bool wholeRow(const json& row, const Sweep& sweep)
{
    return row.is_object() && row.contains("point") && row.at("point").is_number_unsigned() &&
           row.at("point").get<std::size_t>() < sweep.points.size() && row.contains("status") && row.at("status").is_string() &&
           row.contains("wall_seconds") && row.at("wall_seconds").is_number() && (!row.contains("summary") || row.at("summary").is_object());
}


/** The experiment config the sweep varies. The sweep file names it relative to itself, so a
 *  sweep and its config move together. */
std::string sweptConfigPath(const std::string& file, const json& doc)
{
    if (!doc.contains("config") || !doc.at("config").is_string())
        throw ConfigError(file, "/config", "expected the experiment config's file name (relative to this file)");
    return (fs::path(file).parent_path() / doc.at("config").get<std::string>()).lexically_normal().string();
}

/** The overrides every point shares ("set"), as written: they are part of the fingerprint. */
json sweepFixedOverrides(const std::string& file, const json& doc)
{
    const json fixed = doc.value("set", json::object());
    if (!fixed.is_object())
        throw ConfigError(file, "/set", fmt::format("expected an object of JSON pointer: value, found {}", fixed.dump()));
    return fixed;
}

/** A simple axis inside one entry of "axes", with its JSON path for errors. */
struct SweepAxisMember
{
    const json* axis;
    std::string ptr;
};

/** The simple axes one entry of "axes" moves together: a zip's members, or the entry itself. */
std::vector<SweepAxisMember> sweepAxisMembers(const std::string& file, const json& entry, const std::string& ptr)
{
    if (!entry.is_object() || !entry.contains("zip"))
        return {SweepAxisMember{&entry, ptr}};
    checkKeys(file, entry, ptr, {"zip"});
    const json& zip = entry.at("zip");
    if (!zip.is_array() || zip.empty())
        throw ConfigError(file, ptr + "/zip", "expected a non-empty list of axes");
    std::vector<SweepAxisMember> members;
    for (std::size_t j = 0; j < zip.size(); ++j)
        members.push_back(SweepAxisMember{&zip[j], fmt::format("{}/zip/{}", ptr, j)});
    return members;
}

/** One entry of "axes" as a list of partial points: value v of every member goes into partial
 *  point v, so zipped axes move together. Appends the pointers it sets to axisPointers, in the
 *  order of the CSV columns. */
std::vector<SweepPoint> sweepAxisDimension(const std::string& file, const json& entry, const std::string& ptr,
                                           std::vector<std::string>& axisPointers)
{
    const std::vector<SweepAxisMember> members = sweepAxisMembers(file, entry, ptr);
    std::vector<SweepPoint> dim;
    for (std::size_t m = 0; m < members.size(); ++m) {
        const json& member = *members[m].axis;
        const std::string& memberPtr = members[m].ptr;
        if (!member.is_object() || !member.contains("pointer") || !member.at("pointer").is_string())
            throw ConfigError(file, memberPtr + "/pointer", "expected a JSON pointer (string) into the experiment config");
        const std::string pointer = member.at("pointer");
        const auto values = axisValues(file, member, memberPtr);
        if (m > 0 && values.size() != dim.size())
            throw ConfigError(file, memberPtr, fmt::format("zipped axes need equal lengths: {} values here, {} before",
                                                           values.size(), dim.size()));
        dim.resize(values.size());
        for (std::size_t v = 0; v < values.size(); ++v)
            dim[v].push_back({pointer, values[v]});
        axisPointers.push_back(pointer);
    }
    return dim;
}

/** Every entry of "axes" as its partial points, one list per entry (see sweepAxisDimension). */
std::vector<std::vector<SweepPoint>> sweepAxisDimensions(const std::string& file, const json& doc,
                                                         std::vector<std::string>& axisPointers)
{
    if (!doc.contains("axes") || !doc.at("axes").is_array() || doc.at("axes").empty())
        throw ConfigError(file, "/axes", "expected a non-empty list of axes");
    const json& axes = doc.at("axes");
    std::vector<std::vector<SweepPoint>> dims;
    for (std::size_t i = 0; i < axes.size(); ++i)
        dims.push_back(sweepAxisDimension(file, axes[i], fmt::format("/axes/{}", i), axisPointers));
    return dims;
}

/** Every axis must name a value the experiment has: a typo would silently sweep nothing. */
void checkSweptPointersExist(const std::string& file, const Sweep& s, const config::LoadedConfig& base)
{
    for (const std::string& pointer : s.axisPointers) {
        json::json_pointer jp;
        try {
            jp = json::json_pointer(pointer);
        } catch (const json::exception&) {
            throw ConfigError(file, "/axes", fmt::format("\"{}\" is not a JSON pointer", pointer));
        }
        if (!base.doc.contains(jp))
            throw ConfigError(file, "/axes", fmt::format("\"{}\" names no value of {}", pointer, s.config));
    }
}

/** The grid product of the axes' partial points, last axis fastest. Its size is checked first,
 *  so that a typo in a range fails at once instead of exhausting memory. */
std::vector<SweepPoint> sweepGridProduct(const std::string& file, const std::vector<std::vector<SweepPoint>>& dims)
{
    std::size_t total = 1;
    for (const auto& dim : dims)
        if (__builtin_mul_overflow(total, dim.size(), &total) || total > kMaxSweepPoints)
            throw ConfigError(file, "/axes", fmt::format("the axes make more than {} points", kMaxSweepPoints));
    std::vector<SweepPoint> points = {SweepPoint{}};
    for (const auto& dim : dims) {
        std::vector<SweepPoint> next;
        for (const auto& p : points)
            for (const auto& part : dim) {
                SweepPoint q = p;
                q.insert(q.end(), part.begin(), part.end());
                next.push_back(std::move(q));
            }
        points = std::move(next);
    }
    return points;
}

/** Values of the wrong type fail now, naming the axis; combinations the simulator rejects
 *  (say, too little gradient accumulation for a pipeline) become failed rows instead. Each
 *  distinct pointer=value is loaded once, on top of the fixed overrides. */
void checkSweptValuesAccepted(const std::string& file, const Sweep& s)
{
    std::set<std::string> checked;
    for (const SweepPoint& point : s.points)
        for (const auto& [ptr, value] : point) {
            const std::string key = ptr + "=" + value.dump();
            if (!checked.insert(key).second)
                continue;
            try {
                std::vector<std::string> one = s.sets;
                one.push_back(key);
                config::loadConfig(s.config, one, file + " /axes");
            } catch (const ConfigError& e) {
                throw ConfigError(file, "/axes", fmt::format("the value {} for \"{}\" is not accepted: {}{}", value.dump(), ptr,
                                                             e.pointer() == ptr ? "" : e.pointer() + ": ", e.message()));
            }
        }
}

/** Identifies the sweep for --resume: what decides its points (not its name or description). */
std::string sweepFingerprint(const json& doc, const json& fixed)
{
    json identity = {{"config", doc.at("config")}, {"set", fixed}, {"axes", doc.at("axes")}};
    return fmt::format("{:016x}", std::hash<std::string>{}(identity.dump()));
}

} // namespace

Sweep Sweep::load(const std::string& path)
{
    const json doc = config::readJsonFile(path);
    Sweep s;
    s.file = path;
    checkKeys(path, doc, "", {"name", "description", "config", "set", "axes"});
    s.name = nameOf(path, doc);
    s.config = sweptConfigPath(path, doc);
    const json fixed = sweepFixedOverrides(path, doc);
    for (const auto& [ptr, value] : fixed.items())
        s.sets.push_back(ptr + "=" + value.dump());
    const std::vector<std::vector<SweepPoint>> dims = sweepAxisDimensions(path, doc, s.axisPointers);
    // The experiment with the fixed overrides, loaded once: the axes are checked against it.
    const config::LoadedConfig base = config::loadConfig(s.config, s.sets, path + " /set");
    for (const auto& note : config::deprecationNotes(base)) // once, not once per point
        fmt::print(stderr, "note: {}\n", note);
    checkSweptPointersExist(path, s, base);
    s.points = sweepGridProduct(path, dims);
    checkSweptValuesAccepted(path, s);
    s.fingerprint = sweepFingerprint(doc, fixed);
    return s;
}

std::vector<std::string> Sweep::setsFor(std::size_t point) const
{
    std::vector<std::string> out = sets;
    for (const auto& [ptr, value] : points.at(point))
        out.push_back(ptr + "=" + value.dump());
    return out;
}

struct SweepRowWriter::State
{
    const Sweep& sweep;
    fs::path jsonl, csv;
    std::set<std::size_t> done;
    std::map<std::size_t, std::chrono::steady_clock::time_point> started;
    std::size_t finished = 0, failures = 0, compiled = 0;
    Progress progress;
    State(const Sweep& s) : sweep(s), progress("sweep " + s.name, "points", 0.5, 10.0) {}
};

std::string resultsDir(const Sweep& sweep, const SweepOptions& options)
{
    return options.out.empty() ? (fs::path("out") / "sweeps" / sweep.name).string() : options.out;
}

SweepRowWriter::SweepRowWriter(const Sweep& sweep, const SweepOptions& o) : m_state(std::make_unique<State>(sweep))
{
    const fs::path dir = resultsDir(sweep, o);
    m_dir = dir.string();
    fs::create_directories(dir);
    State& st = *m_state;
    st.jsonl = dir / "results.jsonl";
    st.csv = dir / "results.csv";
    const fs::path meta = dir / "sweep.json";
    if (o.resume && fs::exists(st.jsonl)) {
        const json previous = fs::exists(meta) ? config::readJsonFile(meta.string()) : json();
        if (!previous.is_object() || previous.value("fingerprint", std::string()) != sweep.fingerprint)
            throw ConfigError(sweep.file, "", fmt::format("--resume: the results in {} come from a different sweep", dir.string()));
        // Keep the whole rows (the first of a point, if a point appears twice) and rewrite both
        // files from them: a row cut short by a crash or a full disk goes, and its point runs again.
        std::ifstream in(st.jsonl);
        std::string jsonl, csv = csvHeader(sweep) + "\n";
        std::size_t dropped = 0;
        for (std::string line; std::getline(in, line);) {
            const json row = json::parse(line, nullptr, false);
            if (!wholeRow(row, sweep) || !st.done.insert(row.at("point").get<std::size_t>()).second) {
                ++dropped;
                continue;
            }
            jsonl += row.dump() + "\n";
            csv += csvLine(sweep, row) + "\n";
        }
        if (dropped > 0)
            fmt::print(stderr, "--resume: dropped {} damaged or repeated row{} of {} (a damaged row's point runs again)\n", dropped,
                       dropped == 1 ? "" : "s", st.jsonl.string());
        report::writeFileAtomically(st.jsonl.string(), jsonl);
        report::writeFileAtomically(st.csv.string(), csv);
    } else {
        fs::remove(st.jsonl);
        fs::remove(st.csv);
    }
    report::writeFileAtomically(meta.string(), json{{"name", sweep.name}, {"fingerprint", sweep.fingerprint}, {"points", sweep.points.size()}}.dump(1) + "\n");
    if (!fs::exists(st.csv))
        appendLine(st.csv, csvHeader(sweep));
    st.finished = st.done.size();
}

SweepRowWriter::~SweepRowWriter() = default;

std::vector<std::size_t> SweepRowWriter::missingPoints() const
{
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < m_state->sweep.points.size(); ++i)
        if (!m_state->done.count(i))
            out.push_back(i);
    return out;
}

void SweepRowWriter::started(std::size_t point) { m_state->started[point] = std::chrono::steady_clock::now(); }

void SweepRowWriter::write(std::size_t i, const json& result)
{
    State& st = *m_state;
    const Sweep& sweep = st.sweep;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - st.started.at(i)).count();
    json row = {{"point", i}, {"status", result.at("status")}, {"wall_seconds", wall}};
    json axes = json::object();
    for (const auto& [ptr, value] : sweep.points[i])
        axes[ptr] = value;
    row["axes"] = axes;
    if (result.contains("error"))
        row["error"] = result.at("error");
    if (result.contains("summary"))
        row["summary"] = result.at("summary");
    appendLine(st.jsonl, row.dump());
    appendLine(st.csv, csvLine(sweep, row));
    ++st.finished;
    if (row.at("status") != "ok")
        ++st.failures;
    st.compiled += result.value("compiled", std::size_t(0)) + result.value("compiled_in_point", std::size_t(0));
    st.progress.update(st.finished, sweep.points.size(), st.failures);
}

SweepTally SweepRowWriter::finish()
{
    m_state->progress.finish();
    return {m_state->failures, m_state->compiled};
}

SweepTally runSweep(const Sweep& sweep, const SweepOptions& o)
{
    SweepRowWriter writer(sweep, o);
    const InterruptGuard guard;
    // Each worker keeps the schedules it compiled (its own copy of this cache) for the points
    // after: a point that changes only what the compiler ignores is not compiled again.
    CompileCache compiled;
    WorkerPool pool(o.jobs, [&](std::size_t i) { return simulatePointInWorker(sweep.config, sweep.setsFor(i), sweep.file, compiled); });
    // A point that finished is recorded; one stopped by the interrupt is not, so --resume runs it.
    pool.run(writer.missingPoints(), [&](std::size_t i) { return compileGroup(sweep.config, sweep.setsFor(i)); },
             [&](std::size_t i) { writer.started(i); }, [&](std::size_t i, const json& result) { writer.write(i, result); });
    const SweepTally tally = writer.finish();
    if (InterruptGuard::requested() || pool.interrupted())
        throw Interrupted(fmt::format("interrupted: the finished points are in {}; --resume runs the rest", writer.dir()));
    return tally;
}

} // namespace ipusim
