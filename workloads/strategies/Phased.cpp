// SPDX-License-Identifier: MIT
// Phased execution: stages run as phases taking turns on IPU 0 (serial) or IPUs 0 and 1
// (parallel); nothing of a phase stays on chip between its turns.
#include "workloads/strategies/StrategyParts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>

namespace ipusim {
namespace {

/** A phase's weights (and, for the update, accumulators and optimizer state) stream in from
 *  Streaming Memory, and the activations its backward pass needs go out after its forward pass
 *  and come back for it. Passes: set up the IPUs, import tensors crossing IPUs, lower each
 *  phase's fragments, then lay out the turns. */
class PhasedCompiler
{
public:
    PhasedCompiler(const ModelGraph& m, const SystemParams& system, const Placement& placement, const CompileOptions& opt)
        : m_g(m.graph), m_training(m.training), m_system(system), m_placement(placement), m_opt(opt),
          m_P(uint32_t(placement.stages.size())), m_groups(placement.parallelPhases ? 2 : 1),
          m_producer(producerStages(m.graph, placement)), m_fwdOps(forwardOps(m)), m_bwdOps(backwardOps(m)),
          m_last(placement.stageOfBlock.at(opt.out.block)), m_fwdBytes(m_P, 0), m_bwdBytes(m_P, 0), m_fwdLoad(m_P, -1),
          m_fwd(m_P, -1), m_bwdLoad(m_P, -1), m_bwd(m_P, -1), m_update(m_P, -1), m_saved(m_P)
    {
        for (uint32_t i = 0; i < m_groups; ++i) {
            m_owned.push_back(std::make_unique<IpuLowering>(m_g, system, placement, opt, i, m_owned));
            m_builders.push_back(&m_owned.back()->builder);
            m_lowerings.push_back(&m_owned.back()->lowering);
        }
    }

    CompiledSchedule compile()
    {
        importCrossings();
        for (uint32_t p = 0; p < m_P; ++p)
            lowerForward(p);
        if (m_opt.train) {
            for (uint32_t p = m_P; p-- > 0;)
                lowerBackward(p);
            for (uint32_t p = 0; p < m_P; ++p)
                lowerUpdate(p);
        }
        layOutTurns();
        Schedule sched;
        for (uint32_t i = 0; i < m_groups; ++i)
            sched.programs.push_back(m_builders[i]->finish(i));
        sched.strategy = strategyInfo();
        return accountSchedule(std::move(sched), m_system, m_opt.stopAtFirstIpuOver);
    }

private:
    uint32_t phaseOf(const Op& op) const { return m_placement.stageOfBlock.at(op.block); }
    uint32_t ipuOf(uint32_t p) const { return m_placement.stages[p].ipu; }
    bool train() const { return m_opt.train; }
    /** Gradient accumulation loops over the micro-batches of a step. */
    bool accumulate() const { return train() && m_opt.gradientAccumulation > 1; }

    std::vector<int> tensorsOf(uint32_t p, std::initializer_list<TensorRole> roles) const
    {
        std::vector<int> out;
        for (std::size_t i = 0; i < m_g.tensors.size(); ++i)
            if (m_placement.stageOfBlock.count(m_g.tensors[i].block) && m_placement.stageOfBlock.at(m_g.tensors[i].block) == p &&
                std::find(roles.begin(), roles.end(), m_g.tensors[i].role) != roles.end())
                out.push_back(int(i));
        return out;
    }

    /** Tensors crossing between phases on different IPUs arrive over IPU-Links: operands of
     *  the phases' ops, and the outputs the last phase sends to the host (a GoogLeNet's
     *  auxiliary logits, made earlier). */
    void importCrossings()
    {
        for (const auto* list : {&m_fwdOps, &m_bwdOps})
            for (std::size_t i : *list)
                importCrossingsOf(m_g.ops[i], list == &m_fwdOps ? m_fwdBytes : m_bwdBytes);
        importCrossingsOf(storeOp(m_opt.out), m_fwdBytes);
    }

    void importCrossingsOf(const Op& op, std::vector<uint64_t>& bytesFrom)
    {
        const uint32_t p = phaseOf(op);
        for (int in : op.inputs) {
            const int from = m_producer[std::size_t(in)];
            if (from < 0 || uint32_t(from) == p || ipuOf(uint32_t(from)) == ipuOf(p) || m_lowerings[ipuOf(p)]->placed(in))
                continue;
            const TensorRole role = m_g.tensor(in).role;
            if (role == TensorRole::Weight || role == TensorRole::Accumulator || role == TensorRole::Buffer)
                continue;
            m_lowerings[ipuOf(p)]->importTensor(in);
            bytesFrom[std::size_t(from)] += m_g.tensor(in).bytes();
        }
    }

