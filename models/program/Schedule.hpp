// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/TileRuns.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

// The Schedule: the contract between the compiler (workloads/) and the hardware model
// (models/). Plain data, built by lowering or loaded from JSON.
namespace ipusim {

/** Bytes one tile moves in an exchange phase. */
struct ExchangeBytes
{
    uint64_t send = 0;
    uint64_t recv = 0;
    uint64_t recvShared = 0; // also received by every tile on this tile's receive bus
    bool operator==(const ExchangeBytes& o) const { return send == o.send && recv == o.recv && recvShared == o.recvShared; }
};

/** A compute set: cycles per tile (already costed), and the vertices behind them. */
struct ComputeStep
{
    std::string name;
    TileRuns<uint64_t> cycles;
    TileRuns<uint32_t> vertices;         // vertex instances per tile (vertex state)
    std::vector<std::string> vertexTypes; // codelets used (code size)
    uint32_t id = 0;                      // index among the program's compute sets
    uint32_t point = 0;                   // program point, for liveness
    std::string outline;                  // steps with one outline key share code (PopART outlining)
    double flops = 0;                     // of one execution: 2 per MAC of a matmul or convolution
};

/** A statically scheduled exchange phase. */
struct ExchangeStep
{
    std::string name;
    TileRuns<ExchangeBytes> bytes;
    uint32_t point = 0;
    std::string outline; // as ComputeStep::outline
};

/** Internal: this IPU's tiles. External: every IPU of the system (Sync-Links). */
enum class SyncKind { Internal, External };
struct SyncStep
{
    SyncKind kind = SyncKind::Internal;
};

enum class Direction { ToIpu, FromIpu };
struct HostTransferStep
{
    std::string name;
    Direction direction = Direction::ToIpu;
    uint64_t bytes = 0;
    uint32_t point = 0;
    // Prefetch into IO tiles: wait only until this step's data (fetched during earlier
    // micro-batches) is in, then fetch more in the background, `prefetchDepth` ahead.
    bool prefetch = false;
    uint32_t prefetchDepth = 1;
};

/** Bytes to or from one other IPU. */
struct IpuTransfer
{
    uint32_t peer = 0;
    uint64_t bytes = 0;
};

/** A copy over IPU-Links: what this IPU sends and receives; it lasts as long as its slowest
 *  transfer. */
struct IpuCopyStep
{
    std::string name;
    std::vector<IpuTransfer> send, recv;
    uint32_t point = 0;
};

/** A remote-buffer transfer between an IPU and Streaming Memory through the gateway. */
struct StreamingMemoryStep
{
    std::string name;
    Direction direction = Direction::ToIpu; // ToIpu: load, FromIpu: store
    uint64_t bytes = 0;
    uint32_t point = 0;
};

enum class CollectiveKind { AllReduce, ReduceScatter, AllGather };

/** The kind as schedules write it: all_reduce, reduce_scatter, all_gather. */
inline const char* nameOf(CollectiveKind k)
{
    switch (k) {
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::AllReduce: break;
    }
    return "all_reduce";
}

/** A collective across replicas over the links: `ring` lists its IPUs (one per replica; the
 *  links' collectivePlan orders them), `bytes` the tensor each holds whole. */
struct CollectiveStep
{
    std::string name;
    CollectiveKind kind = CollectiveKind::AllReduce;
    uint64_t bytes = 0;
    std::vector<uint32_t> ring;
    uint32_t point = 0;
};

/** Runs a fragment of the program (a shared code block, like Poplar's program::Call). */
struct CallStep
{
    uint32_t fragment = 0;
    // The micro-batch it works on, for traces: base, plus the iteration of the enclosing
    // loop when `perIteration` (the steady state of a pipeline runs as one loop).
    int64_t microBatch = -1;
    bool perIteration = false;
    uint32_t period = 1; // run only every period-th time this step is reached (EveryN outputs)
};

struct Step;
struct RepeatStep
{
    std::string name;
    uint64_t count = 1;
    std::vector<Step> body;
};

struct Step
{
    std::variant<ComputeStep, ExchangeStep, SyncStep, HostTransferStep, RepeatStep, IpuCopyStep, CallStep, CollectiveStep,
                 StreamingMemoryStep> op;
};

/** A tensor's bytes on each tile and when it is live (program points, inclusive). */
struct TensorAlloc
{
    std::string name;
    std::string kind; // weight, optimizer, activation, gradient, temporary, code, ...
    TileRuns<uint64_t> bytes;
    bool alwaysLive = false;
    uint32_t from = 0;
    uint32_t to = 0;
};

/** What one IPU executes. */
struct Program
{
    uint32_t ipu = 0;
    std::vector<Step> steps;
    std::vector<std::vector<Step>> fragments; // bodies of CallSteps, each compiled once
    std::vector<std::string> fragmentNames;
    std::vector<TensorAlloc> tensors;
    uint32_t numPoints = 0;
    uint32_t numComputeSets = 0;
};

/** How a placed model runs (for reports): stages, their IPUs, fragments and stash depths. */
struct StrategyInfo
{
    struct StageInfo
    {
        uint32_t ipu = 0;
        std::vector<std::string> blocks;
        uint32_t stashDepth = 0;
        int forwardFragment = -1, backwardFragment = -1;
    };
    std::string kind, schedule;
    uint64_t pipelineCycles = 0; // per device iteration (training) or host call (inference)
    uint32_t replicas = 1;
    bool replicatedTensorSharding = false;
    std::vector<StageInfo> stages;
};

struct Schedule
{
    std::string name;
    std::vector<Program> programs;
    uint64_t samplesPerHostCall = 0;
    std::string sampleKind = "samples"; // what a sample is, for reports ("sequences" for BERT, "rows" packed)
    /** Packed BERT: sequences a sample (row) holds on average, for sequences/s; 0: not packed. */
    double sequencesPerSample = 0;
    /** Matmul and convolution FLOPs per sample of the model's forward (and, training,
     *  backward) pass, without recomputation: the figure achieved TFLOPS are quoted in. */
    double modelFlopsPerSample = 0;
    /** Peak AMP multiply-accumulates per tile cycle at the model's precision (0: unknown). */
    uint32_t peakMacsPerTileCycle = 0;
    /** The program runs inference (forward only): reports give its latency per micro-batch. */
    bool inference = false;
    std::optional<StrategyInfo> strategy;
};

/** The IPUs of the other replicas, which run the program of IPU `ipu` in lockstep: replica r
 *  takes the r-th run of as many IPUs as there are programs (ring(ipu) in the placement). By
 *  programmed IPU. */
std::map<uint32_t, std::vector<uint32_t>> replicaCopies(const Schedule& s);

/** Steps that are program points (liveness positions) and carry a name. */
template <class T>
inline constexpr bool kIsPointStep = std::is_same_v<T, ComputeStep> || std::is_same_v<T, ExchangeStep> ||
                                     std::is_same_v<T, HostTransferStep> || std::is_same_v<T, IpuCopyStep> ||
                                     std::is_same_v<T, CollectiveStep> || std::is_same_v<T, StreamingMemoryStep>;

/** Steps that carry an outline key (code shared with identical steps). */
template <class T>
inline constexpr bool kHasOutline = std::is_same_v<T, ComputeStep> || std::is_same_v<T, ExchangeStep>;

/** Numbers program points (compute, exchange, host and IPU-copy steps: fragments first, then
 *  the main program, loop bodies once) and compute-set ids. Call after building a program. */
void numberPoints(Program& program);

/** A lower bound of the cycles one run of a program takes, and the step that sets it: the
 *  longest single compute step (its busiest tile works at least that long whatever else
 *  happens) and a loop's count times its body's bound; saturates at kCycleCeiling. It lets a
 *  run that must pass the simulator's clock fail before simulating. */
struct CycleBound
{
    uint64_t cycles = 0;
    std::string step;
};
CycleBound lowerBoundCycles(const Program& program);

/** The steps one run of a program executes, loops unrolled and calls followed; saturates. */
uint64_t stepsExecuted(const Program& program);

/** How many times each prefetching host transfer runs in one run of the program (a host call),
 *  loops unrolled and calls followed (a call every N-th time counted as 1/N of its reaches): the
 *  micro-batches its data is fetched ahead for, none past the call's last. */
std::map<const HostTransferStep*, uint64_t> prefetchRunsPerCall(const Program& program);

/** Step `index` of `body`, a host transfer, starts a host exchange: Poplar merges stream copies
 *  that are adjacent in one sequence into one exchange with the host, so no host transfer but
 *  prefetched ones (fetched in the background, apart) comes right before it in the same body (a
 *  loop's next iteration or a called fragment is a new sequence). */
inline bool opensHostExchange(const std::vector<Step>& body, std::size_t index)
{
    for (std::size_t k = index; k-- > 0;) {
        const auto* before = std::get_if<HostTransferStep>(&body[k].op);
        if (!before)
            return true;
        if (!before->prefetch)
            return false;
    }
    return true;
}

/** Calls f(step) for every step, loop bodies once, in program order. */
template <class F>
void forEachStep(const std::vector<Step>& steps, F&& f)
{
    for (const auto& s : steps) {
        f(s);
        if (auto* r = std::get_if<RepeatStep>(&s.op))
            forEachStep(r->body, f);
    }
}
template <class F>
void forEachStep(std::vector<Step>& steps, F&& f)
{
    for (auto& s : steps) {
        f(s);
        if (auto* r = std::get_if<RepeatStep>(&s.op))
            forEachStep(r->body, f);
    }
}

} // namespace ipusim

namespace ipusim {
/** Calls f(step) for every step of a program: its fragments, then its main steps. */
template <class P, class F>
void forEachProgramStep(P& program, F&& f)
{
    for (auto& fragment : program.fragments)
        forEachStep(fragment, f);
    forEachStep(program.steps, f);
}
} // namespace ipusim
