// SPDX-License-Identifier: MIT
#include "workloads/strategies/Placement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace ipusim {
namespace {

/** Stages as the user wrote them, each with the JSON path its errors name. */
struct UserStages
{
    std::vector<Stage> stages;
    std::vector<std::string> pointers;
    void add(Stage stage, std::string pointer)
    {
        stages.push_back(std::move(stage));
        pointers.push_back(std::move(pointer));
    }
};

class PlacementChecker
{
public:
    PlacementChecker(const std::vector<std::string>& blocks, const SystemParams& system, const Diagnostics& diag)
        : m_blocks(blocks), m_system(system), m_diag(diag)
    {
    }

    void knownBlock(const std::string& b, const std::string& ptr) const
    {
        if (std::find(m_blocks.begin(), m_blocks.end(), b) == m_blocks.end())
            m_diag.fail(ptr, fmt::format("unknown block \"{}\" (the model's blocks: {})", b, fmt::join(m_blocks, ", ")));
    }
    void systemIpu(uint32_t ipu, const std::string& ptr) const
    {
        if (ipu >= m_system.numIpus)
            m_diag.fail(ptr, fmt::format("expected an IPU of the system (0 to {}), found {}", m_system.numIpus - 1, ipu));
    }

    /** The three ways of placing blocks: one stage for a single IPU, explicit stages, one IPU
     *  per block, or by default one block per IPU in model order. */
    UserStages userStages(const StrategySpec& s) const
    {
        UserStages out;
        if (s.kind == StrategyKind::Single)
            out.add({m_blocks, 0}, "/workload/strategy");
        else if (s.stages)
            fromStages(s, out);
        else if (s.blockIpus)
            fromBlockIpus(*s.blockIpus, out);
        else {
            // As PipelinedExecution("B1", "B2", ...) does (for phases: one block per phase).
            if (m_blocks.size() > m_system.numIpus && s.kind != StrategyKind::Phased)
                m_diag.fail("/workload/strategy", fmt::format("{} blocks need {} IPUs, the system has {}: give \"stages\"",
                                                              m_blocks.size(), m_blocks.size(), m_system.numIpus));
            for (uint32_t i = 0; i < m_blocks.size(); ++i)
                out.add({{m_blocks[i]}, i}, "/workload/strategy");
        }
        return out;
    }

    /** Every block exactly once, in model order. */
    void modelOrder(const UserStages& u) const
    {
        auto indexOf = [&](const std::string& b) { return std::find(m_blocks.begin(), m_blocks.end(), b) - m_blocks.begin(); };
        std::set<std::string> seen;
        long last = -1;
        for (std::size_t i = 0; i < u.stages.size(); ++i)
            for (const auto& b : u.stages[i].blocks) {
                if (!seen.insert(b).second)
                    m_diag.fail(u.pointers[i], fmt::format("block \"{}\" is in more than one stage", b));
                if (indexOf(b) < last)
                    m_diag.fail(u.pointers[i],
                                fmt::format("block \"{}\" comes before the blocks of an earlier stage: stages follow the model's order ({})",
                                            b, fmt::join(m_blocks, ", ")));
                last = indexOf(b);
            }
        for (const auto& b : m_blocks)
            if (!seen.count(b))
                m_diag.fail("/workload/strategy", fmt::format("block \"{}\" is in no stage", b));
    }

    /** Each stage is a phase; phases take turns on IPU 0 (serial) or IPUs 0 and 1 (parallel). */
    void phases(const UserStages& u, Placement& p) const
    {
        if (p.parallelPhases && m_system.numIpus < 2)
            m_diag.fail("/workload/strategy/phased", "expected \"serial\": parallel phases need 2 IPUs, the system has 1");
        if (p.parallelPhases && m_system.topology.links(0, 1) == 0)
            m_diag.fail("/workload/strategy/phased", "parallel phases need an IPU-Link between IPUs 0 and 1");
        for (std::size_t i = 0; i < u.stages.size(); ++i) {
            Stage st = u.stages[i];
            st.ipu = p.parallelPhases ? uint32_t(i % 2) : 0;
            p.stages.push_back(st);
        }
    }

