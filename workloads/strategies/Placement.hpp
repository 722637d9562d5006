// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Diagnostics.hpp"
#include "models/hw/SystemParams.hpp"
#include "workloads/strategies/StrategySpec.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace ipusim {

/** Where each block of a model runs (poptorch.Block / Stage / ipu_id), resolved and checked. */
struct Placement
{
    StrategyKind kind = StrategyKind::Single;
    PipelineSchedule schedule = PipelineSchedule::Grouped;
    bool parallelPhases = false; // phased: alternate phases between IPUs 0 and 1
    std::vector<Stage> stages; // consecutive stages on one IPU already merged
    std::map<std::string, uint32_t> stageOfBlock;
    uint32_t replicas = 1;
    bool replicatedTensorSharding = false;
    /** IPUs per replica: a replica r runs stage k on IPU stages[k].ipu + r x ipusPerReplica. */
    uint32_t ipusPerReplica = 1;
    /** The IPUs of every replica that play the part of `ipu` of replica 0, in replica order. */
    [[nodiscard]] std::vector<uint32_t> ring(uint32_t ipu) const
    {
        std::vector<uint32_t> r;
        for (uint32_t i = 0; i < replicas; ++i)
            r.push_back(ipu + i * ipusPerReplica);
        return r;
    }
    /** The IPUs stages run on, each once, in order of their first stage. */
    [[nodiscard]] std::vector<uint32_t> ipus() const
    {
        std::vector<uint32_t> out;
        for (const auto& s : stages)
            if (std::find(out.begin(), out.end(), s.ipu) == out.end())
                out.push_back(s.ipu);
        return out;
    }
};

/** Checks a strategy against the model's blocks (in model order) and the system. Errors name
 *  the JSON path under `/workload/strategy`: unknown or missing blocks, IPUs outside the
 *  system, stages out of model order, a stage with no IPU-Link to the next one. */
Placement resolvePlacement(const StrategySpec& spec, const std::vector<std::string>& blocks, const SystemParams& system,
                           const Diagnostics& diag);

} // namespace ipusim
