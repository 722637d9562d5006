// SPDX-License-Identifier: MIT
// Stages on IPUs, pipelined (grouped, interleaved, sequential) or sharded (one at a time).
#include "workloads/lowering/Codelets.hpp"
#include "workloads/lowering/OpPlan.hpp"
#include "workloads/strategies/Pipeline.hpp"
#include "workloads/strategies/StrategyParts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>

namespace ipusim {
namespace {

/** Compiles a placed model in passes: set up one lowering per IPU, import the tensors crossing
 *  stages, then IPU by IPU lower its stages' fragments (forward, output, stash, backward) and
 *  its weight update, check its Streaming Memory, compose its part of the pipeline and account
 *  its memory. */
class PipelineCompiler
{
public:
    PipelineCompiler(const ModelGraph& m, const SystemParams& system, const Placement& placement, const CompileOptions& opt,
                     const Diagnostics& diag)
        : m_model(m), m_g(m.graph), m_system(system), m_placement(placement), m_opt(opt), m_diag(diag),
          m_K(uint32_t(placement.stages.size())), m_ipus(placement.ipus()), m_producer(producerStages(m.graph, placement)),
          m_producerBlock(producerBlocks(m.graph)),
          m_fwdOps(forwardOps(m)), m_bwdOps(backwardOps(m)), m_frags(m_K)
    {
    }

    CompiledSchedule compile()
    {
        setUpIpus();
        importCrossings(m_fwdOps, true);
        // The outputs go to the host from the output block's stage: one made earlier (a
        // GoogLeNet's auxiliary logits) crosses to it as an activation does.
        importCrossingsOf(storeOp(m_opt.out), true);
        if (m_opt.train)
            importCrossings(m_bwdOps, false);
        const PipelineActivity activity = pipelineActivity(m_placement.kind, m_placement.schedule, m_K,
                                                           m_opt.train ? m_opt.gradientAccumulation : m_opt.deviceIterations, m_opt.train);
        // IPU by IPU: each program is finished and its memory accounted before the next IPU's
        // stages are lowered, so a model that does not fit can stop at the first IPU over.
        CompiledScheduleBuilder out(m_system, m_opt.stopAtFirstIpuOver);
        for (uint32_t slot = 0; slot < m_ipus.size(); ++slot) {
            if (out.stopped())
                out.notCompiled(m_ipus[slot]);
            else
                out.add(compileIpu(slot, activity));
        }
        CompiledSchedule s = out.finish();
        s.schedule.strategy = strategyInfo(activity);
        return s;
    }

private:
    uint32_t stageOf(const Op& op) const { return m_placement.stageOfBlock.at(op.block); }
    GraphLowering& loweringOf(uint32_t stage) { return *m_lowerings[m_frags[stage].builder]; }
    ProgramBuilder& builderOf(uint32_t stage) { return *m_builders[m_frags[stage].builder]; }

    /** One builder and lowering per IPU; an IPU's stages share its memory. */
    void setUpIpus()
    {
        for (uint32_t ipu : m_ipus) {
            m_owned.push_back(std::make_unique<IpuLowering>(m_g, m_system, m_placement, m_opt, ipu, m_owned));
            m_builders.push_back(&m_owned.back()->builder);
            m_lowerings.push_back(&m_owned.back()->lowering);
            std::vector<std::string> blocks;
            for (const auto& st : m_placement.stages)
                if (st.ipu == ipu)
                    blocks.insert(blocks.end(), st.blocks.begin(), st.blocks.end());
            m_lowerings.back()->placePersistent(blocks);
        }
        std::vector<uint32_t> stagesOnIpu(m_ipus.size(), 0);
        for (uint32_t k = 0; k < m_K; ++k) {
            m_frags[k].ipu = m_placement.stages[k].ipu;
            m_frags[k].builder = uint32_t(std::find(m_ipus.begin(), m_ipus.end(), m_frags[k].ipu) - m_ipus.begin());
            ++stagesOnIpu[m_frags[k].builder];
        }
        for (uint32_t k = 0; k < m_K; ++k)
            m_sharesIpu.push_back(stagesOnIpu[m_frags[k].builder] > 1);
    }

