// SPDX-License-Identifier: MIT
#include "workloads/strategies/Pipeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace ipusim {

uint64_t PipelineActivity::cycles() const
{
    uint64_t n = 0;
    for (std::size_t i = 0; i < runs.size(); ++i)
        n += runs[i].cycles * (i >= loopFirst && i < loopFirst + loopRuns ? loopIterations : 1);
    return n;
}

const ActivityRun& PipelineActivity::at(uint64_t c) const
{
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (i == loopFirst && loopRuns > 0) { // the loop: find the cycle within one iteration
            uint64_t body = 0;
            for (std::size_t j = i; j < i + loopRuns; ++j)
                body += runs[j].cycles;
            if (c >= body * loopIterations) {
                c -= body * loopIterations;
                i += loopRuns - 1;
                continue;
            }
            c %= body;
        }
        if (c < runs[i].cycles)
            return runs[i];
        c -= runs[i].cycles;
    }
    throw std::out_of_range("a pipeline cycle past the activity");
}

namespace {

/** The runs of cycles [0, n): `fill(c, run)` sets cycle c's activity; the activity can change
 *  only at the cycles listed in `changes` (and stays as in the cycle before elsewhere). */
template <class F>
std::vector<ActivityRun> runsOf(uint64_t n, std::vector<uint64_t> changes, uint32_t K, F fill)
{
    changes.push_back(0);
    changes.push_back(n);
    std::sort(changes.begin(), changes.end());
    changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
    std::vector<ActivityRun> runs;
    for (std::size_t i = 0; i + 1 < changes.size() && changes[i + 1] <= n; ++i) {
        ActivityRun r{std::vector<bool>(K, false), std::vector<bool>(K, false), changes[i + 1] - changes[i]};
        fill(changes[i], r);
        if (!runs.empty() && runs.back().fwd == r.fwd && runs.back().bwd == r.bwd)
            runs.back().cycles += r.cycles;
        else
            runs.push_back(std::move(r));
    }
    return runs;
}

std::vector<uint64_t> everyCycle(uint64_t n)
{
    std::vector<uint64_t> all(n);
    for (uint64_t c = 0; c < n; ++c)
        all[c] = c;
    return all;
}

/** The interleaved (1F1B) schedule: stage k forwards micro-batch m at step k + 2m and runs its
 *  backward at 2K - 1 - k + 2m. In steps 2K - 1 to 2G - 1 every stage is busy, forward and
 *  backward in turn, so they repeat with a period of two: G - K iterations of a two-step loop
 *  (the last busy step runs after it). */
PipelineActivity interleaved(uint32_t K, uint64_t G)
{
    auto fill = [&](uint64_t t, ActivityRun& r) {
        for (uint32_t k = 0; k < K; ++k) {
            r.fwd[k] = t >= k && (t - k) % 2 == 0 && (t - k) / 2 < G;
            const uint64_t b = 2 * K - 1 - k;
            r.bwd[k] = t >= b && (t - b) % 2 == 0 && (t - b) / 2 < G;
        }
    };
    auto steps = [&](std::vector<ActivityRun>& out, uint64_t from, uint64_t to) { // one run per step
        for (uint64_t t = from; t < to; ++t) {
            out.push_back({std::vector<bool>(K, false), std::vector<bool>(K, false), 1});
            fill(t, out.back());
        }
    };
    PipelineActivity a;
    const uint64_t n = 2 * (G + K - 1), first = 2 * K - 1;
    const uint64_t loops = 2 * G > first ? (2 * G - first) / 2 : 0;
    if (loops < 2) { // no steady state worth a loop
        a.runs = runsOf(n, everyCycle(n), K, fill);
        return a;
    }
    steps(a.runs, 0, first);
    a.loopFirst = a.runs.size();
    a.loopRuns = 2;
    a.loopIterations = loops;
    steps(a.runs, first, first + 2);
    steps(a.runs, first + 2 * loops, n);
    return a;
}

} // namespace