    void lowerForward(uint32_t p)
    {
        ProgramBuilder& b = *m_builders[ipuOf(p)];
        GraphLowering& l = *m_lowerings[ipuOf(p)];
        m_fwdLoad[p] = int(b.beginFragment("load weights"));
        l.streamIn("phase weights load", tensorsOf(p, {TensorRole::Weight, TensorRole::Buffer}));
        b.endFragment();
        m_fwd[p] = int(b.beginFragment("forward"));
        for (std::size_t i : m_fwdOps)
            if (phaseOf(m_g.ops[i]) == p)
                l.lower(m_g.ops[i]);
        if (p == m_last && m_opt.out.mode == OutputPlan::Mode::Sum)
            l.lowerOutputSum(m_opt.out.tensors);
        if (train()) {
            std::set<int> keep;
            for (std::size_t i : m_bwdOps)
                if (phaseOf(m_g.ops[i]) == p)
                    for (int in : m_g.ops[i].inputs)
                        if ((m_g.tensor(in).role == TensorRole::Activation || m_g.tensor(in).role == TensorRole::Input) && l.placed(in))
                            keep.insert(in);
            m_saved[p].assign(keep.begin(), keep.end());
            std::vector<int> stored = m_saved[p]; // with the running statistics training updated
            for (int buffer : tensorsOf(p, {TensorRole::Buffer}))
                stored.push_back(buffer);
            l.streamOut("activations store", stored);
        }
        b.endFragment();
        if (p == m_last) {
            m_output = int(b.beginFragment("output"));
            l.lower(storeOp(m_opt.out));
            b.endFragment();
        }
    }

    void lowerBackward(uint32_t p)
    {
        ProgramBuilder& b = *m_builders[ipuOf(p)];
        GraphLowering& l = *m_lowerings[ipuOf(p)];
        std::vector<int> in = tensorsOf(p, {TensorRole::Weight, TensorRole::Accumulator});
        in.insert(in.end(), m_saved[p].begin(), m_saved[p].end());
        m_bwdLoad[p] = int(b.beginFragment("load for backward"));
        l.streamIn("phase backward load", in);
        b.endFragment();
        m_bwd[p] = int(b.beginFragment("backward"));
        for (std::size_t i : m_bwdOps)
            if (phaseOf(m_g.ops[i]) == p)
                l.lower(m_g.ops[i]);
        l.streamOut("accumulators store", tensorsOf(p, {TensorRole::Accumulator}));
        b.endFragment();
    }

    void lowerUpdate(uint32_t p)
    {
        ProgramBuilder& b = *m_builders[ipuOf(p)];
        GraphLowering& l = *m_lowerings[ipuOf(p)];
        m_update[p] = int(b.beginFragment("update"));
        l.streamIn("phase update load", tensorsOf(p, {TensorRole::Weight, TensorRole::Accumulator, TensorRole::OptimizerState}));
        l.lowerUpdate(opsOf(m_g, m_training.update, [&](const Op& op) { return phaseOf(op) == p; }), m_placement.ring(ipuOf(p)));
        l.streamOut("phase update store", tensorsOf(p, {TensorRole::Weight, TensorRole::OptimizerState}));
        b.endFragment();
    }

    void barrier()
    {
        for (auto& b : m_builders)
            m_groups > 1 ? b->externalSync() : b->sync();
    }

    /** The tensors phase `from` hands to phase `to`, when they run on different IPUs. */
    void copy(uint32_t from, uint32_t to, uint64_t bytes)
    {
        if (m_groups < 2)
            return;
        for (uint32_t i = 0; i < m_groups; ++i) {
            std::vector<IpuTransfer> send, recv;
            if (i == ipuOf(from) && ipuOf(from) != ipuOf(to) && bytes)
                send.push_back({ipuOf(to), bytes});
            if (i == ipuOf(to) && ipuOf(from) != ipuOf(to) && bytes)
                recv.push_back({ipuOf(from), bytes});
            m_builders[i]->ipuCopy("phase copy", std::move(send), std::move(recv));
        }
    }