    /** Consecutive stages on one IPU merge. An IPU may come back later in the pipeline (BERT's
     *  heads share IPU 0 with the embedding whose weights they reuse); its stages then take
     *  turns on it within each pipeline cycle. */
    void mergeStages(const UserStages& u, Placement& p) const
    {
        for (std::size_t i = 0; i < u.stages.size(); ++i) {
            const Stage& st = u.stages[i];
            if (!p.stages.empty() && p.stages.back().ipu == st.ipu) {
                for (const auto& b : st.blocks)
                    p.stages.back().blocks.push_back(b);
                continue;
            }
            if (!p.stages.empty() && m_system.topology.links(p.stages.back().ipu, st.ipu) == 0)
                m_diag.fail(u.pointers[i],
                            fmt::format("IPU {} has no IPU-Link to IPU {} of the previous stage", st.ipu, p.stages.back().ipu));
            p.stages.push_back(st);
        }
    }

    /** Replicas: whole copies of the model on consecutive groups of IPUs, joined in rings. */
    void replicas(const UserStages& u, Placement& p) const
    {
        p.ipusPerReplica = p.kind == StrategyKind::Phased ? (p.parallelPhases ? 2 : 1) : uint32_t(p.ipus().size());
        const uint64_t needed = uint64_t(p.replicas) * p.ipusPerReplica;
        if (p.replicas & (p.replicas - 1))
            m_diag.fail("/workload/strategy/replicas", fmt::format("expected a power of two (replicas form rings), found {}", p.replicas));
        if (needed > m_system.numIpus || m_system.numIpus % needed != 0)
            m_diag.fail("/workload/strategy/replicas",
                        fmt::format("{} replicas of {} IPUs need {} IPUs and must divide the system's {}", p.replicas,
                                    p.ipusPerReplica, needed, m_system.numIpus));
        if (p.replicas > 1)
            for (std::size_t i = 0; i < p.stages.size(); ++i)
                if (p.stages[i].ipu >= p.ipusPerReplica)
                    m_diag.fail(u.pointers.size() > i ? u.pointers[i] : "/workload/strategy",
                                fmt::format("with replicas, a replica's {} stages use IPUs 0 to {}, found IPU {}", p.ipusPerReplica,
                                            p.ipusPerReplica - 1, p.stages[i].ipu));
        if (p.replicatedTensorSharding && p.replicas == 1)
            m_diag.fail("/workload/strategy/replicated_tensor_sharding", "needs more than one replica");
    }

private:
    void fromStages(const StrategySpec& s, UserStages& out) const
    {
        if (s.blockIpus)
            m_diag.fail("/workload/strategy", "expected \"stages\" or \"block_ipus\", not both");
        for (std::size_t i = 0; i < s.stages->size(); ++i) {
            const Stage& st = (*s.stages)[i];
            const std::string ptr = fmt::format("/workload/strategy/stages/{}", i);
            for (std::size_t j = 0; j < st.blocks.size(); ++j)
                knownBlock(st.blocks[j], fmt::format("{}/blocks/{}", ptr, j));
            systemIpu(st.ipu, ptr + "/ipu");
            out.add(st, ptr);
        }
    }
    void fromBlockIpus(const std::map<std::string, uint32_t>& blockIpus, UserStages& out) const
    {
        for (const auto& [b, ipu] : blockIpus) {
            knownBlock(b, "/workload/strategy/block_ipus/" + b);
            systemIpu(ipu, "/workload/strategy/block_ipus/" + b);
        }
        for (const auto& b : m_blocks) {
            if (!blockIpus.count(b))
                m_diag.fail("/workload/strategy/block_ipus", fmt::format("block \"{}\" has no IPU", b));
            out.add({{b}, blockIpus.at(b)}, "/workload/strategy/block_ipus/" + b);
        }
    }

    const std::vector<std::string>& m_blocks;
    const SystemParams& m_system;
    const Diagnostics& m_diag;
};

} // namespace

Placement resolvePlacement(const StrategySpec& spec, const std::vector<std::string>& blocks, const SystemParams& system,
                           const Diagnostics& diag)
{
    const PlacementChecker check(blocks, system, diag);
    Placement p;
    p.kind = spec.kind;
    p.schedule = spec.schedule;
    p.parallelPhases = spec.parallelPhases;
    p.replicas = spec.replicas;
    p.replicatedTensorSharding = spec.replicatedTensorSharding;
    const UserStages user = check.userStages(spec);
    check.modelOrder(user);
    if (p.kind == StrategyKind::Phased)
        check.phases(user, p);
    else
        check.mergeStages(user, p);
    for (uint32_t i = 0; i < p.stages.size(); ++i)
        for (const auto& b : p.stages[i].blocks)
            p.stageOfBlock[b] = i;
    check.replicas(user, p);
    return p;
}

} // namespace ipusim
