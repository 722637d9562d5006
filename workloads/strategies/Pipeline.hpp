// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/lowering/ProgramBuilder.hpp"
#include "workloads/strategies/Placement.hpp"

#include <cstdint>
#include <vector>

namespace ipusim {

/** Consecutive pipeline cycles in which the same stages run their forward and backward passes. */
struct ActivityRun
{
    std::vector<bool> fwd, bwd; // [stage]
    uint64_t cycles = 1;
};

/** Which stage runs its forward and its backward pass in each pipeline cycle, as runs of equal
 *  cycles: a grouped pipeline has O(K) runs whatever its micro-batches, so its size and the
 *  time to build it do not grow with gradient accumulation. A steady state whose cycles
 *  alternate (interleaved: forward, backward, forward, ...) is one block of runs repeated,
 *  which the composer emits as one loop, so that the simulator can skip its iterations. */
struct PipelineActivity
{
    std::vector<ActivityRun> runs;
    /** runs[loopFirst, loopFirst + loopRuns) take place loopIterations times in a row (none when
     *  loopRuns is 0); each stage passes at most once forward and once backward in them. */
    std::size_t loopFirst = 0, loopRuns = 0;
    uint64_t loopIterations = 1;
    uint64_t repeats = 1; // the whole pattern runs this many times (sharded)
    [[nodiscard]] uint64_t cycles() const;
    /** The run holding cycle `c` (below cycles()). */
    [[nodiscard]] const ActivityRun& at(uint64_t c) const;
};

/** The activity of K stages over G micro-batches (training: forward and backward; inference:
 *  forward only).
 *  - grouped (PopART): G + 2K - 2 cycles; stage k runs the forward of micro-batch c - k and the
 *    backward of micro-batch c - (2K - 2 - k) in cycle c (the last stage's are fused);
 *  - interleaved: 2(G + K - 1) steps, each stage alternating forward and backward (1F1B); the
 *    steady state, where every stage is busy, is a loop of two steps;
 *  - sequential and sharded: one stage at a time, 2K - 1 steps per micro-batch, G times. */
PipelineActivity pipelineActivity(StrategyKind kind, PipelineSchedule schedule, uint32_t stages, uint64_t microBatches,
                                  bool training);

/** Activations stage k of K keeps for later backward passes: 2(K-1-k)+1 grouped, K-k
 *  interleaved, none on the last stage of a grouped pipeline or when one micro-batch is in
 *  flight (sequential, sharded). */
uint32_t stashDepth(StrategyKind kind, PipelineSchedule schedule, uint32_t stages, uint32_t stage, bool training);

/** A stage's compiled fragments (ids in its IPU's builder; -1 when absent) and what it sends. */
struct StageFragments
{
    uint32_t ipu = 0;
    uint32_t builder = 0; // index of its IPU's builder (stages may share an IPU)
    int fwd = -1, stash = -1, restore = -1, bwd = -1, update = -1, output = -1;
    uint64_t fwdBytesToNext = 0, bwdBytesToPrevious = 0;
    bool outputPerMicroBatch = false; // call `output` after each forward (every outputPeriod-th)
    uint32_t outputPeriod = 1;
};

/** Emits the main program of the IPU whose stages have StageFragments::builder `slot`: per
 *  cycle the forward fragments of its active stages (in stage order), then their backward
 *  fragments (in reverse), then the IPU copy every IPU takes part in, then an external sync;
 *  identical consecutive cycles become a Repeat. Training wraps the pipeline, the weight update
 *  and a sync in the device-iteration loop; inference pipelines the device iterations'
 *  micro-batches. An IPU's program needs only its own fragments: each can be finished (and its
 *  memory accounted) before the next IPU's stages are compiled. */
void composeIpuProgram(ProgramBuilder& builder, uint32_t slot, const std::vector<StageFragments>& stages,
                       const PipelineActivity& activity, bool training, uint64_t deviceIterations);

/** composeIpuProgram for every IPU: `builders` holds one builder per IPU, indexed by
 *  StageFragments::builder. */
void composePipeline(const std::vector<ProgramBuilder*>& builders, const std::vector<StageFragments>& stages,
                     const PipelineActivity& activity, bool training, uint64_t deviceIterations);

} // namespace ipusim