    /** One slot per phase turn: the phase's IPU computes while (parallel) the other IPU loads
     *  the next phase; then the crossing tensors move and everyone syncs. */
    void turns(bool backward)
    {
        for (uint32_t n = 0; n < m_P; ++n) {
            const uint32_t p = backward ? m_P - 1 - n : n;
            const auto& load = backward ? m_bwdLoad : m_fwdLoad;
            const auto& work = backward ? m_bwd : m_fwd;
            ProgramBuilder& b = *m_builders[ipuOf(p)];
            if ((m_groups == 1 || n == 0) && load[p] >= 0)
                b.call(uint32_t(load[p]));
            // Micro-batches are numbered by the innermost loop (inference: each device iteration is one).
            b.call(uint32_t(work[p]), 0, accumulate() || !train());
            if (!backward && p == m_last && m_opt.out.perMicroBatch())
                b.call(uint32_t(m_output), train() ? -1 : 0, !train(), m_opt.out.period);
            const bool more = n + 1 < m_P;
            const uint32_t next = backward ? p - 1 : p + 1;
            if (m_groups > 1 && more)
                m_builders[ipuOf(next)]->call(uint32_t(load[next])); // overlaps this phase's compute
            if (m_groups > 1 && !more && !backward && train())
                b.call(uint32_t(m_bwdLoad[p]));                        // the backward starts here
            if (more)
                copy(p, next, backward ? m_bwdBytes[p] : m_fwdBytes[p]);
            barrier();
        }
    }

    void layOutTurns()
    {
        for (auto& b : m_builders)
            b->beginRepeat("device_iterations", m_opt.deviceIterations);
        if (accumulate())
            for (auto& b : m_builders)
                b->beginRepeat("gradient_accumulation", m_opt.gradientAccumulation);
        turns(false);
        if (train()) {
            // In a parallel run the last phase's backward load was issued after its forward.
            if (m_groups > 1)
                m_bwdLoad[m_last] = -1;
            turns(true);
        }
        if (accumulate())
            for (auto& b : m_builders)
                b->endRepeat();
        if (train()) {
            for (uint32_t p = 0; p < m_P; ++p)
                m_builders[ipuOf(p)]->call(uint32_t(m_update[p]));
            barrier();
        }
        for (auto& b : m_builders)
            b->endRepeat();
        if (!m_opt.out.perMicroBatch())
            m_builders[ipuOf(m_last)]->call(uint32_t(m_output));
        barrier();
    }

    StrategyInfo strategyInfo() const
    {
        StrategyInfo info;
        info.kind = "phased";
        info.schedule = m_placement.parallelPhases ? "parallel" : "serial";
        info.pipelineCycles = (train() ? 2 * m_P : m_P) * (train() ? m_opt.gradientAccumulation : 1); // phase turns per device iteration
        info.replicas = m_placement.replicas;
        info.replicatedTensorSharding = m_placement.replicatedTensorSharding;
        for (uint32_t p = 0; p < m_P; ++p)
            info.stages.push_back({ipuOf(p), m_placement.stages[p].blocks, 0, m_fwd[p], m_bwd[p]});
        return info;
    }

    const Graph& m_g;
    const TrainingOps& m_training;
    const SystemParams& m_system;
    const Placement& m_placement;
    const CompileOptions& m_opt;
    const uint32_t m_P, m_groups;
    const std::vector<int> m_producer;
    const std::vector<std::size_t> m_fwdOps, m_bwdOps;
    const uint32_t m_last;
    std::vector<uint64_t> m_fwdBytes, m_bwdBytes;
    std::vector<int> m_fwdLoad, m_fwd, m_bwdLoad, m_bwd, m_update;
    std::vector<std::vector<int>> m_saved;
    int m_output = -1;
    std::vector<std::unique_ptr<IpuLowering>> m_owned;
    std::vector<ProgramBuilder*> m_builders;
    std::vector<GraphLowering*> m_lowerings;
};

/** Each phase streams in its own blocks' weights and buffers: one read in another phase (a tied
 *  weight, a mask every layer reads) is not there. */
void expectModelTensorsInTheirPhase(const Graph& g, const Placement& placement, const Diagnostics& diag)
{
    for (const Op& op : g.ops)
        for (int in : op.inputs) {
            const TensorDesc& d = g.tensor(in);
            const bool model = d.role == TensorRole::Weight || d.role == TensorRole::Accumulator || d.role == TensorRole::Buffer;
            if (model && !d.block.empty() && placement.stageOfBlock.at(d.block) != placement.stageOfBlock.at(op.block))
                diag.fail("/workload/strategy",
                          fmt::format("block \"{}\" (phase {}) reads {} \"{}\" of block \"{}\" (phase {}): expected weights and buffers "
                                      "read only in their own block's phase (each phase streams in its own; put the blocks in one phase)",
                                      op.block, placement.stageOfBlock.at(op.block), d.role == TensorRole::Buffer ? "buffer" : "weight",
                                      d.name, d.block, placement.stageOfBlock.at(d.block)));
        }
}

} // namespace

CompiledSchedule compilePhased(const ModelGraph& m, const SystemParams& system, const Placement& placement,
                               const CompileOptions& opt, const Diagnostics& diag)
{
    expectModelTensorsInTheirPhase(m.graph, placement, diag);
    return PhasedCompiler(m, system, placement, opt).compile();
}

} // namespace ipusim
