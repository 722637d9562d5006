// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace ipusim {

/** A statistic: a plain counter the hot path increments, registered once, where it is counted,
 *  with its name (its key in summary.json), unit and meaning. */
struct Stat
{
    std::string name, unit, description;
    const uint64_t* counter = nullptr;
    [[nodiscard]] uint64_t value() const { return *counter; }
};

/** A module's statistics (as Ramulator 2's and SST's components register theirs). The report
 *  walks the groups to write them; loop fast-forward snapshots and advances every registered
 *  counter, so a statistic cannot be reported yet forgotten by fast-forward. */
class StatGroup
{
public:
    StatGroup() = default;
    StatGroup(const StatGroup&) = delete; // holds addresses of its owner's members
    StatGroup& operator=(const StatGroup&) = delete;

    void add(std::string name, uint64_t& counter, std::string unit, std::string description)
    {
        m_stats.push_back({std::move(name), std::move(unit), std::move(description), &counter});
        m_counters.push_back(&counter);
    }
    [[nodiscard]] const std::vector<Stat>& stats() const { return m_stats; }
    /** Every registered counter, writable (loop fast-forward adds skipped iterations' growth). */
    void counters(std::vector<uint64_t*>& out) const { out.insert(out.end(), m_counters.begin(), m_counters.end()); }

private:
    std::vector<Stat> m_stats;
    std::vector<uint64_t*> m_counters;
};

} // namespace ipusim