PipelineActivity pipelineActivity(StrategyKind kind, PipelineSchedule schedule, uint32_t K, uint64_t G, bool training)
{
    PipelineActivity a;
    const bool oneAtATime = kind == StrategyKind::Sharded || schedule == PipelineSchedule::Sequential;
    if (oneAtATime) {
        // One micro-batch at a time: forward down the stages, backward back up.
        const uint64_t n = training ? 2 * K - 1 : K;
        a.runs = runsOf(n, everyCycle(n), K, [&](uint64_t c, ActivityRun& r) {
            if (c < K)
                r.fwd[c] = true;
            if (training && c + 1 >= K)
                r.bwd[2 * K - 2 - c] = true;
        });
        a.repeats = G;
        return a;
    }
    if (!training || schedule == PipelineSchedule::Grouped) {
        // Stage k forwards in cycles [k, k + G) and, training, runs backwards in [2K - 2 - k, 2K - 2 - k + G).
        const uint64_t n = training ? G + 2 * K - 2 : G + K - 1;
        std::vector<uint64_t> changes;
        for (uint32_t k = 0; k < K; ++k)
            changes.insert(changes.end(), {k, k + G, 2 * K - 2 - k, 2 * K - 2 - k + G});
        a.runs = runsOf(n, changes, K, [&](uint64_t c, ActivityRun& r) {
            for (uint32_t k = 0; k < K; ++k) {
                r.fwd[k] = c >= k && c - k < G;
                const uint64_t b = 2 * K - 2 - k;
                r.bwd[k] = training && c >= b && c - b < G;
            }
        });
        return a;
    }
    return interleaved(K, G);
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

/** One pipeline cycle of the program of the IPU whose builder is `slot`. */
void emitCycle(ProgramBuilder& b, uint32_t slot, const std::vector<StageFragments>& st, const std::vector<bool>& fwd,
               const std::vector<bool>& bwd, const CycleBatches& mb)
{
    const std::size_t K = st.size();
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

} // namespace

void composeIpuProgram(ProgramBuilder& b, uint32_t slot, const std::vector<StageFragments>& st, const PipelineActivity& a,
                       bool training, uint64_t deviceIterations)
{
    if (training)
        b.beginRepeat("device_iterations", deviceIterations);
    if (a.repeats > 1)
        b.beginRepeat("micro_batches", a.repeats);
    // Micro-batches are numbered per stage, its passes counted in cycle order; a run of equal
    // cycles (the steady state) is one Repeat, whose iterations move every active stage on by
    // one. A periodic steady state is a loop of its runs, each stage moving on by one per
    // iteration.
    const std::size_t K = st.size();
    std::vector<int64_t> nf(K, 0), nb(K, 0);
    for (std::size_t i = 0; i < a.runs.size(); ++i) {
        const ActivityRun& run = a.runs[i];
        const bool inLoop = a.loopRuns > 0 && i >= a.loopFirst && i < a.loopFirst + a.loopRuns;
        if (inLoop && run.cycles != 1)
            throw std::logic_error("a pipeline loop whose runs are longer than a cycle");
        const uint64_t times = inLoop ? a.loopIterations : run.cycles; // cycles this run stands for
        CycleBatches mb{std::vector<int64_t>(K, -1), std::vector<int64_t>(K, -1), times > 1 || a.repeats > 1};
        for (std::size_t k = 0; k < K; ++k) {
            if (run.fwd[k])
                mb.fwd[k] = std::exchange(nf[k], nf[k] + int64_t(times));
            if (run.bwd[k])
                mb.bwd[k] = std::exchange(nb[k], nb[k] + int64_t(times));
        }
        if (inLoop && i == a.loopFirst)
            b.beginRepeat("pipeline steps", a.loopIterations);
        if (run.cycles > 1)
            b.beginRepeat("pipeline cycles", run.cycles);
        // One micro-batch at a time (sharded): the enclosing loop counts micro-batches.
        emitCycle(b, slot, st, run.fwd, run.bwd, mb);
        if (run.cycles > 1 || (inLoop && i + 1 == a.loopFirst + a.loopRuns))
            b.endRepeat();
    }
    if (a.repeats > 1)
        b.endRepeat();
    if (training) {
        for (const auto& stage : st)
            if (stage.builder == slot && stage.update >= 0)
                b.call(uint32_t(stage.update));
        b.externalSync();
        b.endRepeat();
    }
    // A host call ends with the host: every IPU meets once the outputs are out.
    for (const auto& stage : st)
        if (stage.builder == slot && stage.output >= 0 && !stage.outputPerMicroBatch)
            b.call(uint32_t(stage.output));
    b.externalSync();
}

void composePipeline(const std::vector<ProgramBuilder*>& builders, const std::vector<StageFragments>& st,
                     const PipelineActivity& a, bool training, uint64_t deviceIterations)
{
    for (const auto& stage : st)
        if (stage.builder >= builders.size())
            throw std::logic_error("a stage without a builder");
    for (uint32_t slot = 0; slot < builders.size(); ++slot)
        composeIpuProgram(*builders[slot], slot, st, a, training, deviceIterations);
}

} // namespace ipusim