    /** Fragment names say the stage when an IPU runs more than one. */
    std::string name(const char* what, uint32_t k) const
    {
        return m_sharesIpu[k] ? fmt::format("{} (stage {})", what, k) : std::string(what);
    }

    /** Tensors crossing stages arrive in receive buffers. Only neighbouring stages exchange, so
     *  a tensor for a later stage is relayed through each stage between (PopART's pipelining
     *  makes IPU copies contiguous the same way): every stage on the way receives it and sends it
     *  on. Weights stay with their block: as PopART, a weight read on another IPU is an error
     *  (tied weights share an IPU). A buffer (not learned) is copied forward each micro-batch
     *  from its block's stage to the later stages that read it, as PopART copies a constant. */
    void importCrossings(const std::vector<std::size_t>& ops, bool forward)
    {
        for (std::size_t i : ops)
            importCrossingsOf(m_g.ops[i], forward);
    }

    void importCrossingsOf(const Op& op, bool forward)
    {
        const uint32_t k = stageOf(op);
        for (int in : op.inputs) {
            const TensorDesc& d = m_g.tensor(in);
            if (d.role == TensorRole::Weight || d.role == TensorRole::Accumulator || d.role == TensorRole::Buffer) {
                if (!loweringOf(k).placed(in))
                    importModelTensor(op, in, forward);
                continue;
            }
            const int from = m_producer[std::size_t(in)];
            if (from < 0 || uint32_t(from) == k)
                continue;
            const uint32_t f = uint32_t(from);
            if (m_frags[f].builder == m_frags[k].builder)
                m_diag.fail("/workload/strategy",
                            fmt::format("block \"{}\" (stage {}) reads \"{}\" of block \"{}\" (stage {}) on the same IPU {}: "
                                        "expected a tensor kept on its IPU for a later stage only within one stage "
                                        "(put the blocks in one stage, or the reader on another IPU)",
                                        op.block, k, d.name, m_producerBlock[std::size_t(in)], f, m_frags[k].ipu));
            if (f < k) {
                for (uint32_t s = f + 1; s <= k; ++s)
                    receive(in, f, s, m_frags[s - 1].fwdBytesToNext);
            } else if (!forward) {
                for (uint32_t s = f; s-- > k;)
                    receive(in, f, s, m_frags[s + 1].bwdBytesToPrevious);
            } else {
                m_diag.fail("/workload/strategy",
                            fmt::format("block \"{}\" (stage {}) reads \"{}\" of block \"{}\" in the later stage {} going forward: "
                                        "expected blocks in the order the model runs them",
                                        op.block, k, d.name, m_producerBlock[std::size_t(in)], f));
            }
        }
    }

    /** Model tensor `in` of another IPU's block, read by `op`: a buffer relayed forward from
     *  its block's stage; a weight, which PopART's pipelining does not copy between IPUs, an
     *  error naming the way out. */
    void importModelTensor(const Op& op, int in, bool forward)
    {
        const TensorDesc& d = m_g.tensor(in);
        const uint32_t k = stageOf(op), owner = m_placement.stageOfBlock.at(d.block);
        if (d.role != TensorRole::Buffer)
            m_diag.fail("/workload/strategy",
                        fmt::format("block \"{}\" (IPU {}) uses weight \"{}\" of block \"{}\" (IPU {}): expected blocks sharing a "
                                    "learned weight on one IPU (PopART's pipelining copies no weight between IPUs; tied weights: "
                                    "put both blocks' stages on one IPU, e.g. the embedding and the head on IPU 0)",
                                    op.block, m_frags[k].ipu, d.name, d.block, m_frags[owner].ipu));
        if (!forward || owner > k)
            m_diag.fail("/workload/strategy",
                        fmt::format("block \"{}\" (stage {}) reads buffer \"{}\" of block \"{}\" (stage {}){}: expected a buffer "
                                    "read on another IPU only by later stages going forward",
                                    op.block, k, d.name, d.block, owner, forward ? "" : " in the backward pass"));
        for (uint32_t s = owner + 1; s <= k; ++s)
            receive(in, owner, s, m_frags[s - 1].fwdBytesToNext);
    }

