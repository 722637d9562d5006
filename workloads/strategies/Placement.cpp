// SPDX-License-Identifier: MIT
#include "workloads/strategies/Placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace ipusim {

Placement resolvePlacement(const config::LoadedConfig& cfg, const std::vector<std::string>& blocks, const SystemParams& system)
{
    using json = nlohmann::json;
    const json& s = cfg.doc.at("workload").at("strategy");
    Placement p;
    const std::string kind = s.at("kind");
    p.kind = kind == "pipelined" ? StrategyKind::Pipelined
             : kind == "sharded" ? StrategyKind::Sharded
             : kind == "phased"  ? StrategyKind::Phased : StrategyKind::Single;
    p.parallelPhases = s.at("phased") == "parallel";
    const std::string schedule = s.at("schedule");
    p.schedule = schedule == "interleaved" ? PipelineSchedule::Interleaved
                 : schedule == "sequential" ? PipelineSchedule::Sequential : PipelineSchedule::Grouped;
    auto indexOf = [&](const std::string& b) { return std::find(blocks.begin(), blocks.end(), b) - blocks.begin(); };
    auto known = [&](const std::string& b, const std::string& ptr) {
        if (std::find(blocks.begin(), blocks.end(), b) == blocks.end())
            cfg.fail(ptr, fmt::format("unknown block \"{}\" (the model's blocks: {})", b, fmt::join(blocks, ", ")));
    };
    auto checkIpu = [&](uint32_t ipu, const std::string& ptr) {
        if (ipu >= system.numIpus)
            cfg.fail(ptr, fmt::format("expected an IPU of the system (0 to {}), found {}", system.numIpus - 1, ipu));
    };

    std::vector<Stage> stages;
    std::vector<std::string> stagePtr;
    if (p.kind == StrategyKind::Single) {
        stages.push_back({blocks, 0});
        stagePtr.push_back("/workload/strategy");
    } else if (s.contains("stages")) {
        if (s.contains("block_ipus"))
            cfg.fail("/workload/strategy", "expected \"stages\" or \"block_ipus\", not both");
        const json& list = s.at("stages");
        for (std::size_t i = 0; i < list.size(); ++i) {
            Stage st;
            const std::string ptr = fmt::format("/workload/strategy/stages/{}", i);
            for (std::size_t j = 0; j < list[i].at("blocks").size(); ++j) {
                const std::string b = list[i].at("blocks")[j];
                known(b, fmt::format("{}/blocks/{}", ptr, j));
                st.blocks.push_back(b);
            }
            st.ipu = list[i].at("ipu");
            checkIpu(st.ipu, ptr + "/ipu");
            stages.push_back(st);
            stagePtr.push_back(ptr);
        }
    } else if (s.contains("block_ipus")) {
        for (const auto& [b, ipu] : s.at("block_ipus").items()) {
            known(b, "/workload/strategy/block_ipus/" + b);
            checkIpu(ipu.get<uint32_t>(), "/workload/strategy/block_ipus/" + b);
        }
        for (const auto& b : blocks) {
            if (!s.at("block_ipus").contains(b))
                cfg.fail("/workload/strategy/block_ipus", fmt::format("block \"{}\" has no IPU", b));
            stages.push_back({{b}, s.at("block_ipus").at(b).get<uint32_t>()});
            stagePtr.push_back("/workload/strategy/block_ipus/" + b);
        }
    } else {
        // Default: one block per IPU in model order, as PipelinedExecution("B1", "B2", ...) does
        // (for phases: one block per phase).
        if (blocks.size() > system.numIpus && p.kind != StrategyKind::Phased)
            cfg.fail("/workload/strategy", fmt::format("{} blocks need {} IPUs, the system has {}: give \"stages\"",
                                                       blocks.size(), blocks.size(), system.numIpus));
        for (uint32_t i = 0; i < blocks.size(); ++i) {
            stages.push_back({{blocks[i]}, i});
            stagePtr.push_back("/workload/strategy");
        }
    }

    // Every block exactly once, in model order.
    std::set<std::string> seen;
    long last = -1;
    for (std::size_t i = 0; i < stages.size(); ++i)
        for (const auto& b : stages[i].blocks) {
            if (!seen.insert(b).second)
                cfg.fail(stagePtr[i], fmt::format("block \"{}\" is in more than one stage", b));
            if (indexOf(b) < last)
                cfg.fail(stagePtr[i], fmt::format("block \"{}\" comes before the blocks of an earlier stage: stages follow the model's order ({})",
                                                  b, fmt::join(blocks, ", ")));
            last = indexOf(b);
        }
    for (const auto& b : blocks)
        if (!seen.count(b))
            cfg.fail("/workload/strategy", fmt::format("block \"{}\" is in no stage", b));

    if (p.kind == StrategyKind::Phased) {
        // Each stage is a phase; phases take turns on IPU 0 (serial) or IPUs 0 and 1 (parallel).
        if (p.parallelPhases && system.numIpus < 2)
            cfg.fail("/workload/strategy/phased", "expected \"serial\": parallel phases need 2 IPUs, the system has 1");
        if (p.parallelPhases && system.topology.links(0, 1) == 0)
            cfg.fail("/workload/strategy/phased", "parallel phases need an IPU-Link between IPUs 0 and 1");
        for (std::size_t i = 0; i < stages.size(); ++i) {
            stages[i].ipu = p.parallelPhases ? uint32_t(i % 2) : 0;
            p.stages.push_back(stages[i]);
        }
    }
    // Consecutive stages on one IPU merge. An IPU may come back later in the pipeline (BERT's
    // heads share IPU 0 with the embedding whose weights they reuse); its stages then take
    // turns on it within each pipeline cycle.
    for (std::size_t i = 0; i < stages.size() && p.kind != StrategyKind::Phased; ++i) {
        if (!p.stages.empty() && p.stages.back().ipu == stages[i].ipu) {
            for (const auto& b : stages[i].blocks)
                p.stages.back().blocks.push_back(b);
            continue;
        }
        if (!p.stages.empty() && system.topology.links(p.stages.back().ipu, stages[i].ipu) == 0)
            cfg.fail(stagePtr[i], fmt::format("IPU {} has no IPU-Link to IPU {} of the previous stage", stages[i].ipu, p.stages.back().ipu));
        p.stages.push_back(stages[i]);
    }
    for (uint32_t i = 0; i < p.stages.size(); ++i)
        for (const auto& b : p.stages[i].blocks)
            p.stageOfBlock[b] = i;

    // Replicas: whole copies of the model on consecutive groups of IPUs, joined in rings.
    p.replicas = s.at("replicas");
    p.replicatedTensorSharding = s.at("replicated_tensor_sharding");
    p.ipusPerReplica = p.kind == StrategyKind::Phased ? (p.parallelPhases ? 2 : 1) : uint32_t(p.ipus().size());
    const uint64_t needed = uint64_t(p.replicas) * p.ipusPerReplica;
    if (p.replicas & (p.replicas - 1))
        cfg.fail("/workload/strategy/replicas", fmt::format("expected a power of two (replicas form rings), found {}", p.replicas));
    if (needed > system.numIpus || system.numIpus % needed != 0)
        cfg.fail("/workload/strategy/replicas",
                 fmt::format("{} replicas of {} IPUs need {} IPUs and must divide the system's {}", p.replicas,
                             p.ipusPerReplica, needed, system.numIpus));
    if (p.replicas > 1)
        for (std::size_t i = 0; i < p.stages.size(); ++i)
            if (p.stages[i].ipu >= p.ipusPerReplica)
                cfg.fail(stagePtr.size() > i ? stagePtr[i] : "/workload/strategy",
                         fmt::format("with replicas, a replica's {} stages use IPUs 0 to {}, found IPU {}", p.ipusPerReplica,
                                     p.ipusPerReplica - 1, p.stages[i].ipu));
    if (p.replicatedTensorSharding && p.replicas == 1)
        cfg.fail("/workload/strategy/replicated_tensor_sharding", "needs more than one replica");
    return p;
}

} // namespace ipusim
