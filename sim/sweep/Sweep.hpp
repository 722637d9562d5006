// SPDX-License-Identifier: MIT
#pragma once
#include "sim/engine/Interrupt.hpp"
#include <nlohmann/json.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ipusim {

/** One value per JSON pointer: a point of a sweep. */
using SweepPoint = std::vector<std::pair<std::string, nlohmann::json>>;

/** A sweep file: an experiment config, fixed overrides, and axes whose grid product gives the
 *  points. Axes: {"pointer", "values": [...]}, {"pointer", "range": {"from", "to", "step"}},
 *  {"pointer", "log": {"from", "to", "points"}}, {"zip": [axis, ...]} (moving together). */
struct Sweep
{
    std::string file, name, config;
    std::vector<std::string> sets; // "/pointer=value"
    std::vector<std::string> axisPointers;
    std::vector<SweepPoint> points;
    std::string fingerprint; // identifies the sweep for --resume

    /** Reads and checks a sweep file; errors name the file and JSON path. Axis pointers must
     *  name values of the experiment config. */
    static Sweep load(const std::string& path);
    [[nodiscard]] std::vector<std::string> setsFor(std::size_t point) const;
};


struct SweepOptions
{
    std::string out;   // default out/sweeps/<name>
    unsigned jobs = 1;
    bool resume = false;
};

/** How a sweep went: points that failed, schedules its workers compiled (fewer than the
 *  points when points share a compile key). */
struct SweepTally
{
    std::size_t failed = 0;
    std::size_t compiled = 0;
};

/** Where a sweep's results go: `options.out`, or out/sweeps/<sweep name>. */
std::string resultsDir(const Sweep& sweep, const SweepOptions& options);

/** The results of a sweep on disk: whole rows appended to results.jsonl and results.csv as
 *  points finish (so an interruption loses nothing), with progress on stderr. */
class SweepRowWriter
{
public:
    /** Prepares the output folder; with `resume`, keeps the rows of the same sweep. */
    SweepRowWriter(const Sweep& sweep, const SweepOptions& options);
    ~SweepRowWriter();
    [[nodiscard]] std::vector<std::size_t> missingPoints() const;
    void started(std::size_t point);
    void write(std::size_t point, const nlohmann::json& result);
    /** Failed points and schedules compiled (rows written since it was made); the progress
     *  line is closed. */
    SweepTally finish();
    [[nodiscard]] const std::string& dir() const { return m_dir; }

private:
    struct State;
    std::unique_ptr<State> m_state;
    std::string m_dir;
};

/** Runs the points not yet in the results on `jobs` long-lived worker processes, which compile
 *  a schedule once for the points that share it and simulate each point in a process of its
 *  own. */
SweepTally runSweep(const Sweep& sweep, const SweepOptions& options);

} // namespace ipusim
