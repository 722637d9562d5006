// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "sim/config/ConfigLoader.hpp"
#include "sim/config/RunSpec.hpp"
#include "workloads/strategies/CompiledSchedule.hpp"

#include <cstddef>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ipusim {

/** Config values the compiler never reads (JSON pointers): the machine's timing outside the
 *  tile (clock, links, syncs, Streaming Memory's speed), how long the run is, what it traces,
 *  names and notes. Sweeping them never compiles again; a test compiles every shipped model
 *  with all of them changed and expects the very same Schedule. */
const std::vector<std::string_view>& compilerIgnoredPointers();
/** `pointer` is one of them or lies inside one. */
bool compilerIgnores(std::string_view pointer);

/** What the compiler reads of a config, as text: two configs with equal keys compile to the
 *  same Schedule. The config with the ignored values taken out, and for an ONNX model the
 *  file it names, with its size and modification time. */
std::string compileKey(const config::LoadedConfig& cfg);

/** Schedules already compiled, by compile key, the most recent few. A sweep worker compiles
 *  each point's schedule here (once for the points that share it) and simulates the point in
 *  a forked child, which takes the schedule from its own copy of the cache instead of
 *  compiling it again. */
class CompileCache
{
public:
    explicit CompileCache(std::size_t capacity = 2) : m_capacity(capacity) {}

    /** Compiles `cfg`'s workload unless a schedule with its key is held; throws as compiling
     *  does (bad input, an op the planner cannot fit, a broken schedule), keeping nothing. A
     *  schedule that does not fit is held: each of its points reports it. */
    void prepare(const config::LoadedConfig& cfg);
    /** The schedule held for `cfg`'s key, moved out of the cache (a forked point's copy),
     *  or nothing. */
    std::optional<CompiledSchedule> take(const config::LoadedConfig& cfg);
    /** Schedules compiled by prepare() so far. */
    [[nodiscard]] std::size_t compiled() const { return m_compiled; }

private:
    std::size_t m_capacity;
    std::size_t m_compiled = 0;
    std::list<std::pair<std::string, CompiledSchedule>> m_entries; // most recently used first
};

/** The compiled Schedule of `cfg` (decoding its workload, then compiling it for `system`),
 *  named after the config and marked as inference when the workload is. What follows from it
 *  alone, whatever the machine's timing, comes with it: its invariants checked and each
 *  program's tile memory (liveness and peaks), as far as the first program that does not fit
 *  (with `stopAtFirstIpuOver` false, every program, all compiled). */
CompiledSchedule compileSchedule(const config::LoadedConfig& cfg, const SystemParams& system, const RunSpec& run,
                                 bool stopAtFirstIpuOver = true);

} // namespace ipusim