    /** Stage `s` receives `tensor` (made by stage `from`) from its neighbour, who sends `sent`
     *  more bytes: once per stage, even when the stage's IPU received it for an earlier stage
     *  (the copy happens again; the IPU keeps one receive buffer for it). The producer's own
     *  IPU needs no buffer. */
    void receive(int tensor, uint32_t from, uint32_t s, uint64_t& sent)
    {
        if (!m_received.insert({tensor, s}).second)
            return;
        sent += m_g.tensor(tensor).bytes();
        GraphLowering& l = loweringOf(s);
        if (m_frags[s].builder != m_frags[from].builder && !l.placed(tensor))
            l.importTensor(tensor);
    }

    /** The program of the IPU whose builder is `slot`: its stages, its weight update, its
     *  Streaming Memory checked, its pipeline composed. */
    Program compileIpu(uint32_t slot, const PipelineActivity& activity)
    {
        for (uint32_t k = 0; k < m_K; ++k)
            if (m_frags[k].builder == slot)
                lowerStage(k);
        if (m_opt.train)
            lowerUpdate(slot);
        checkStreamingMemory(slot);
        composeIpuProgram(*m_builders[slot], slot, m_frags, activity, m_opt.train, m_opt.deviceIterations);
        return m_builders[slot]->finish(m_ipus[slot]);
    }

    void lowerStage(uint32_t k)
    {
        ProgramBuilder& b = builderOf(k);
        GraphLowering& l = loweringOf(k);
        const uint32_t last = m_placement.stageOfBlock.at(m_opt.out.block);
        m_frags[k].fwd = int(b.beginFragment(name("forward", k)));
        for (std::size_t i : m_fwdOps)
            if (stageOf(m_g.ops[i]) == k)
                l.lower(m_g.ops[i]);
        if (k == last && m_opt.out.mode == OutputPlan::Mode::Sum)
            l.lowerOutputSum(m_opt.out.tensors);
        b.endFragment();
        if (k == last) {
            m_frags[k].output = int(b.beginFragment("output"));
            l.lower(storeOp(m_opt.out));
            b.endFragment();
            m_frags[k].outputPerMicroBatch = m_opt.out.perMicroBatch();
            m_frags[k].outputPeriod = m_opt.out.period;
        }
        if (!m_opt.train)
            return;
        // Activations the backward pass needs wait in a stash FIFO between the passes.
        const uint32_t depth = stashDepth(m_placement.kind, m_placement.schedule, m_K, k, true);
        const bool recomputeHere = m_opt.recompute && depth > 0;
        if (depth > 0)
            lowerStash(k, depth, stashedTensors(k, recomputeHere));
        m_frags[k].bwd = int(b.beginFragment(name("backward", k)));
        lowerBackward(l, m_model, m_placement.stages[k].blocks, recomputeHere);
        b.endFragment();
    }

    /** With recomputation only each block's inputs (its checkpoints) wait for the backward
     *  pass; otherwise every activation the backward pass reads. */
    std::set<int> stashedTensors(uint32_t k, bool recompute)
    {
        GraphLowering& l = loweringOf(k);
        std::set<int> keep;
        if (recompute) {
            for (std::size_t i : m_fwdOps)
                if (stageOf(m_g.ops[i]) == k && recomputable(m_g.ops[i]))
                    for (int in : m_g.ops[i].inputs) {
                        const TensorDesc& d = m_g.tensor(in);
                        if (d.role == TensorRole::Input ||
                            (d.role == TensorRole::Activation && m_producerBlock[std::size_t(in)] != m_g.ops[i].block))
                            keep.insert(in);
                    }
            return keep;
        }
        for (std::size_t i : m_bwdOps)
            if (stageOf(m_g.ops[i]) == k)
                for (int in : m_g.ops[i].inputs) {
                    const auto role = m_g.tensor(in).role;
                    if ((role == TensorRole::Activation || role == TensorRole::Input) && l.placed(in))
                        keep.insert(in);
                }
        return keep;
    }

