// SPDX-License-Identifier: MIT
#pragma once
#include "sim/engine/MemoryAccount.hpp"
#include "sim/engine/Simulation.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace ipusim::report {

/** summary.json: totals, breakdown, tile balance, memory, simulator speed (format in README). */
nlohmann::json summary(const Experiment& experiment, const Simulation& sim, const SimResult& result);
/** The human-readable table printed after a run. */
void printSummary(std::ostream& out, const nlohmann::json& summary);

/** Out-of-memory report: which IPUs, which tiles, how many bytes over, what is live; for each
 *  accounted program that does not fit, and the IPUs whose memory was not accounted. */
nlohmann::json oomReport(const Experiment& experiment, const MemoryAccount& account);
void printOomReport(std::ostream& out, const nlohmann::json& report);

/** Memory section shared by the summary and the out-of-memory report. */
nlohmann::json memoryOfIpu(const TileMemory& mem, const Program& program, std::size_t worst);

/** Writes `text` to `path` via a temporary file and a rename, so readers never see half a file. */
void writeFileAtomically(const std::string& path, const std::string& text);

} // namespace ipusim::report
