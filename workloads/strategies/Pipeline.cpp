// SPDX-License-Identifier: MIT
#include "workloads/strategies/Pipeline.hpp"

#include <stdexcept>

namespace ipusim {

PipelineActivity pipelineActivity(StrategyKind kind, PipelineSchedule schedule, uint32_t K, uint64_t G, bool training)
{
    PipelineActivity a;
    auto add = [&](std::size_t n) {
        a.fwd.assign(n, std::vector<bool>(K, false));
        a.bwd.assign(n, std::vector<bool>(K, false));
    };
    const bool oneAtATime = kind == StrategyKind::Sharded || schedule == PipelineSchedule::Sequential;
    if (oneAtATime) {
        // One micro-batch at a time: forward down the stages, backward back up.
        add(training ? 2 * K - 1 : K);
        for (uint32_t k = 0; k < K; ++k) {
            a.fwd[k][k] = true;
            if (training)
                a.bwd[2 * K - 2 - k][k] = true;
        }
        a.repeats = G;
        return a;
    }
    if (!training || schedule == PipelineSchedule::Grouped) {
        const uint64_t n = training ? G + 2 * K - 2 : G + K - 1;
        add(n);
        for (uint64_t c = 0; c < n; ++c)
            for (uint32_t k = 0; k < K; ++k) {
                a.fwd[c][k] = c >= k && c - k < G;
                const uint64_t b = 2 * K - 2 - k;
                a.bwd[c][k] = training && c >= b && c - b < G;
            }
        return a;
    }
    // Interleaved: forward of micro-batch m at step k + 2m, backward at 2K - 1 - k + 2m.
    const uint64_t n = 2 * (G + K - 1);
    add(n);
    for (uint64_t t = 0; t < n; ++t)
        for (uint32_t k = 0; k < K; ++k) {
            a.fwd[t][k] = t >= k && (t - k) % 2 == 0 && (t - k) / 2 < G;
            const uint64_t b = 2 * K - 1 - k;
            a.bwd[t][k] = t >= b && (t - b) % 2 == 0 && (t - b) / 2 < G;
        }
    return a;
}

uint32_t stashDepth(StrategyKind kind, PipelineSchedule schedule, uint32_t K, uint32_t k, bool training)
{
    if (!training || kind != StrategyKind::Pipelined || schedule == PipelineSchedule::Sequential)
        return 0;
    if (schedule == PipelineSchedule::Interleaved)
        return K - k;
    return k + 1 == K ? 0 : 2 * (K - 1 - k) + 1;
}

namespace {

// Micro-batches a stage's passes work on in a cycle, for traces: the forward of stage k in
// cycle c carries micro-batch number fwdMb[k]; inside a loop of cycles it advances by one per
// iteration (every schedule moves one micro-batch per stage per repeated cycle).
struct CycleBatches
{
    std::vector<int64_t> fwd, bwd;
    bool perIteration = false;
};

void emitCycle(const std::vector<ProgramBuilder*>& builders, const std::vector<StageFragments>& st,
               const std::vector<bool>& fwd, const std::vector<bool>& bwd, const CycleBatches& mb)
{
    const std::size_t K = st.size();
    for (uint32_t slot = 0; slot < builders.size(); ++slot) {
        ProgramBuilder& b = *builders[slot];
        std::vector<IpuTransfer> send, recv;
        for (std::size_t k = 0; k < K; ++k) {
            if (st[k].builder != slot || !fwd[k])
                continue;
            b.call(uint32_t(st[k].fwd), mb.fwd[k], mb.perIteration);
            if (st[k].stash >= 0)
                b.call(uint32_t(st[k].stash), mb.fwd[k], mb.perIteration);
            if (st[k].output >= 0 && st[k].outputPerMicroBatch)
                b.call(uint32_t(st[k].output), mb.fwd[k], mb.perIteration, st[k].outputPeriod);
        }
        for (std::size_t k = K; k-- > 0;) {
            if (st[k].builder != slot || !bwd[k])
                continue;
            if (st[k].restore >= 0)
                b.call(uint32_t(st[k].restore), mb.bwd[k], mb.perIteration);
            b.call(uint32_t(st[k].bwd), mb.bwd[k], mb.perIteration);
        }
        // Every IPU takes part in the copy, so Poplar can run the copies in parallel.
        for (std::size_t k = 0; k < K; ++k) {
            if (st[k].builder != slot)
                continue;
            if (fwd[k] && k + 1 < K && st[k].fwdBytesToNext)
                send.push_back({st[k + 1].ipu, st[k].fwdBytesToNext});
            if (bwd[k] && k > 0 && st[k].bwdBytesToPrevious)
                send.push_back({st[k - 1].ipu, st[k].bwdBytesToPrevious});
            if (k > 0 && fwd[k - 1] && st[k - 1].fwdBytesToNext)
                recv.push_back({st[k - 1].ipu, st[k - 1].fwdBytesToNext});
            if (k + 1 < K && bwd[k + 1] && st[k + 1].bwdBytesToPrevious)
                recv.push_back({st[k + 1].ipu, st[k + 1].bwdBytesToPrevious});
        }
        b.ipuCopy("pipeline copy", std::move(send), std::move(recv));
        b.externalSync();
    }
}

} // namespace

void composePipeline(const std::vector<ProgramBuilder*>& builders, const std::vector<StageFragments>& st,
                     const PipelineActivity& a, bool training, uint64_t deviceIterations)
{
    for (const auto& stage : st)
        if (stage.builder >= builders.size())
            throw std::logic_error("a stage without a builder");
    auto all = [&](auto&& f) {
        for (auto* b : builders)
            f(*b);
    };
    if (training)
        all([&](ProgramBuilder& b) { b.beginRepeat("device_iterations", deviceIterations); });
    if (a.repeats > 1)
        all([&](ProgramBuilder& b) { b.beginRepeat("micro_batches", a.repeats); });
    // Micro-batch numbers: count each stage's passes in cycle order.
    const std::size_t K = st.size();
    std::vector<std::vector<int64_t>> fwdMb(a.cycles(), std::vector<int64_t>(K, -1)), bwdMb = fwdMb;
    std::vector<int64_t> nf(K, 0), nb(K, 0);
    for (std::size_t c = 0; c < a.cycles(); ++c)
        for (std::size_t k = 0; k < K; ++k) {
            if (a.fwd[c][k])
                fwdMb[c][k] = nf[k]++;
            if (a.bwd[c][k])
                bwdMb[c][k] = nb[k]++;
        }
    // Consecutive cycles with the same activity (the steady state) run as one Repeat.
    for (std::size_t c = 0; c < a.cycles();) {
        std::size_t e = c + 1;
        while (e < a.cycles() && a.fwd[e] == a.fwd[c] && a.bwd[e] == a.bwd[c])
            ++e;
        if (e - c > 1)
            all([&](ProgramBuilder& b) { b.beginRepeat("pipeline cycles", e - c); });
        // One micro-batch at a time (sharded): the enclosing loop counts micro-batches.
        emitCycle(builders, st, a.fwd[c], a.bwd[c], {fwdMb[c], bwdMb[c], e - c > 1 || a.repeats > 1});
        if (e - c > 1)
            all([](ProgramBuilder& b) { b.endRepeat(); });
        c = e;
    }
    if (a.repeats > 1)
        all([](ProgramBuilder& b) { b.endRepeat(); });
    if (training) {
        for (const auto& stage : st)
            if (stage.update >= 0)
                builders[stage.builder]->call(uint32_t(stage.update));
        all([](ProgramBuilder& b) { b.externalSync(); });
        all([](ProgramBuilder& b) { b.endRepeat(); });
    }
    // A host call ends with the host: every IPU meets once the outputs are out.
    for (const auto& stage : st)
        if (stage.output >= 0 && !stage.outputPerMicroBatch)
            builders[stage.builder]->call(uint32_t(stage.output));
    all([](ProgramBuilder& b) { b.externalSync(); });
}

} // namespace ipusim
