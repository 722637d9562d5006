// SPDX-License-Identifier: MIT
// The whole model on one IPU (each replica's IPU, when replicated).
#include "workloads/strategies/StrategyParts.hpp"

namespace ipusim {
namespace {

/** The fragments: a micro-batch (forward, backward), the weight update, the outputs. */
struct SingleFragments
{
    uint32_t microBatch = 0, output = 0;
    int update = -1;
};

SingleFragments lowerFragments(IpuLowering& one, const ModelGraph& m, const Placement& placement, const CompileOptions& opt)
{
    const Graph& g = m.graph;
    ProgramBuilder& pb = one.builder;
    GraphLowering& lowering = one.lowering;
    lowering.placePersistent();
    SingleFragments f;
    f.microBatch = pb.beginFragment("micro-batch");
    for (std::size_t i = 0; i < m.forwardOps; ++i)
        lowering.lower(g.ops[i]);
    if (opt.train)
        lowerBackward(lowering, m, g.blocks, opt.recompute);
    if (opt.out.mode == OutputPlan::Mode::Sum)
        lowering.lowerOutputSum(opt.out.tensors);
    pb.endFragment();
    if (opt.train) {
        f.update = int(pb.beginFragment("update"));
        lowering.lowerUpdate(opsOf(g, m.training.update, [](const Op&) { return true; }), placement.ring(0));
        pb.endFragment();
    }
    f.output = pb.beginFragment("output");
    lowering.lower(storeOp(opt.out));
    pb.endFragment();
    return f;
}

} // namespace

CompiledSchedule compileSingleIpu(const ModelGraph& m, const SystemParams& system, const Placement& placement,
                                  const CompileOptions& opt)
{
    // Fragments first, then the loops that call them.
    const bool accumulate = opt.train && opt.gradientAccumulation > 1;
    IpuLowering one(m.graph, system, placement, opt, 0);
    const SingleFragments f = lowerFragments(one, m, placement, opt);
    ProgramBuilder& pb = one.builder;
    pb.beginRepeat("device_iterations", opt.deviceIterations);
    if (accumulate)
        pb.beginRepeat("gradient_accumulation", opt.gradientAccumulation);
    // Micro-batches are numbered by the innermost loop (inference: each device iteration is one).
    const bool numbered = accumulate || !opt.train;
    pb.call(f.microBatch, 0, numbered);
    if (opt.out.perMicroBatch())
        pb.call(f.output, opt.train ? -1 : 0, !opt.train, opt.out.period);
    if (accumulate)
        pb.endRepeat();
    if (f.update >= 0)
        pb.call(uint32_t(f.update));
    pb.endRepeat();
    if (!opt.out.perMicroBatch())
        pb.call(f.output);
    Schedule s;
    s.programs.push_back(pb.finish(0));
    if (placement.replicas > 1) {
        StrategyInfo info;
        info.kind = "single";
        info.schedule = "-";
        info.replicas = placement.replicas;
        info.replicatedTensorSharding = placement.replicatedTensorSharding;
        info.stages.push_back({0, m.graph.blocks, 0, -1, -1});
        s.strategy = info;
    }
    return accountSchedule(std::move(s), system, opt.stopAtFirstIpuOver);
}

} // namespace ipusim
