// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ipusim {

enum class StrategyKind { Single, Pipelined, Sharded, Phased };
enum class PipelineSchedule { Grouped, Interleaved, Sequential };

/** A pipeline stage: consecutive model blocks on one IPU. */
struct Stage
{
    std::vector<std::string> blocks;
    uint32_t ipu = 0;
};

/** How the user asked the model's blocks to run (`/workload/strategy`, poptorch.Block /
 *  Stage / ipu_id), before it is checked against the model: resolvePlacement does that. */
struct StrategySpec
{
    StrategyKind kind = StrategyKind::Single;
    PipelineSchedule schedule = PipelineSchedule::Grouped;
    bool parallelPhases = false; // phased: alternate phases between IPUs 0 and 1
    uint32_t replicas = 1;
    bool replicatedTensorSharding = false;
    /** Explicit stages (`stages`), or one IPU per block (`block_ipus`); neither: one block per
     *  IPU in model order. */
    std::optional<std::vector<Stage>> stages;
    std::optional<std::map<std::string, uint32_t>> blockIpus;
};

} // namespace ipusim
