// SPDX-License-Identifier: MIT
#include "workloads/strategies/CompileGraph.hpp"
#include "workloads/strategies/Pipeline.hpp"

#include "workloads/strategies/StrategyParts.hpp"

#include <fmt/format.h>

namespace ipusim {

CompileOptions compileOptionsOf(const WorkloadOptions& w)
{
    CompileOptions o;
    static_cast<WorkloadOptions&>(o) = w;
    o.out.mode = w.outputMode;
    o.out.period = w.outputPeriod;
    return o;
}

std::vector<double> memoryProportions(const MemoryProportion& amp, const Placement& placement, const Diagnostics& diag)
{
    if (const double* all = std::get_if<double>(&amp))
        return std::vector<double>(placement.ipusPerReplica, *all);
    if (const auto* perIpu = std::get_if<std::vector<double>>(&amp)) {
        if (perIpu->size() != placement.ipusPerReplica)
            diag.fail("/workload/available_memory_proportion",
                      fmt::format("expected one value per IPU of a replica ({}), found {}", placement.ipusPerReplica, perIpu->size()));
        return *perIpu;
    }
    return {};
}

TrainingOptions trainingOptionsOf(const CompileOptions& opt, const Placement& placement, std::vector<int> losses,
                                  const OptimizerSpec& optimizer)
{
    TrainingOptions to;
    to.losses = std::move(losses);
    to.accumulate = opt.gradientAccumulation > 1 || placement.stages.size() > 1;
    to.partials = opt.partials;
    to.optimizer = optimizer;
    return to;
}

CompiledSchedule compileGraph(const ModelGraph& model, const SystemParams& system, const Placement& placement,
                              const CompileOptions& opt, const Diagnostics& diag)
{
    const bool train = opt.train;
    const uint64_t G = opt.gradientAccumulation, D = opt.deviceIterations, microBatch = opt.microBatch;
    const uint32_t K = uint32_t(placement.stages.size());
    CompiledSchedule compiled;
    if (placement.kind == StrategyKind::Phased) {
        if (opt.offloadOptimizer)
            diag.fail("/workload/offload_optimizer", "expected false: phased execution streams all optimizer state already");
        compiled = compilePhased(model, system, placement, opt, diag);
    } else if (placement.kind == StrategyKind::Single) {
        compiled = compileSingleIpu(model, system, placement, opt);
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
        compiled = compilePipelined(model, system, placement, opt, diag);
    }
    Schedule& s = compiled.schedule;
    s.samplesPerHostCall = microBatch * (train ? G : 1) * D * placement.replicas;
    const Graph& g = model.graph;
    double flops = 0;
    auto count = [&](std::size_t i) {
        const Op& op = g.ops[i];
        if (op.kind == OpKind::Conv || op.kind == OpKind::BatchMatMul)
            flops += 2.0 * double(op.conv.macs());
        // A recurrent layer's matmuls, every step: [x_t, h_t-1] by the weights forward; the
        // gate gradients by the recurrent weights (and the input weights, for dx) backward.
        const double steps = double(op.window), H = double(op.channels);
        if (op.kind == OpKind::Recurrent)
            flops += 2.0 * double(op.conv.macs()) * steps;
        if (op.kind == OpKind::RecurrentGrad) {
            const double inputs = op.outputs.size() > 1 ? double(op.conv.reduction) - H : 0.0;
            flops += 2.0 * steps * double(op.conv.positions) * double(op.conv.outChans) * (H + inputs);
        }
    };
    for (std::size_t i = 0; i < model.forwardOps; ++i)
        count(i);
    if (train)
        for (std::size_t i : model.training.backward)
            count(i);
    s.modelFlopsPerSample = flops / double(microBatch);
    s.peakMacsPerTileCycle = system.ipu.amp(opt.activations, opt.partials).macsPerCycle;
    return compiled;
}

} // namespace ipusim
