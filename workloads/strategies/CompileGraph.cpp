// SPDX-License-Identifier: MIT
#include "workloads/strategies/CompileGraph.hpp"

#include "models/timing/VertexCosts.hpp"
#include "workloads/lowering/GraphLowering.hpp"
#include "workloads/strategies/Pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <set>

namespace ipusim {
namespace {

std::vector<const Op*> opsOf(const Graph& g, const std::vector<std::size_t>& indices, const std::function<bool(const Op&)>& keep)
{
    std::vector<const Op*> out;
    for (std::size_t i : indices)
        if (keep(g.ops[i]))
            out.push_back(&g.ops[i]);
    return out;
}

/** Forward ops that recomputation runs again: not host loads (the data is kept) or losses. */
bool recomputable(const Op& op)
{
    return op.kind != OpKind::HostLoad && op.kind != OpKind::SoftmaxCrossEntropy;
}

Op storeOp(const OutputPlan& out)
{
    Op op{"host.store", OpKind::HostStore, out.tensors, {}, {}, {}, 1, 1, true, out.block};
    return op;
}

/** The block whose op first produces each tensor ("" for weights, state and inputs no op makes). */
std::vector<std::string> producerBlocks(const Graph& g)
{
    std::vector<std::string> producer(g.tensors.size());
    std::vector<bool> seen(g.tensors.size(), false);
    for (const auto& op : g.ops)
        for (int o : op.outputs)
            if (!seen[std::size_t(o)]) {
                seen[std::size_t(o)] = true;
                producer[std::size_t(o)] = op.block;
            }
    return producer;
}

/** The backward pass of `blocks` (in model order), block by block from the last: with
 *  recomputation, each block's forward ops run again from its kept inputs (its checkpoints)
 *  just before its backward ops, so only one block's activations are live at a time. Each
 *  block's gradient accumulations follow its backward ops. */
void lowerBackward(GraphLowering& l, const ModelGraph& m, const std::vector<std::string>& blocks, bool recompute)
{
    const Graph& g = m.graph;
    for (std::size_t b = blocks.size(); b-- > 0;) {
        const std::string& block = blocks[b];
        if (recompute)
            for (std::size_t i = 0; i < m.forwardOps; ++i)
                if (g.ops[i].block == block && recomputable(g.ops[i]))
                    l.lower(g.ops[i]);
        for (const auto* list : {&m.training.backward, &m.training.accumulate})
            for (std::size_t i : *list)
                if (g.ops[i].block == block)
                    l.lower(g.ops[i]);
    }
}

IpuParams computeTilesOf(const SystemParams& system, const CompileOptions& opt, uint32_t ipu)
{
    IpuParams p = system.ipu;
    p.tiles -= opt.ioTiles;
    if (ipu < opt.availableMemoryProportion.size())
        p.availableMemoryProportion = opt.availableMemoryProportion[ipu];
    return p;
}

/** One IPU's program builder and lowering, set up alike by every strategy. */
struct IpuLowering
{
    IpuLowering(const Graph& g, const SystemParams& system, const Placement& placement, const CompileOptions& opt, uint32_t ipu)
        : params(computeTilesOf(system, opt, ipu)), builder(params), lowering(g, builder)
    {
        builder.setOutlineRule(opt.outline);
        lowering.setIoTiles(params.tiles, opt.ioTiles);
        lowering.setReplication(placement.replicas, placement.replicatedTensorSharding);
        lowering.setOffloadOptimizer(opt.offloadOptimizer);
    }
    IpuParams params; // the builder keeps a reference
    ProgramBuilder builder;
    GraphLowering lowering;
};

/** The stage (or phase) whose op first produces each tensor; -1 for weights, state and inputs. */
std::vector<int> producerStages(const Graph& g, const Placement& placement)
{
    std::vector<int> stage;
    for (const auto& block : producerBlocks(g))
        stage.push_back(block.empty() ? -1 : int(placement.stageOfBlock.at(block)));
    return stage;
}

Schedule singleIpu(const ModelGraph& m, const SystemParams& system, const Placement& placement, const CompileOptions& opt)
{
    // Fragments first (a micro-batch, the weight update, the outputs), then the loops that call them.
    const Graph& g = m.graph;
    const bool train = opt.train;
    const uint64_t G = opt.gradientAccumulation, D = opt.deviceIterations;
    IpuLowering one(g, system, placement, opt, 0);
    ProgramBuilder& pb = one.builder;
    GraphLowering& lowering = one.lowering;
    lowering.placePersistent();
    const uint32_t microBatch = pb.beginFragment("micro-batch");
    for (std::size_t i = 0; i < m.forwardOps; ++i)
        lowering.lower(g.ops[i]);
    if (train)
        lowerBackward(lowering, m, g.blocks, opt.recompute);
    if (opt.out.mode == OutputPlan::Mode::Sum)
        lowering.lowerOutputSum(opt.out.tensors);
    pb.endFragment();
    int update = -1;
    if (train) {
        update = int(pb.beginFragment("update"));
        lowering.lowerUpdate(opsOf(g, m.training.update, [](const Op&) { return true; }), placement.ring(0));
        pb.endFragment();
    }
    const uint32_t output = pb.beginFragment("output");
    lowering.lower(storeOp(opt.out));
    pb.endFragment();

    pb.beginRepeat("device_iterations", D);
    if (train && G > 1)
        pb.beginRepeat("gradient_accumulation", G);
    pb.call(microBatch, 0, train && G > 1);
    if (opt.out.perMicroBatch())
        pb.call(output, -1, false, opt.out.period);
    if (train && G > 1)
        pb.endRepeat();
    if (update >= 0)
        pb.call(uint32_t(update));
    pb.endRepeat();
    if (!opt.out.perMicroBatch())
        pb.call(output);
    Schedule s;
    s.programs.push_back(pb.finish(0));
    if (placement.replicas > 1) {
        StrategyInfo info;
        info.kind = "single";
        info.schedule = "-";
        info.replicas = placement.replicas;
        info.replicatedTensorSharding = placement.replicatedTensorSharding;
        info.stages.push_back({0, g.blocks, 0, -1, -1});
        s.strategy = info;
    }
    return s;
}

Schedule pipelined(const Diagnostics& diag, const ModelGraph& m, const SystemParams& system, const Placement& placement,
                   const CompileOptions& opt)
{
    const Graph& g = m.graph;
    const bool train = opt.train;
    const uint64_t G = opt.gradientAccumulation, D = opt.deviceIterations;
    const uint32_t K = uint32_t(placement.stages.size());
    const std::vector<uint32_t> ipus = placement.ipus();
    auto builderOf = [&](uint32_t stage) {
        return uint32_t(std::find(ipus.begin(), ipus.end(), placement.stages[stage].ipu) - ipus.begin());
    };
    auto stageOf = [&](const Op& op) { return placement.stageOfBlock.at(op.block); };
    const std::vector<int> producer = producerStages(g, placement);

    // One builder and lowering per IPU; an IPU's stages share its memory.
    std::vector<std::unique_ptr<IpuLowering>> owned;
    std::vector<ProgramBuilder*> builders;
    std::vector<GraphLowering*> lowerings;
    for (uint32_t ipu : ipus) {
        owned.push_back(std::make_unique<IpuLowering>(g, system, placement, opt, ipu));
        builders.push_back(&owned.back()->builder);
        lowerings.push_back(&owned.back()->lowering);
        std::vector<std::string> blocks;
        for (const auto& st : placement.stages)
            if (st.ipu == ipu)
                blocks.insert(blocks.end(), st.blocks.begin(), st.blocks.end());
        lowerings.back()->placePersistent(blocks);
    }
    std::vector<StageFragments> frags(K);
    std::vector<uint32_t> stagesOnIpu(ipus.size(), 0);
    for (uint32_t k = 0; k < K; ++k) {
        frags[k].ipu = placement.stages[k].ipu;
        frags[k].builder = builderOf(k);
        ++stagesOnIpu[frags[k].builder];
    }
    // Fragment names say the stage when an IPU runs more than one.
    auto name = [&](const char* what, uint32_t k) {
        return stagesOnIpu[frags[k].builder] > 1 ? fmt::format("{} (stage {})", what, k) : std::string(what);
    };
    // Tensors crossing stages arrive in receive buffers; only neighbouring stages exchange.
    // Weights stay with their block: a block using another block's weights (tied weights)
    // must share its IPU.
    auto imports = [&](const std::vector<std::size_t>& ops, bool forward) {
        for (std::size_t i : ops) {
            const Op& op = g.ops[i];
            const uint32_t k = stageOf(op);
            GraphLowering& l = *lowerings[frags[k].builder];
            for (int in : op.inputs) {
                const TensorDesc& d = g.tensor(in);
                if (d.role == TensorRole::Weight || d.role == TensorRole::Accumulator) {
                    if (!l.placed(in))
                        diag.fail("/workload/strategy",
                                 fmt::format("block \"{}\" uses weight \"{}\" of block \"{}\", which is on another IPU: "
                                             "blocks sharing weights must be on one IPU",
                                             op.block, d.name, d.block));
                    continue;
                }
                const int from = producer[std::size_t(in)];
                if (from < 0 || uint32_t(from) == k || l.placed(in))
                    continue;
                if ((forward && uint32_t(from) + 1 != k) || (!forward && uint32_t(from) != k + 1))
                    diag.fail("/workload/strategy", fmt::format("tensor \"{}\" would skip a stage (stage {} to stage {}): "
                                                               "only neighbouring stages exchange tensors",
                                                               d.name, from, k));
                l.importTensor(in);
                (forward ? frags[std::size_t(from)].fwdBytesToNext : frags[std::size_t(from)].bwdBytesToPrevious) += d.bytes();
            }
        }
    };
    std::vector<std::size_t> fwdOps, bwdOps(m.training.backward);
    for (std::size_t i = 0; i < m.forwardOps; ++i)
        fwdOps.push_back(i);
    bwdOps.insert(bwdOps.end(), m.training.accumulate.begin(), m.training.accumulate.end());
    imports(fwdOps, true);
    if (train)
        imports(bwdOps, false);

    const uint32_t last = placement.stageOfBlock.at(opt.out.block);
    const std::vector<std::string> producedIn = producerBlocks(g);
    for (uint32_t k = 0; k < K; ++k) {
        ProgramBuilder& b = *builders[frags[k].builder];
        GraphLowering& l = *lowerings[frags[k].builder];
        frags[k].fwd = int(b.beginFragment(name("forward", k)));
        for (std::size_t i : fwdOps)
            if (stageOf(g.ops[i]) == k)
                l.lower(g.ops[i]);
        if (k == last && opt.out.mode == OutputPlan::Mode::Sum)
            l.lowerOutputSum(opt.out.tensors);
        b.endFragment();
        if (k == last) {
            frags[k].output = int(b.beginFragment("output"));
            l.lower(storeOp(opt.out));
            b.endFragment();
            frags[k].outputPerMicroBatch = opt.out.perMicroBatch();
            frags[k].outputPeriod = opt.out.period;
        }
        if (!train)
            continue;
        // Activations the backward pass needs wait in a stash FIFO between the passes.
        const uint32_t depth = stashDepth(placement.kind, placement.schedule, K, k, true);
        // With recomputation only each block's inputs (its checkpoints) wait for the backward
        // pass; otherwise every activation the backward pass reads.
        const bool recomputeHere = opt.recompute && depth > 0;
        std::set<int> keep;
        if (recomputeHere) {
            for (std::size_t i : fwdOps)
                if (stageOf(g.ops[i]) == k && recomputable(g.ops[i]))
                    for (int in : g.ops[i].inputs) {
                        const TensorDesc& d = g.tensor(in);
                        if (d.role == TensorRole::Input ||
                            (d.role == TensorRole::Activation && producedIn[std::size_t(in)] != g.ops[i].block))
                            keep.insert(in);
                    }
        } else {
            for (std::size_t i : bwdOps)
                if (stageOf(g.ops[i]) == k)
                    for (int in : g.ops[i].inputs) {
                        const auto role = g.tensor(in).role;
                        if ((role == TensorRole::Activation || role == TensorRole::Input) && l.placed(in))
                            keep.insert(in);
                    }
        }
        const uint32_t T = b.tiles();
        TileVector stashed(T, 0), copyCycles(T, 0);
        for (int in : keep)
            if (l.placed(in))
                for (uint32_t tile = 0; tile < T; ++tile)
                    stashed[tile] += l.placement(in)[tile];
        if (depth > 0) {
            TileVector fifo(stashed);
            for (uint32_t tile = 0; tile < T; ++tile) {
                fifo[tile] *= depth;
                copyCycles[tile] = stashed[tile] ? costs::copy(system.ipu, stashed[tile], bytesOf(opt.activations)) : 0;
            }
            b.allocate(fmt::format("{} FIFO (depth {})", name("stash", k), depth), "stash", fifo, true);
            frags[k].stash = int(b.beginFragment(name("stash", k)));
            b.sync();
            b.compute("stash", copyCycles, {"Copy"});
            b.endFragment();
            frags[k].restore = int(b.beginFragment(name("restore", k)));
            b.sync();
            b.compute("restore", copyCycles, {"Copy"});
            b.endFragment();
        }
        frags[k].bwd = int(b.beginFragment(name("backward", k)));
        lowerBackward(l, m, placement.stages[k].blocks, recomputeHere);
        b.endFragment();
    }
    if (train)
        for (std::size_t slot = 0; slot < ipus.size(); ++slot) {
            // One update per IPU, for the weights of all its stages.
            uint32_t first = 0;
            while (frags[first].builder != slot)
                ++first;
            ProgramBuilder& b = *builders[slot];
            frags[first].update = int(b.beginFragment("update"));
            lowerings[slot]->lowerUpdate(opsOf(g, m.training.update, [&](const Op& op) { return frags[stageOf(op)].builder == slot; }),
                                         placement.ring(ipus[slot]));
            b.endFragment();
        }
    for (std::size_t slot = 0; slot < ipus.size(); ++slot)
        if (lowerings[slot]->offloadedBytes() > system.streamingMemory.bytesPerIpu)
            diag.fail("/workload/offload_optimizer", fmt::format("IPU {} needs {} bytes of Streaming Memory, it has {}", ipus[slot],
                                                                lowerings[slot]->offloadedBytes(), system.streamingMemory.bytesPerIpu));
    const PipelineActivity activity = pipelineActivity(placement.kind, placement.schedule, K, train ? G : D, train);
    composePipeline(builders, frags, activity, train, D);

    Schedule s;
    for (std::size_t slot = 0; slot < ipus.size(); ++slot)
        s.programs.push_back(builders[slot]->finish(ipus[slot]));
    StrategyInfo info;
    info.kind = placement.kind == StrategyKind::Pipelined ? "pipelined" : "sharded";
    info.schedule = placement.kind == StrategyKind::Sharded                ? "one stage at a time"
                    : placement.schedule == PipelineSchedule::Grouped     ? "grouped"
                    : placement.schedule == PipelineSchedule::Interleaved ? "interleaved" : "sequential";
    info.pipelineCycles = activity.cycles() * activity.repeats;
    info.replicas = placement.replicas;
    info.replicatedTensorSharding = placement.replicatedTensorSharding;
    for (uint32_t k = 0; k < K; ++k)
        info.stages.push_back({placement.stages[k].ipu, placement.stages[k].blocks,
                               stashDepth(placement.kind, placement.schedule, K, k, train), frags[k].fwd, frags[k].bwd});
    s.strategy = info;
    return s;
}

Schedule phasedRun(const ModelGraph& model, const SystemParams& system, const Placement& placement, const CompileOptions& opt)
{
    const Graph& g = model.graph;
    const TrainingOps& training = model.training;
    const std::size_t forwardOps = model.forwardOps;
    const bool train = opt.train;
    const OutputPlan& out = opt.out;
    const uint64_t G = opt.gradientAccumulation, D = opt.deviceIterations;
    // Phases take turns; nothing of a phase stays on chip between its turns: its weights (and,
    // for the update, accumulators and optimizer state) stream in from Streaming Memory, and the
    // activations its backward pass needs go out after its forward pass and come back for it.
    const uint32_t P = uint32_t(placement.stages.size());
    const uint32_t groups = placement.parallelPhases ? 2 : 1;
    std::vector<std::unique_ptr<IpuLowering>> owned;
    std::vector<ProgramBuilder*> builders;
    std::vector<GraphLowering*> lowerings;
    for (uint32_t i = 0; i < groups; ++i) {
        owned.push_back(std::make_unique<IpuLowering>(g, system, placement, opt, i));
        builders.push_back(&owned.back()->builder);
        lowerings.push_back(&owned.back()->lowering);
    }
    auto phaseOf = [&](const Op& op) { return placement.stageOfBlock.at(op.block); };
    auto ipuOf = [&](uint32_t p) { return placement.stages[p].ipu; };
    const std::vector<int> producer = producerStages(g, placement);
    auto tensorsOf = [&](uint32_t p, std::initializer_list<TensorRole> roles) {
        std::vector<int> out;
        for (std::size_t i = 0; i < g.tensors.size(); ++i)
            if (placement.stageOfBlock.count(g.tensors[i].block) && placement.stageOfBlock.at(g.tensors[i].block) == p &&
                std::find(roles.begin(), roles.end(), g.tensors[i].role) != roles.end())
                out.push_back(int(i));
        return out;
    };
    std::vector<std::size_t> fwdOps, bwdOps(training.backward);
    for (std::size_t i = 0; i < forwardOps; ++i)
        fwdOps.push_back(i);
    bwdOps.insert(bwdOps.end(), training.accumulate.begin(), training.accumulate.end());

    // Tensors crossing between phases on different IPUs arrive over IPU-Links.
    std::vector<uint64_t> fwdBytes(P, 0), bwdBytes(P, 0);
    for (const auto* list : {&fwdOps, &bwdOps})
        for (std::size_t i : *list) {
            const uint32_t p = phaseOf(g.ops[i]);
            for (int in : g.ops[i].inputs) {
                const int from = producer[std::size_t(in)];
                if (from < 0 || uint32_t(from) == p || ipuOf(uint32_t(from)) == ipuOf(p) || lowerings[ipuOf(p)]->placed(in))
                    continue;
                if (g.tensor(in).role == TensorRole::Weight || g.tensor(in).role == TensorRole::Accumulator)
                    continue;
                lowerings[ipuOf(p)]->importTensor(in);
                (list == &fwdOps ? fwdBytes : bwdBytes)[std::size_t(from)] += g.tensor(in).bytes();
            }
        }

    std::vector<int> fwdLoad(P, -1), fwd(P, -1), bwdLoad(P, -1), bwd(P, -1), update(P, -1);
    std::vector<std::vector<int>> saved(P);
    const Op store = storeOp(out);
    const uint32_t last = placement.stageOfBlock.at(out.block);
    int output = -1;
    for (uint32_t p = 0; p < P; ++p) {
        ProgramBuilder& b = *builders[ipuOf(p)];
        GraphLowering& l = *lowerings[ipuOf(p)];
        fwdLoad[p] = int(b.beginFragment("load weights"));
        l.streamIn("phase weights load", tensorsOf(p, {TensorRole::Weight}));
        b.endFragment();
        fwd[p] = int(b.beginFragment("forward"));
        for (std::size_t i : fwdOps)
            if (phaseOf(g.ops[i]) == p)
                l.lower(g.ops[i]);
        if (p == last && out.mode == OutputPlan::Mode::Sum)
            l.lowerOutputSum(out.tensors);
        if (train) {
            std::set<int> keep;
            for (std::size_t i : bwdOps)
                if (phaseOf(g.ops[i]) == p)
                    for (int in : g.ops[i].inputs)
                        if ((g.tensor(in).role == TensorRole::Activation || g.tensor(in).role == TensorRole::Input) && l.placed(in))
                            keep.insert(in);
            saved[p].assign(keep.begin(), keep.end());
            l.streamOut("activations store", saved[p]);
        }
        b.endFragment();
        if (p == last) {
            output = int(b.beginFragment("output"));
            l.lower(store);
            b.endFragment();
        }
    }
    if (train) {
        for (uint32_t p = P; p-- > 0;) {
            ProgramBuilder& b = *builders[ipuOf(p)];
            GraphLowering& l = *lowerings[ipuOf(p)];
            std::vector<int> in = tensorsOf(p, {TensorRole::Weight, TensorRole::Accumulator});
            in.insert(in.end(), saved[p].begin(), saved[p].end());
            bwdLoad[p] = int(b.beginFragment("load for backward"));
            l.streamIn("phase backward load", in);
            b.endFragment();
            bwd[p] = int(b.beginFragment("backward"));
            for (std::size_t i : bwdOps)
                if (phaseOf(g.ops[i]) == p)
                    l.lower(g.ops[i]);
            l.streamOut("accumulators store", tensorsOf(p, {TensorRole::Accumulator}));
            b.endFragment();
        }
        for (uint32_t p = 0; p < P; ++p) {
            ProgramBuilder& b = *builders[ipuOf(p)];
            GraphLowering& l = *lowerings[ipuOf(p)];
            update[p] = int(b.beginFragment("update"));
            l.streamIn("phase update load", tensorsOf(p, {TensorRole::Weight, TensorRole::Accumulator, TensorRole::OptimizerState}));
            l.lowerUpdate(opsOf(g, training.update, [&](const Op& op) { return phaseOf(op) == p; }), placement.ring(ipuOf(p)));
            l.streamOut("phase update store", tensorsOf(p, {TensorRole::Weight, TensorRole::OptimizerState}));
            b.endFragment();
        }
    }

    // One slot per phase turn: the phase's IPU computes while (parallel) the other IPU loads
    // the next phase; then the crossing tensors move and everyone syncs.
    auto barrier = [&] {
        for (auto& b : builders)
            groups > 1 ? b->externalSync() : b->sync();
    };
    auto copy = [&](uint32_t from, uint32_t to, uint64_t bytes) {
        if (groups < 2)
            return;
        for (uint32_t i = 0; i < groups; ++i) {
            std::vector<IpuTransfer> send, recv;
            if (i == ipuOf(from) && ipuOf(from) != ipuOf(to) && bytes)
                send.push_back({ipuOf(to), bytes});
            if (i == ipuOf(to) && ipuOf(from) != ipuOf(to) && bytes)
                recv.push_back({ipuOf(from), bytes});
            builders[i]->ipuCopy("phase copy", std::move(send), std::move(recv));
        }
    };
    auto slots = [&](bool backward) {
        for (uint32_t n = 0; n < P; ++n) {
            const uint32_t p = backward ? P - 1 - n : n;
            const auto& load = backward ? bwdLoad : fwdLoad;
            const auto& work = backward ? bwd : fwd;
            ProgramBuilder& b = *builders[ipuOf(p)];
            if ((groups == 1 || n == 0) && load[p] >= 0)
                b.call(uint32_t(load[p]));
            b.call(uint32_t(work[p]), 0, train && G > 1);
            if (!backward && p == last && out.perMicroBatch())
                b.call(uint32_t(output), -1, false, out.period);
            const bool more = n + 1 < P;
            const uint32_t next = backward ? p - 1 : p + 1;
            if (groups > 1 && more)
                builders[ipuOf(next)]->call(uint32_t(load[next])); // overlaps this phase's compute
            if (groups > 1 && !more && !backward && train)
                b.call(uint32_t(bwdLoad[p]));                        // the backward starts here
            if (more)
                copy(p, next, backward ? bwdBytes[p] : fwdBytes[p]);
            barrier();
        }
    };
    for (auto& b : builders)
        b->beginRepeat("device_iterations", D);
    if (train && G > 1)
        for (auto& b : builders)
            b->beginRepeat("gradient_accumulation", G);
    slots(false);
    if (train) {
        // In a parallel run the last phase's backward load was issued after its forward.
        if (groups > 1)
            bwdLoad[last] = -1;
        slots(true);
    }
    if (train && G > 1)
        for (auto& b : builders)
            b->endRepeat();
    if (train) {
        for (uint32_t p = 0; p < P; ++p)
            builders[ipuOf(p)]->call(uint32_t(update[p]));
        barrier();
    }
    for (auto& b : builders)
        b->endRepeat();
    if (!out.perMicroBatch())
        builders[ipuOf(last)]->call(uint32_t(output));
    barrier();

    Schedule sched;
    for (uint32_t i = 0; i < groups; ++i)
        sched.programs.push_back(builders[i]->finish(i));
    StrategyInfo info;
    info.kind = "phased";
    info.schedule = placement.parallelPhases ? "parallel" : "serial";
    info.pipelineCycles = (train ? 2 * P : P) * (train ? G : 1); // phase turns per device iteration
    info.replicas = placement.replicas;
    info.replicatedTensorSharding = placement.replicatedTensorSharding;
    for (uint32_t p = 0; p < P; ++p)
        info.stages.push_back({ipuOf(p), placement.stages[p].blocks, 0, fwd[p], bwd[p]});
    sched.strategy = info;
    return sched;
}


} // namespace

CompileOptions compileOptionsOf(const WorkloadOptions& w)
{
    CompileOptions o;
    o.train = w.train;
    o.gradientAccumulation = w.gradientAccumulation;
    o.deviceIterations = w.deviceIterations;
    o.activations = w.activations;
    o.partials = w.partials;
    o.offloadOptimizer = w.offloadOptimizer;
    o.ioTiles = w.ioTiles;
    o.recompute = w.recompute;
    o.out.mode = w.outputMode;
    o.out.period = w.outputPeriod;
    return o;
}

Schedule compileGraph(const ModelGraph& model, const SystemParams& system, const Placement& placement,
                      const CompileOptions& opt, uint64_t microBatch, const Diagnostics& diag)
{
    const bool train = opt.train;
    const uint64_t G = opt.gradientAccumulation, D = opt.deviceIterations;
    const uint32_t K = uint32_t(placement.stages.size());
    Schedule s;
    if (placement.kind == StrategyKind::Phased) {
        if (opt.offloadOptimizer)
            diag.fail("/workload/offload_optimizer", "expected false: phased execution streams all optimizer state already");
        s = phasedRun(model, system, placement, opt);
    } else if (placement.kind == StrategyKind::Single) {
        s = singleIpu(model, system, placement, opt);
    } else {
        if (placement.kind == StrategyKind::Pipelined && placement.schedule != PipelineSchedule::Sequential) {
            // PopART: training pipelines have 2K - 1 stages (the last forward and first backward
            // fused); every stage needs a micro-batch in flight.
            const uint64_t stages = train ? 2 * K - 1 : K;
            if (train && G < stages)
                diag.fail("/run/gradient_accumulation",
                         fmt::format("expected at least {} (the pipeline's stages, 2 x {} stages - 1), found {}", stages, K, G));
            if (!train && D < stages)
                diag.fail("/run/device_iterations", fmt::format("expected at least {} (the pipeline's stages), found {}", stages, D));
        }
        s = pipelined(diag, model, system, placement, opt);
    }
    s.samplesPerHostCall = microBatch * (train ? G : 1) * D * placement.replicas;
    const Graph& g = model.graph;
    double flops = 0;
    auto count = [&](std::size_t i) {
        if (g.ops[i].kind == OpKind::Conv || g.ops[i].kind == OpKind::BatchMatMul)
            flops += 2.0 * double(g.ops[i].conv.macs());
    };
    for (std::size_t i = 0; i < model.forwardOps; ++i)
        count(i);
    if (train)
        for (std::size_t i : model.training.backward)
            count(i);
    s.modelFlopsPerSample = flops / double(microBatch);
    s.peakMacsPerTileCycle = system.ipu.amp(opt.activations, opt.partials).macsPerCycle;
    return s;
}

} // namespace ipusim