    /** The stash FIFO (depth copies of the kept tensors) and the copies into and out of it. */
    void lowerStash(uint32_t k, uint32_t depth, const std::set<int>& keep)
    {
        ProgramBuilder& b = builderOf(k);
        GraphLowering& l = loweringOf(k);
        const uint32_t T = b.tiles();
        TileVector stashed(T, 0);
        for (int in : keep)
            if (l.placed(in))
                for (const auto& r : l.placement(in).runs())
                    for (uint32_t tile = r.first; tile < r.end(); ++tile)
                        stashed[tile] += r.value;
        TileVector fifo(stashed);
        TileCalls copies(T);
        for (uint32_t tile = 0; tile < T; ++tile) {
            fifo[tile] *= depth;
            if (stashed[tile])
                copies.add(tile, calls::copy(stashed[tile], bytesOf(m_opt.activations)));
        }
        std::vector<Codelet> codelets;
        const TileVector copyCycles = pricedCycles(m_system.ipu, copies, codelets);
        b.allocate(fmt::format("{} FIFO (depth {})", name("stash", k), depth), "stash", fifo, true);
        m_frags[k].stash = int(b.beginFragment(name("stash", k)));
        b.sync();
        b.compute("stash", copyCycles, codelets);
        b.endFragment();
        m_frags[k].restore = int(b.beginFragment(name("restore", k)));
        b.sync();
        b.compute("restore", copyCycles, codelets);
        b.endFragment();
    }

    /** One update per IPU, for the weights of all its stages. */
    void lowerUpdate(std::size_t slot)
    {
        uint32_t first = 0;
        while (m_frags[first].builder != slot)
            ++first;
        ProgramBuilder& b = *m_builders[slot];
        m_frags[first].update = int(b.beginFragment("update"));
        m_lowerings[slot]->lowerUpdate(opsOf(m_g, m_model.training.update, [&](const Op& op) { return m_frags[stageOf(op)].builder == slot; }),
                                       m_placement.ring(m_ipus[slot]));
        b.endFragment();
    }

    void checkStreamingMemory(std::size_t slot) const
    {
        if (m_lowerings[slot]->offloadedBytes() > m_system.streamingMemory.bytesPerIpu)
            m_diag.fail("/workload/offload_optimizer",
                        fmt::format("IPU {} needs {} bytes of Streaming Memory, it has {}", m_ipus[slot],
                                    m_lowerings[slot]->offloadedBytes(), m_system.streamingMemory.bytesPerIpu));
    }

    StrategyInfo strategyInfo(const PipelineActivity& activity) const
    {
        StrategyInfo info;
        info.kind = m_placement.kind == StrategyKind::Pipelined ? "pipelined" : "sharded";
        info.schedule = m_placement.kind == StrategyKind::Sharded                ? "one stage at a time"
                        : m_placement.schedule == PipelineSchedule::Grouped     ? "grouped"
                        : m_placement.schedule == PipelineSchedule::Interleaved ? "interleaved" : "sequential";
        info.pipelineCycles = activity.cycles() * activity.repeats;
        info.replicas = m_placement.replicas;
        info.replicatedTensorSharding = m_placement.replicatedTensorSharding;
        for (uint32_t k = 0; k < m_K; ++k)
            info.stages.push_back({m_placement.stages[k].ipu, m_placement.stages[k].blocks,
                                   stashDepth(m_placement.kind, m_placement.schedule, m_K, k, m_opt.train), m_frags[k].fwd,
                                   m_frags[k].bwd});
        return info;
    }

    const ModelGraph& m_model;
    const Graph& m_g;
    const SystemParams& m_system;
    const Placement& m_placement;
    const CompileOptions& m_opt;
    const Diagnostics& m_diag;
    const uint32_t m_K;
    const std::vector<uint32_t> m_ipus;
    const std::vector<int> m_producer;
    const std::vector<std::string> m_producerBlock;
    std::set<std::pair<int, uint32_t>> m_received; // (tensor, stage) pairs relayed or received
    const std::vector<std::size_t> m_fwdOps, m_bwdOps;
    std::vector<StageFragments> m_frags;
    std::vector<std::unique_ptr<IpuLowering>> m_owned;
    std::vector<ProgramBuilder*> m_builders;
    std::vector<GraphLowering*> m_lowerings;
    std::vector<bool> m_sharesIpu;
};

} // namespace

CompiledSchedule compilePipelined(const ModelGraph& m, const SystemParams& system, const Placement& placement,
                                  const CompileOptions& opt, const Diagnostics& diag)
{
    return PipelineCompiler(m, system, placement, opt, diag).compile();
}

} // namespace ipusim
