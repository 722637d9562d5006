// SPDX-License-Identifier: MIT
#pragma once
#include "models/timing/VertexCosts.hpp"
#include "workloads/graph/Graph.hpp"
#include "workloads/lowering/ConvPlanner.hpp"
#include "workloads/lowering/LoweredOp.hpp"
#include "workloads/lowering/OpPlan.hpp"
#include "workloads/lowering/ProgramBuilder.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace ipusim {

/** Linear mappings place whole 64-byte chunks on each tile. */
inline constexpr uint64_t kGrainBytes = 64;

/** Lowers graph ops onto the tiles of one IPU: partitions each op, costs its vertices
 *  (workloads/costs), emits sync / exchange / compute steps with the bytes each tile sends
 *  and receives, and places every tensor and temporary in tile memory. */
class GraphLowering
{
public:
    GraphLowering(const Graph& graph, ProgramBuilder& builder);

    /** Places weights, optimizer state and accumulators (always live) before the program;
     *  with `block`, only those of that block. */
    void placePersistent(const std::vector<std::string>& blocks = {});
    /** A tensor another IPU produces arrives over IPU-Links into a buffer here (always live). */
    void importTensor(int tensor);
    /** Bytes per tile of a tensor placed on this IPU. */
    [[nodiscard]] const TileRuns<uint64_t>& placement(int tensor) const { return m_b.bytes(m_handle.at(std::size_t(tensor))); }
    [[nodiscard]] bool placed(int tensor) const { return m_handle.at(std::size_t(tensor)) >= 0; }
    /** Lowers `op`; an op identical to one lowered before (see LoweredOp) emits that one's
     *  steps and tensors again under its own names instead. */
    void lower(const Op& op);
    /** Whether identical ops are lowered once (default); off, every op is lowered afresh. */
    void setReuseIdenticalOps(bool reuse) { m_reuse = reuse; }
    /** Keeps lowered ops with `other`, for an equivalent IPU: equal parameters, and a builder
     *  sharing this one's pools. The settings below are part of each op's key. */
    void shareLoweredOps(const GraphLowering& other);
    [[nodiscard]] const LoweredOps& loweredOps() const { return *m_lowered; }
    /** Data parallelism: gradients are averaged over `replicas`; with sharding, each replica
     *  keeps and updates 1/replicas of the optimizer state. Call before placePersistent(). */
    void setReplication(uint32_t replicas, bool sharded)
    {
        m_replicas = replicas;
        m_sharded = sharded;
    }
    /** Optimizer state in Streaming Memory: loaded before and stored after each update. */
    void setOffloadOptimizer(bool offload)
    {
        m_offload = offload;
    }
    /** Tiles [first, first + count) of the chip are IO tiles: host inputs are prefetched into
     *  them, `depth` micro-batches ahead, and moved to the compute tiles (this lowering's tiles)
     *  over the exchange. */
    void setIoTiles(uint32_t first, uint32_t count, uint32_t depth = 1)
    {
        m_ioFirst = first;
        m_ioCount = count;
        m_prefetchDepth = depth;
    }
    /** Phased execution: tensors come in from Streaming Memory in one load (placed linearly,
     *  replacing any earlier placement) and go back in one store. */
    void streamIn(const std::string& name, const std::vector<int>& tensors);
    void streamOut(const std::string& name, const std::vector<int>& tensors);
    /** Output mode Sum: adds this micro-batch's outputs into always-live sums. */
    void lowerOutputSum(const std::vector<int>& outputs);
    /** Bytes this IPU keeps in Streaming Memory. */
    [[nodiscard]] uint64_t offloadedBytes() const { return m_offloadedBytes; }
    /** Averages this IPU's weight gradients over the replicas (ring collectives) and runs the
     *  optimizer `updates`, then, with sharding, gathers the updated weights. */
    void lowerUpdate(const std::vector<const Op*>& updates, const std::vector<uint32_t>& ring);

    /** Plans chosen for conv-shaped ops, by op name (for reports and tests). */
    [[nodiscard]] const std::map<std::string, ConvPlan>& plans() const { return m_plans; }

private:
    void lowerAfresh(const Op& op);
    // Identical ops (OpReuse.cpp).
    /** Everything lowering `op` reads: its kind and attributes, and each tensor's shape, type,
     *  role, placement and row split. */
    [[nodiscard]] std::vector<uint64_t> reuseKey(const Op& op) const;
    [[nodiscard]] std::vector<int> slotHandles(const Op& op) const;
    /** Lowers `op` afresh and keeps what it emitted, when it can be emitted again. */
    void lowerAndKeep(const Op& op, std::vector<uint64_t> key);
    /** Emits `lowered` for `op`; false, emitting nothing, when its names are ambiguous. */
    [[nodiscard]] bool replay(const Op& op, const LoweredOp& lowered);

