// SPDX-License-Identifier: MIT
#include "workloads/nets/Mnist.hpp"

#include "workloads/costs/VertexCosts.hpp"
#include "workloads/lowering/GraphLowering.hpp"
#include "workloads/strategies/Pipeline.hpp"
#include "workloads/training/Training.hpp"

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <set>

namespace ipusim {

Graph mnistForward(uint64_t B, Precision type, Precision partials, bool withLoss, MnistTensors& t)
{
    Graph g;
    g.blocks = {"B1", "B2", "B3", "B4"};
    g.currentBlock = "B1";
    t.images = g.addTensor("images", {B, 1, 28, 28}, type, TensorRole::Input);
    g.addOp("host.load.images", OpKind::HostLoad, {}, {t.images});

    auto conv = [&](const std::string& name, int x, ConvGeometry geom) {
        const int w = g.addTensor(name + ".weight", {geom.outChans, geom.inChans, geom.kernelHeight, geom.kernelWidth}, type,
                                  TensorRole::Weight);
        const int b = g.addTensor(name + ".bias", {geom.outChans}, type, TensorRole::Weight);
        const bool spatial = geom.kernelHeight > 1;
        const int y = g.addTensor(name + ".out",
                                  spatial ? std::vector<uint64_t>{B, geom.outChans, geom.outHeight(), geom.outWidth()}
                                          : std::vector<uint64_t>{B, geom.outChans},
                                  type, TensorRole::Activation);
        Op& op = g.addOp(name, OpKind::Conv, {x, w}, {y});
        op.geometry = geom;
        op.conv = forwardProblem(geom, type, partials);
        const int yb = g.addTensor(name + ".biased", g.tensor(y).shape, type, TensorRole::Activation);
        g.addOp(name + ".bias_add", OpKind::BiasAdd, {y, b}, {yb}).channels = geom.outChans;
        return yb;
    };
    auto pool = [&](const std::string& name, int x) {
        auto s = g.tensor(x).shape;
        const int y = g.addTensor(name + ".out", {s[0], s[1], s[2] / 2, s[3] / 2}, type, TensorRole::Activation);
        g.addOp(name, OpKind::MaxPool, {x}, {y}).window = 4;
        return y;
    };
    auto relu = [&](const std::string& name, int x) {
        const int y = g.addTensor(name + ".out", g.tensor(x).shape, type, TensorRole::Activation);
        g.addOp(name, OpKind::Relu, {x}, {y});
        return y;
    };
    int x = conv("layer1.conv", t.images, {B, 1, 28, 28, 10, 5, 5});
    x = relu("layer1.relu", pool("layer1.pool", x));
    g.currentBlock = "B2";
    x = conv("layer2.conv", x, {B, 10, 12, 12, 20, 5, 5});
    x = relu("layer2.relu", pool("layer2.pool", x));
    g.currentBlock = "B3"; // view(-1, 320) is free; Linear as a 1x1 convolution over the batch
    x = relu("layer3.relu", conv("layer3", x, {B, 320, 1, 1, 256, 1, 1}));
    g.currentBlock = "B4";
    t.logits = conv("layer4", x, {B, 256, 1, 1, 10, 1, 1});
    if (withLoss) {
        // The labels go straight to the IPU that computes the loss.
        t.labels = g.addTensor("labels", {B}, Precision::FP32, TensorRole::Label); // int32, 4 bytes
        g.addOp("host.load.labels", OpKind::HostLoad, {}, {t.labels});
        t.loss = g.addTensor("loss", {1}, Precision::FP32, TensorRole::Output);
        g.addOp("loss", OpKind::SoftmaxCrossEntropy, {t.logits, t.labels}, {t.loss}).channels = 10;
    }
    return g;
}

namespace {

std::vector<const Op*> opsOf(const Graph& g, const std::vector<std::size_t>& indices, const std::function<bool(const Op&)>& keep)
{
    std::vector<const Op*> out;
    for (std::size_t i : indices)
        if (keep(g.ops[i]))
            out.push_back(&g.ops[i]);
    return out;
}

/** Forward ops that recomputation runs again: not host loads (the data is kept) or the loss. */
bool recomputable(const Op& op)
{
    return op.kind != OpKind::HostLoad && op.kind != OpKind::SoftmaxCrossEntropy;
}

/** Where outputs go back to the host (PopTorch OutputMode). */
struct OutputPlan
{
    enum class Mode { All, Final, Sum, EveryN } mode = Mode::Final;
    uint32_t period = 1;
    std::vector<int> tensors;
    [[nodiscard]] bool perMicroBatch() const { return mode == Mode::All || mode == Mode::EveryN; }
};

Schedule singleIpu(const Graph& g, const TrainingOps& training, std::size_t forwardOps, bool train, const IpuParams& hw,
                   const Placement& placement, bool offload, uint32_t ioTiles, bool recompute, const OutputPlan& out,
                   uint64_t G, uint64_t D)
{
    // Fragments first (a micro-batch, the weight update, the outputs), then the loops that call them.
    IpuParams computeTiles = hw;
    computeTiles.tiles -= ioTiles;
    ProgramBuilder pb(computeTiles);
    GraphLowering lowering(g, pb);
    lowering.setIoTiles(computeTiles.tiles, ioTiles);
    lowering.setReplication(placement.replicas, placement.replicatedTensorSharding);
    lowering.setOffloadOptimizer(offload);
    lowering.placePersistent();
    const uint32_t microBatch = pb.beginFragment("micro-batch");
    for (std::size_t i = 0; i < forwardOps; ++i)
        lowering.lower(g.ops[i]);
    if (recompute) // the backward pass uses activations computed again, not kept ones
        for (std::size_t i = 0; i < forwardOps; ++i)
            if (recomputable(g.ops[i]))
                lowering.lower(g.ops[i]);
    for (std::size_t i : training.backward)
        lowering.lower(g.ops[i]);
    for (std::size_t i : training.accumulate)
        lowering.lower(g.ops[i]);
    if (out.mode == OutputPlan::Mode::Sum)
        lowering.lowerOutputSum(out.tensors);
    pb.endFragment();
    int update = -1;
    if (train) {
        update = int(pb.beginFragment("update"));
        lowering.lowerUpdate(opsOf(g, training.update, [](const Op&) { return true; }), placement.ring(0));
        pb.endFragment();
    }
    const uint32_t output = pb.beginFragment("output");
    lowering.lower(Op{"host.store", OpKind::HostStore, out.tensors, {}, {}, {}, 1, 1, true, "B4"});
    pb.endFragment();

    pb.beginRepeat("device_iterations", D);
    if (train && G > 1)
        pb.beginRepeat("gradient_accumulation", G);
    pb.call(microBatch, 0, train && G > 1);
    if (out.perMicroBatch())
        pb.call(output, -1, false, out.period);
    if (train && G > 1)
        pb.endRepeat();
    if (update >= 0)
        pb.call(uint32_t(update));
    pb.endRepeat();
    if (!out.perMicroBatch())
        pb.call(output);
    Schedule s;
    s.programs.push_back(pb.finish(0));
    return s;
}

Schedule placed(const config::LoadedConfig& cfg, const Graph& g, const MnistTensors& t, const TrainingOps& training,
                std::size_t forwardOps, bool train, const SystemParams& system, const Placement& placement, bool offload,
                uint32_t ioTiles, bool recompute, const OutputPlan& out, uint64_t G, uint64_t D)
{
    IpuParams computeTiles = system.ipu;
    computeTiles.tiles -= ioTiles;
    const uint32_t K = uint32_t(placement.stages.size());
    auto stageOf = [&](const Op& op) { return placement.stageOfBlock.at(op.block); };
    // Which stage produces each tensor (weights and their state live with their block).
    std::vector<int> producer(g.tensors.size(), -1);
    for (const auto& op : g.ops)
        for (int o : op.outputs)
            if (producer[std::size_t(o)] < 0)
                producer[std::size_t(o)] = int(stageOf(op));

    std::vector<std::unique_ptr<ProgramBuilder>> builders;
    std::vector<std::unique_ptr<GraphLowering>> lowerings;
    std::vector<StageFragments> frags(K);
    std::vector<ProgramBuilder*> raw;
    for (uint32_t k = 0; k < K; ++k) {
        builders.push_back(std::make_unique<ProgramBuilder>(computeTiles));
        lowerings.push_back(std::make_unique<GraphLowering>(g, *builders[k]));
        lowerings[k]->setIoTiles(computeTiles.tiles, ioTiles);
        lowerings[k]->setReplication(placement.replicas, placement.replicatedTensorSharding);
        lowerings[k]->setOffloadOptimizer(offload);
        lowerings[k]->placePersistent(placement.stages[k].blocks);
        frags[k].ipu = placement.stages[k].ipu;
        raw.push_back(builders[k].get());
    }
    // Tensors crossing stages arrive in receive buffers; only neighbouring stages exchange.
    auto imports = [&](const std::vector<std::size_t>& ops, bool forward) {
        for (std::size_t i : ops) {
            const Op& op = g.ops[i];
            const uint32_t k = stageOf(op);
            for (int in : op.inputs) {
                const int from = producer[std::size_t(in)];
                if (from < 0 || uint32_t(from) == k || lowerings[k]->placed(in))
                    continue;
                if ((forward && uint32_t(from) + 1 != k) || (!forward && uint32_t(from) != k + 1))
                    cfg.fail("/workload/strategy", fmt::format("tensor \"{}\" would skip a stage (stage {} to stage {}): "
                                                               "only neighbouring stages exchange tensors",
                                                               g.tensor(in).name, from, k));
                lowerings[k]->importTensor(in);
                (forward ? frags[std::size_t(from)].fwdBytesToNext : frags[std::size_t(from)].bwdBytesToPrevious) += g.tensor(in).bytes();
            }
        }
    };
    std::vector<std::size_t> fwdOps, bwdOps(training.backward);
    for (std::size_t i = 0; i < forwardOps; ++i)
        fwdOps.push_back(i);
    bwdOps.insert(bwdOps.end(), training.accumulate.begin(), training.accumulate.end());
    imports(fwdOps, true);
    imports(bwdOps, false);

    Op store{"host.store", OpKind::HostStore, out.tensors, {}, {}, {}, 1, 1, true, "B4"};
    const uint32_t last = placement.stageOfBlock.at("B4");
    for (uint32_t k = 0; k < K; ++k) {
        ProgramBuilder& b = *builders[k];
        GraphLowering& l = *lowerings[k];
        frags[k].fwd = int(b.beginFragment("forward"));
        for (std::size_t i : fwdOps)
            if (stageOf(g.ops[i]) == k)
                l.lower(g.ops[i]);
        if (k == last && out.mode == OutputPlan::Mode::Sum)
            l.lowerOutputSum(out.tensors);
        b.endFragment();
        if (k == last) {
            frags[k].output = int(b.beginFragment("output"));
            l.lower(store);
            b.endFragment();
            frags[k].outputPerMicroBatch = out.perMicroBatch();
            frags[k].outputPeriod = out.period;
        }
        if (!train)
            continue;
        // Activations the backward pass needs wait in a stash FIFO between the passes.
        const uint32_t depth = stashDepth(placement.kind, placement.schedule, K, k, true);
        // With recomputation only the stage's inputs (its checkpoints) wait for the backward
        // pass; otherwise every activation the backward pass reads.
        const bool recomputeHere = recompute && depth > 0;
        std::set<int> keep;
        if (recomputeHere) {
            for (std::size_t i : fwdOps)
                if (stageOf(g.ops[i]) == k && recomputable(g.ops[i]))
                    for (int in : g.ops[i].inputs)
                        if (g.tensor(in).role == TensorRole::Input || (producer[std::size_t(in)] >= 0 && uint32_t(producer[std::size_t(in)]) != k))
                            keep.insert(in);
        } else {
            for (std::size_t i : bwdOps)
                if (stageOf(g.ops[i]) == k)
                    for (int in : g.ops[i].inputs) {
                        const auto role = g.tensor(in).role;
                        if ((role == TensorRole::Activation || role == TensorRole::Input) && l.placed(in))
                            keep.insert(in);
                    }
        }
        TileVector stashed(computeTiles.tiles, 0), copyCycles(computeTiles.tiles, 0);
        for (int in : keep)
            for (uint32_t tile = 0; tile < computeTiles.tiles; ++tile)
                stashed[tile] += l.placement(in)[tile];
        if (depth > 0) {
            TileVector fifo(stashed);
            for (uint32_t tile = 0; tile < computeTiles.tiles; ++tile) {
                fifo[tile] *= depth;
                copyCycles[tile] = stashed[tile] ? costs::copy(system.ipu, stashed[tile], bytesOf(g.tensor(t.images).type)) : 0;
            }
            b.allocate(fmt::format("stash FIFO (depth {})", depth), "stash", fifo, true);
            frags[k].stash = int(b.beginFragment("stash"));
            b.sync();
            b.compute("stash", copyCycles, {"Copy"});
            b.endFragment();
            frags[k].restore = int(b.beginFragment("restore"));
            b.sync();
            b.compute("restore", copyCycles, {"Copy"});
            b.endFragment();
        }
        if (recomputeHere) {
            frags[k].recompute = int(b.beginFragment("recompute"));
            for (std::size_t i : fwdOps)
                if (stageOf(g.ops[i]) == k && recomputable(g.ops[i]))
                    l.lower(g.ops[i]);
            b.endFragment();
        }
        frags[k].bwd = int(b.beginFragment("backward"));
        for (std::size_t i : bwdOps)
            if (stageOf(g.ops[i]) == k)
                l.lower(g.ops[i]);
        b.endFragment();
        frags[k].update = int(b.beginFragment("update"));
        l.lowerUpdate(opsOf(g, training.update, [&](const Op& op) { return stageOf(op) == k; }), placement.ring(k));
        b.endFragment();
    }
    for (uint32_t k = 0; k < K; ++k)
        if (lowerings[k]->offloadedBytes() > system.streamingMemory.bytesPerIpu)
            cfg.fail("/workload/offload_optimizer", fmt::format("IPU {} needs {} bytes of Streaming Memory, it has {}",
                                                                placement.stages[k].ipu, lowerings[k]->offloadedBytes(),
                                                                system.streamingMemory.bytesPerIpu));
    const PipelineActivity activity = pipelineActivity(placement.kind, placement.schedule, K, train ? G : D, train);
    composePipeline(raw, frags, activity, train, D);

    Schedule s;
    for (uint32_t k = 0; k < K; ++k)
        s.programs.push_back(builders[k]->finish(placement.stages[k].ipu));
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

Schedule phasedRun(const config::LoadedConfig& cfg, const Graph& g, const MnistTensors& t, const TrainingOps& training,
                   std::size_t forwardOps, bool train, const SystemParams& system, const Placement& placement, uint32_t ioTiles,
                   const OutputPlan& out, uint64_t G, uint64_t D)
{
    // Phases take turns; nothing of a phase stays on chip between its turns: its weights (and,
    // for the update, accumulators and optimizer state) stream in from Streaming Memory, and the
    // activations its backward pass needs go out after its forward pass and come back for it.
    const uint32_t P = uint32_t(placement.stages.size());
    const uint32_t groups = placement.parallelPhases ? 2 : 1;
    IpuParams computeTiles = system.ipu;
    computeTiles.tiles -= ioTiles;
    std::vector<std::unique_ptr<ProgramBuilder>> builders;
    std::vector<std::unique_ptr<GraphLowering>> lowerings;
    for (uint32_t i = 0; i < groups; ++i) {
        builders.push_back(std::make_unique<ProgramBuilder>(computeTiles));
        lowerings.push_back(std::make_unique<GraphLowering>(g, *builders[i]));
        lowerings[i]->setIoTiles(computeTiles.tiles, ioTiles);
        lowerings[i]->setReplication(placement.replicas, placement.replicatedTensorSharding);
    }
    auto phaseOf = [&](const Op& op) { return placement.stageOfBlock.at(op.block); };
    auto ipuOf = [&](uint32_t p) { return placement.stages[p].ipu; };
    std::vector<int> producer(g.tensors.size(), -1);
    for (const auto& op : g.ops)
        for (int o : op.outputs)
            if (producer[std::size_t(o)] < 0)
                producer[std::size_t(o)] = int(phaseOf(op));
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
    Op store{"host.store", OpKind::HostStore, out.tensors, {}, {}, {}, 1, 1, true, "B4"};
    const uint32_t last = placement.stageOfBlock.at("B4");
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
            l.lowerUpdate(opsOf(g, training.update, [&](const Op& op) { return phaseOf(op) == p; }), placement.ring(p));
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
    (void)cfg;
    (void)t;
    return sched;
}

} // namespace

Schedule buildMnistSchedule(const config::LoadedConfig& cfg, const SystemParams& system, uint64_t G, uint64_t D)
{
    const auto& w = cfg.doc.at("workload");
    const bool train = w.at("mode") == "train";
    const uint64_t B = w.at("micro_batch");
    const Precision type = w.at("precision") == "fp16" ? Precision::FP16 : Precision::FP32;
    const Precision partials = w.at("partials") == "fp16" ? Precision::FP16 : Precision::FP32;
    if (type == Precision::FP32 && partials == Precision::FP16)
        cfg.fail("/workload/partials", "expected \"fp32\": fp32 activations accumulate in fp32 partials");
    if (!train && G != 1)
        cfg.fail("/run/gradient_accumulation", "expected 1: inference has no gradient accumulation");
    const bool offload = w.at("offload_optimizer");
    const uint32_t ioTiles = w.at("io_tiles");
    const bool recompute = w.at("recompute") == "checkpoints";
    if (recompute && !train)
        cfg.fail("/workload/recompute", "expected \"none\": inference keeps no activations for a backward pass");
    if (ioTiles != 0 && (ioTiles < 32 || ioTiles % 2 != 0 || ioTiles >= system.ipu.tiles))
        cfg.fail("/workload/io_tiles", fmt::format("expected 0 or an even number from 32 to 192 below the {} tiles, found {}",
                                                   system.ipu.tiles, ioTiles));
    if (offload && !train)
        cfg.fail("/workload/offload_optimizer", "expected false: inference has no optimizer state");

    MnistTensors t;
    Graph g = mnistForward(B, type, partials, train, t);
    const std::size_t forwardOps = g.ops.size();
    OutputPlan out;
    const std::string mode = w.at("output_mode");
    out.mode = mode == "all"     ? OutputPlan::Mode::All
               : mode == "final" ? OutputPlan::Mode::Final
               : mode == "sum"   ? OutputPlan::Mode::Sum
               : mode == "every_n" ? OutputPlan::Mode::EveryN
               : train ? OutputPlan::Mode::Final : OutputPlan::Mode::All;
    out.period = out.mode == OutputPlan::Mode::EveryN ? w.at("output_return_period").get<uint32_t>() : 1;
    out.tensors = train ? std::vector<int>{t.loss, t.logits} : std::vector<int>{t.logits};
    const Placement placement = resolvePlacement(cfg, g.blocks, system);
    const uint32_t K = uint32_t(placement.stages.size());
    TrainingOps training;
    if (train)
        training = addTraining(g, t.loss, G > 1 || K > 1, partials);

    Schedule s;
    if (placement.kind == StrategyKind::Phased) {
        if (offload)
            cfg.fail("/workload/offload_optimizer", "expected false: phased execution streams all optimizer state already");
        s = phasedRun(cfg, g, t, training, forwardOps, train, system, placement, ioTiles, out, G, D);
    } else if (placement.kind == StrategyKind::Single) {
        s = singleIpu(g, training, forwardOps, train, system.ipu, placement, offload, ioTiles, recompute, out, G, D);
        if (placement.replicas > 1) {
            StrategyInfo info;
            info.kind = "single";
            info.schedule = "-";
            info.replicas = placement.replicas;
            info.replicatedTensorSharding = placement.replicatedTensorSharding;
            info.stages.push_back({0, g.blocks, 0, -1, -1});
            s.strategy = info;
        }
    }
    else {
        if (placement.kind == StrategyKind::Pipelined && placement.schedule != PipelineSchedule::Sequential) {
            // PopART: training pipelines have 2K - 1 stages (the last forward and first backward
            // fused); every stage needs a micro-batch in flight.
            const uint64_t stages = train ? 2 * K - 1 : K;
            if (train && G < stages)
                cfg.fail("/run/gradient_accumulation",
                         fmt::format("expected at least {} (the pipeline's stages, 2 x {} IPUs - 1), found {}", stages, K, G));
            if (!train && D < stages)
                cfg.fail("/run/device_iterations", fmt::format("expected at least {} (the pipeline's stages), found {}", stages, D));
        }
        s = placed(cfg, g, t, training, forwardOps, train, system, placement, offload, ioTiles, recompute, out, G, D);
    }
    s.name = cfg.name;
    s.samplesPerHostCall = B * (train ? G : 1) * D * placement.replicas;
    return s;
}

} // namespace ipusim
