// SPDX-License-Identifier: MIT
#include "sim/poplar/ProfileSummary.hpp"

#include "sim/engine/Simulation.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <ostream>

namespace poplar::detail {

namespace {

/** Each IPU's program steps in the order they first ran: executions and cycles. */
class StepCollector : public ipusim::IPhaseObserver
{
public:
    struct Row
    {
        std::uint32_t ipu = 0;
        ipusim::PhaseKind kind{};
        std::string name;
        std::uint64_t executions = 0;
        std::uint64_t cycles = 0;
    };

    void phase(std::uint32_t ipu, ipusim::PhaseKind kind, const std::string& name, std::uint64_t start, std::uint64_t end,
               std::uint64_t) override
    {
        const auto key = std::make_tuple(ipu, kind, name);
        auto it = m_index.find(key);
        if (it == m_index.end()) {
            it = m_index.emplace(key, m_rows.size()).first;
            m_rows.push_back({ipu, kind, name, 0, 0});
        }
        ++m_rows[it->second].executions;
        m_rows[it->second].cycles += end - start;
    }
    [[nodiscard]] bool tileWindow(std::uint32_t, std::uint32_t&, std::uint32_t&, std::uint64_t&, std::uint64_t&) const override { return false; }
    void tileSpan(std::uint32_t, std::uint32_t, const std::string&, std::uint64_t, std::uint64_t) override {}
    void fragmentSpan(std::uint32_t, const std::string&, std::uint64_t, std::uint64_t, std::int64_t) override {}
    void linkSpan(const std::string&, const std::string&, std::uint64_t, std::uint64_t, std::uint64_t) override {}
    [[nodiscard]] const std::vector<Row>& rows() const { return m_rows; }

private:
    std::map<std::tuple<std::uint32_t, ipusim::PhaseKind, std::string>, std::size_t> m_index;
    std::vector<Row> m_rows;
};

std::string commas(std::uint64_t v)
{
    std::string s = std::to_string(v);
    for (int i = int(s.size()) - 3; i > 0; i -= 3)
        s.insert(std::size_t(i), ",");
    return s;
}

} // namespace

void printProfile(std::ostream& out, const CompiledGraph& graph, const ipusim::Experiment& run, const nlohmann::json& summary)
{
    const Target& t = graph.store->target;
    fmt::print(out, "Target:\n  Number of IPUs:         {}\n  Tiles per IPU:          {}\n  Total tiles:            {}\n"
                    "  Memory per tile:        {:.1f} KiB\n  Clock:                  {:.3f} GHz\n  Simulated system:       {}, IPUs {} to {}\n",
               t.getNumIPUs(), commas(t.getTilesPerIPU()), commas(t.getNumTiles()), t.getBytesPerTile() / 1024.0,
               t.getTileClockFrequency() / 1e9, t.ipusimSystem(), t.ipusimFirstIpu(), t.ipusimFirstIpu() + t.getNumIPUs() - 1);
    std::size_t edges = 0;
    for (const auto& v : graph.store->vertices)
        for (const auto& [name, f] : v.fields)
            edges += f.edges.size();
    fmt::print(out, "\nGraph:\n  Number of vertices:     {}\n  Number of edges:        {}\n  Number of variables:    {}\n"
                    "  Number of compute sets: {}\n",
               commas(graph.store->vertices.size()), commas(edges), commas(graph.store->variables.size()),
               commas(graph.store->computeSets.size()));
    fmt::print(out, "\nMemory usage:\n");
    for (const auto& m : summary.at("memory")) {
        const auto& worst = m.at("worst_tiles").at(0);
        fmt::print(out, "  IPU {}: {} bytes in all; peak tile {} holds {} of {} bytes (always-live {})\n", m.at("ipu").get<int>(),
                   commas(m.at("peak").at("total").get<std::uint64_t>()), worst.at("tile").get<std::uint64_t>(),
                   commas(worst.at("peak").get<std::uint64_t>()), commas(m.at("tile_capacity_bytes").get<std::uint64_t>()),
                   commas(worst.at("always_live").get<std::uint64_t>()));
        for (const auto& [kind, bytes] : m.at("bytes_by_kind").items())
            fmt::print(out, "    {:<26}  {:>14}\n", kind, commas(bytes.get<std::uint64_t>()));
    }
    const std::uint64_t total = summary.at("total_cycles");
    fmt::print(out, "\nExecution:\n  Total cycles:           {} ({:.3f} us at {:.3f} GHz)\n", commas(total),
               double(total) / t.getTileClockFrequency() * 1e6, t.getTileClockFrequency() / 1e9);
    for (const auto& [kind, cycles] : summary.at("breakdown").items())
        if (cycles.get<std::uint64_t>() > 0)
            fmt::print(out, "    {:<20}  {:>14}\n", kind, commas(cycles.get<std::uint64_t>()));

    StepCollector steps;
    ipusim::Simulation sim(run, &steps);
    sim.run();
    // Each IPU's steps together, in the order they first ran.
    std::vector<StepCollector::Row> rows = steps.rows();
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.ipu < b.ipu; });
    fmt::print(out, "\nProgram steps (each step's cycles summed over its executions):\n");
    fmt::print(out, "  {:>4}  {:<10}  {:>10}  {:>14}  {:>12}  {}\n", "IPU", "kind", "executions", "cycles", "per run", "step");
    for (const auto& r : rows)
        fmt::print(out, "  {:>4}  {:<10}  {:>10}  {:>14}  {:>12}  {}\n", r.ipu, ipusim::nameOf(r.kind), commas(r.executions), commas(r.cycles),
                   commas(r.executions ? r.cycles / r.executions : 0), r.name.empty() ? "-" : r.name);
}

} // namespace poplar::detail