    int handleOf(int tensor);
    int produce(int tensor, const TileVector& bytes) { return produce(tensor, toRuns(bytes)); }
    /** `bytes` by value: a tensor's own placement may be passed in (an in-place layout). */
    int produce(int tensor, TileRuns<uint64_t> bytes);
    void alias(int tensor, int source);
    TileVector elementsOn(int tensor) const;
    void addSends(std::vector<ExchangeBytes>& x, int tensor) const;

    /** Emits an op's plan (EmitPlan.cpp): its steps, and its tensors from their writes and reads. */
    void emit(const OpPlan& plan);
    void emitStep(const PlanStep& step);
    void produceOutput(const OpPlan::Output& out);

    void lowerConv(const Op& op);
    /** A conv-shaped problem's steps, appended to `p`: its operands' exchange (`sends`: what
     *  each tile sends of them, read from `reads`), the AMP compute set and the reduction of
     *  partials. The result is each tile's bytes of the output (the caller places it), the
     *  plan, and the row piece a tile holds when output channels split over tiles (else 0). */
    struct ConvSteps
    {
        TileVector out;
        ConvPlan plan;
        uint64_t width = 0;
    };
    ConvSteps convSteps(OpPlan& p, const std::string& name, const ConvProblem& whole, std::vector<ExchangeBytes> sends,
                        const std::vector<PlanTensor>& reads);
    // Recurrent layers (RecurrentOps.cpp).
    void lowerRecurrent(const Op& op);
    void lowerRecurrentGrad(const Op& op);
    /** A conv's groups over equal slots of tiles, each running its groups in turn. */
    struct ConvSlots
    {
        uint64_t groups = 1;
        uint32_t tilesPerSlot = 1, count = 1;
    };
    /** What a conv's tiles receive, hold and run. */
    struct ConvWork
    {
        ConvWork(uint32_t tiles, const std::string& name, double flops)
            : x(tiles), temp(tiles, 0), partials(tiles, 0), out(tiles, 0), conv{name, TileCalls(tiles), 1, flops},
              reduce{name + ".reduce", TileCalls(tiles)}
        {
        }
        std::vector<ExchangeBytes> x;
        TileVector temp, partials, out;
        ComputePlan conv, reduce;
    };
    void planConvTiles(const ConvProblem& pr, const ConvPlan& plan, const ConvSlots& slots, ConvWork& w) const;
    /** Of a conv's computed outputs, the share of real channels (AMP groups are padded) and the
     *  outputs written per output computed (a strided layer's data gradient writes more). */
    struct ConvOutputShare
    {
        double realShare = 1, written = 1;
    };
    [[nodiscard]] ConvOutputShare outputShare(const ConvProblem& pr) const;
    /** Each tile's outputs in whole real elements. */
    TileVector convOutputsHeld(const ConvProblem& pr, const ConvWork& w) const;
    /** The outputs held after every serial step of `plan` (`step`: one step's problem). */
    TileVector serialOutputs(const ConvProblem& pr, const ConvProblem& step, const ConvPlan& plan, const ConvWork& w) const;
    /** The plan of one slot's problem of `whole` (its groups spread over slots of tiles). */
    const ConvPlan& slotPlan(const ConvProblem& whole, ConvSlots& slots);
    /** A compute set filling each tile's `bytes` with zeros. */
    static ComputePlan fillOf(const std::string& name, const TileVector& bytes, Precision type);
    void lowerElementwise(const Op& op);
    /** The vertices an element-wise op runs on a tile holding `e` elements of its main operand. */
    [[nodiscard]] std::vector<VertexCall> elementwiseCalls(const Op& op, Precision type, uint64_t e) const;
    /** A tile's pooling work over `elements` of the field (outputs; for a gradient, inputs). */
    costs::PoolTileWork poolWork(const Op& op, Precision type, uint64_t elements) const;
    void lowerBiasGrad(const Op& op);
    void lowerBatchNorm(const Op& op);
    void lowerBatchNormInference(const Op& op);
    void lowerBatchNormGrad(const Op& op);
    void lowerCopy(const Op& op);
    void lowerPad(const Op& op);
    void lowerReduceRepeats(const Op& op);
    /** How reduceRuns sums: the type the tiles' own runs are read in, and whether its vertices
     *  are popops' ALL_REGIONS_CONTINUOUS reduce (else poplin's partials reduce). */
    struct RunReduction
    {
        Precision localType;
        bool continuous;
    };
    void reduceRuns(const Op& op, uint64_t run, RunReduction how, uint64_t inner = 1);
    void lowerReduce(const Op& op);
    /** A reduction's gradient: the output's gradient to every element it came from, a mean's
     *  scaled by 1 / window. */
    void broadcastGradient(const Op& op, uint64_t inner, bool scaled);
    void lowerLoss(const Op& op);
    /** The vertices a loss runs on a tile holding `e` logits in `rows` rows of `perRow`. */
    [[nodiscard]] std::vector<VertexCall> lossCalls(const Op& op, Precision type, uint64_t e, uint64_t rows, uint64_t perRow) const;
    /** A forward loss's per-row losses (of `rows` whole rows; `elems` the first part's logits
     *  per tile) summed onto tile 0, into its output. */
    void sumLosses(OpPlan& plan, const Op& op, const TileVector& elems, uint64_t rows) const;
    void lowerAccumulate(const Op& op);
    void lowerOptimizer(const Op& op);
    /** An optimizer's vertices on a tile updating `e` weights: the update, its application to
     *  the weights, and (LAMB, LARS) the norms its trust ratio takes. */
    struct OptimizerCalls
    {
        std::vector<TileCall> update, apply, norms;
        std::vector<TileCall> updateThenApply; // one step's, without a trust ratio between
    };
    [[nodiscard]] OptimizerCalls optimizerCalls(const Op& op, uint64_t e) const;
    void lowerRowwise(const Op& op);
    /** What a tile holds of a row-wise op's main operand: `elements` in `rows` pieces of `piece`. */
    struct RowShare
    {
        Precision type;
        uint64_t elements, rows, piece;
        bool affine; // a norm with gamma (and beta)
    };
    /** A broadcast operand's parts to the tiles whose elements repeat them (not gathered). */
    void addRepeatedOperand(std::vector<ExchangeBytes>& x, const Op& op, const TileVector& elems) const;
    /** The recipe of a row-wise op: the vertices a tile runs on its share. */
    [[nodiscard]] std::vector<VertexCall> rowwiseCalls(const Op& op, const RowShare& share) const;
    void lowerGather(const Op& op);
    void lowerAttentionMask(const Op& op);
    void lowerGatherGrad(const Op& op);
    void lowerHost(const Op& op);
    /** Per-channel sums over the positions of a tensor (ChannelOps.cpp). */
    struct ChannelReduce
    {
        std::string name;        // steps name.local, name.groups.in, name.groups, name.final.in
        std::string finalName;   // the last step
        int source = -1;         // the tensor summed over its positions
        uint64_t channels = 1;
        std::vector<ReduceOp> values{ReduceOp::Add};   // the sums per channel (batch norm: of x and of x squared)
        std::function<std::vector<VertexCall>(uint64_t)> extra; // a tile's element-wise work before its own sums, by its elements (or none)
        std::vector<PlanTensor> localReads, localWrites; // what that work reads besides the source, and writes
        std::vector<int> outputs; // tensors the sums become; none: a temporary
    };
    /** Appends the reduction's steps to `plan`; returns the bytes of sums per tile and, without
     *  outputs, the temporary holding them. */
    std::pair<TileVector, PlanTensor> reduceChannels(OpPlan& plan, const ChannelReduce& r);
    /** Stage 2: each channel's partial sums meet in `groups` groups of the `n` there are. */
    PlanTensor reduceChannelGroups(OpPlan& plan, const ChannelReduce& r, const TileVector& partials, uint64_t n, uint64_t groups) const;
    /** Stage 3: the group sums onto the result's tiles. */
    std::pair<TileVector, PlanTensor> finishChannels(OpPlan& plan, const ChannelReduce& r, uint64_t groups, PlanTensor groupSums);
    /** Each tile holding part of `tensor` receives `bytesPerChannel` for each of its channels. */
    void addChannelParams(std::vector<ExchangeBytes>& x, int tensor, uint64_t channels, uint64_t bytesPerChannel) const;
    /** Brings `source` onto the tiles of `target` (same layout) when it lives elsewhere: an
     *  exchange of `plan`. */
    void gather(OpPlan& plan, const std::string& name, int source, int target) const;

    const Graph& m_graph;
    ProgramBuilder& m_b;
    const IpuParams& m_hw;
    std::vector<int> m_handle; // tensor -> allocation handle (-1 before it exists)
    /** Tensor -> elements of a row (channels) each tile holds, when a producer splits rows over
     *  tiles (a conv's output channels); 0: tiles hold whole rows. */
    std::vector<uint64_t> m_width;
    /** Elements of one row of `rowLength` a tile holding `elements` of the tensor has. */
    [[nodiscard]] uint64_t rowPiece(int tensor, uint64_t rowLength, uint64_t elements) const;
    std::map<std::string, ConvPlan> m_plans;
    ConvPlanCache m_planCache;
    uint32_t m_replicas = 1;
    bool m_sharded = false;
    bool m_offload = false;
    uint32_t m_ioFirst = 0, m_ioCount = 0;
    uint32_t m_prefetchDepth = 1; // micro-batches fetched ahead into the IO tiles
    uint64_t m_offloadedBytes = 0;
    bool m_reuse = true;
    std::shared_ptr<LoweredOps> m_lowered = std::make_shared<LoweredOps>();
};

} // namespace ipusim
