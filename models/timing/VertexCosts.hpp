// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/IpuParams.hpp"

#include <cstdint>
#include <string>
#include <vector>

// PopLibs' codelet cycle estimators, restated from poplibs-costs.md §3 (poplin, popops, popnn
// and poprand). Every function returns TILE cycles for one vertex on one tile: supervisor
// work plus W times the slowest worker (the barrel gives each worker every W-th cycle).
namespace ipusim::costs {

/** Shape of an AMP convolution vertex on one tile. */
struct ConvShape
{
    uint64_t positions = 1;      // output positions (rows of the matmul) on this tile
    uint32_t inGroups = 1;       // groups of AMP in_chans_per_group input channels
    uint32_t outGroups = 1;      // groups of AMP units output channels
    uint32_t convGroups = 1;
    uint32_t kernelHeight = 1;
    uint32_t kernelWidth = 1;
    Precision input = Precision::FP16;
    Precision partials = Precision::FP32;
    /** PopLibs' use128BitConvUnitLoad: weights loaded 128 bits at a time, at the AMP's full
     *  coefficient-load rate. Off by default in PopLibs (ConvOptions), which then loads 64 bits
     *  at a time, at half the rate (poplibs-costs §3.2). */
    bool wideLoads = false;
};

/** Worker cycles of ConvPartial1x1Out for n output positions (§3.2). */
uint64_t convPartial1x1WorkerCycles(const IpuParams& hw, const ConvShape& s, uint64_t n, bool zeroing);
/** AMP ConvPartial1x1Out (kernel 1x1; the matmul vertex), §3.2. */
uint64_t convPartial1x1Out(const IpuParams& hw, const ConvShape& s);
/** AMP ConvPartialnx1 (kernels taller/wider than 1), §3.2. */
uint64_t convPartialNx1(const IpuParams& hw, const ConvShape& s);
/** Picks the vertex a convolution uses: 1x1 kernels take ConvPartial1x1Out. */
uint64_t convPartial(const IpuParams& hw, const ConvShape& s);

enum class UnaryOpKind { Relu, Exp, Log, Sqrt, Rsqrt, Inverse, Tanh, Sigmoid, GeluErf, Neg, Square, Erf, Abs, LogicalNot };
enum class BinaryOpKind { Add, Sub, Mul, Div, Max, Equal, NotEqual, Greater, Less, Pow };

/** popops UnaryOp1D (in place: UnaryOp1DInPlace) over n elements: 20 + 6 x (preamble + the
 *  busiest worker's unrolled loop), poplibs-costs §3.4. */
uint64_t unaryOp(const IpuParams& hw, UnaryOpKind op, Precision type, uint64_t n, bool inPlace = false);
/** popops BinaryOp1D (in place: BinaryOp1DInPlace) over n elements: 11 + 6 x (preamble + loop), §3.4. */
uint64_t binaryOp(const IpuParams& hw, BinaryOpKind op, Precision type, uint64_t n, bool inPlace = false);
/** popops BinaryOp1D<EQUAL> over n int32 elements (bool out): the integer preamble 26 and 22
 *  cycles per 4 elements (popops' binary-op table, §3.4). */
uint64_t equalInt32(const IpuParams& hw, uint64_t n);

/** popops BroadcastScalar1D(InPlace), X op a scalar, over n elements (§3.9): 11 + 6 x (20 + the
 *  busiest worker's loop); ADD, SUB and MUL 2 cycles a vector, DIVIDE 8 (fp16) or 6 (fp32) per 2
 *  elements, MAXIMUM 3 per 4 (fp16) or per 2 (fp32), and the comparisons (bool out, so never in
 *  place) NOT_EQUAL 10 or 18 per 4 and GREATER_THAN 8 or 12 per 4, POWER 325 (fp16) or 312 (fp32)
 *  an element (popops' broadcastOpPerfInfo).
 *  EQUAL has no estimate here. */
uint64_t broadcastScalar(const IpuParams& hw, BinaryOpKind op, Precision type, uint64_t n);

/** The expressions ipusim lowers to popops' generated map codelets (ExpressionGenerator.cpp),
 *  as PopART writes them: HardSigmoid's max(0, min(1, alpha x + beta)), its gradient's
 *  11-operation select of alpha dy inside the linear part, and Max's argument gradient. */
enum class MapExpr { HardSigmoid, HardSigmoidGrad, MaxArgGrad };
/** What the generator's estimate reads of an expression: its fused operations (one per unary,
 *  binary or ternary node; constants and placeholders are free), its tensor inputs, and whether
 *  its codelet vectorises (SIGNUM, NOT, ERF and casts do not). */
struct MapExprShape
{
    uint32_t ops = 1, inputs = 1;
    bool vectorised = true;
};
MapExprShape shapeOf(MapExpr e);
/** A generated map codelet over a tile's n contiguous elements (ExpressionGenerator's
 *  setPerfEstimate): as one MultiVertex when a worker's vector store is atomic, 20 + inputs x
 *  (n / vw + n mod vw) x ops rounded up to a multiple of the workers; else one vertex a worker,
 *  13 + the same of its share, tile cycles workers x the busiest one's. */
uint64_t fusedMap(const IpuParams& hw, MapExpr e, Precision type, uint64_t n);

/** popops SelectInPlace over n elements, a 2-D worker vertex per worker: its estimator as
 *  written, 5 + selectCycles of in1.size() (the count of regions, 1 a worker, not their
 *  elements) with selectCycles(m) = 6 + 5 m, so 16 a worker whatever n; tile cycles 6 x 16. */
uint64_t selectInPlace(const IpuParams& hw, uint64_t n);

/** popops Select over n elements (torch.where, masked_fill), a 2-D worker vertex per worker,
 *  each a region of its share: 5 + selectCycles(m), selectCycles(m) = 6 + 5 an element (no
 *  vectorisation: load the three operands, select, store); tile cycles 6 x the busiest worker's. */
uint64_t select(const IpuParams& hw, uint64_t n);

/** popops ClampInPlace over n elements, a 2-D worker vertex per worker: each worker's
 *  5 + clampCycles(its elements), clampCycles(m) = 6 + 2 cycles per vector (popops' Clamp
 *  estimator; the four Clamp variants share it); tile cycles 6 x the busiest worker's. */
uint64_t clamp(const IpuParams& hw, Precision type, uint64_t n);

/** The non-linearities popnn has gradient vertices for. */
enum class NonLinearity { Relu, Sigmoid, Tanh, Gelu };
/** popnn NonLinearity1DInPlace<GELU> over n elements (costs the same out of place), §3.5:
 *  9 + 6 x (20 + 3 + o (v + 1) + tail), v vectors per worker, o = 5 (fp16) or 10 (fp32). */
uint64_t geluNonLinearity(const IpuParams& hw, Precision type, uint64_t n);
/** popnn NonLinearityGrad1D<f> over n elements, §3.5: 9 + 6 x (20 + 5 + g (v - 1) + tail),
 *  g = 3 (ReLU, sigmoid, tanh) or 5 / 10 (GELU, fp16 / fp32). */
uint64_t nonLinearityGrad(const IpuParams& hw, NonLinearity f, Precision type, uint64_t n);
/** popops ScaledAddSupervisor, X += a * Y over n elements of one type, a tensor scale
 *  (poplibs-costs §3.6): 57 (63 with a remainder) + 6 x (15 + 6 + 3 (v - 1) + 2 + 1 + tail + 1),
 *  v = floor(vectors / 6). */
uint64_t scaledAdd(const IpuParams& hw, Precision type, uint64_t n);
/** popops Cast1D between fp32 and fp16 over n elements (poplibs-costs §3.7): 12 + 6 x (19 + body
 *  + 18); fp32 to fp16 2 cycles per 4 elements, fp16 to fp32 1 per 2. */
uint64_t cast(const IpuParams& hw, Precision from, Precision to, uint64_t n);
/** Cast1D from bool to fp16 or fp32: not an auxiliary-pipeline conversion, so one element per
 *  2 cycles (castWorkerCycles' general path, §3.7): 12 + 6 x (19 + 2 m + 18). */
uint64_t castFromBool(const IpuParams& hw, uint64_t n);
/** Reduction of `partialsPerOutput` partials into each of `outputs` outputs (the conv partials'
 *  general path, §3.3). */
uint64_t reduce(const IpuParams& hw, Precision partials, uint64_t outputs, uint64_t partialsPerOutput);
/** popops ReduceAdd, SCALAR_OUTPUT_SINGLE_INPUT: one output of n contiguous partials, a worker
 *  vertex (getCyclesEstimateForSingleInput, poplibs-costs §3.8), in tile cycles: 6 x (17 +
 *  floor(2n / A) + n mod A, + 5 for an output that is not fp32), A = 8 (fp16) or 4 (fp32). */
uint64_t singleInputReduce(const IpuParams& hw, Precision partials, Precision out, uint64_t n);
/** popops ReduceAdd, STRIDED_REDUCE: `outputs` adjacent columns each summing n partials `stride`
 *  elements apart (per-channel sums over [rows x channels]), the columns split over the workers
 *  in vectors (getCyclesEstimateForStridedReduce and its planner model, §3.8): 6 x (16 +
 *  ceil(columns per worker / group) x (3 + post + 3 + n - 1)), group = gcd(64-bit group, stride),
 *  post = 5 (fp32 partials), 8 (fp16 to fp16) or 7 (fp16 to fp32). */
uint64_t stridedReduce(const IpuParams& hw, Precision partials, Precision out, uint64_t outputs, uint64_t n, uint64_t stride);
/** Row reductions (sums or maxima along contiguous rows: softmax, LayerNorm, losses), the
 *  popops all-regions-continuous path (§3.8): the rows' elements split evenly over the workers,
 *  one cycle per vector, 12 cycles per row a worker finishes and 17 of set-up. */
uint64_t reduceRows(const IpuParams& hw, Precision type, uint64_t rows, uint64_t length);
/** The popnn pooling vertices: MaxPooling, SumPooling (average pooling forward, and the
 *  average-pool gradient over the scaled gradient) and MaxPoolingGrad. */
enum class PoolVertex { Max, Sum, MaxGrad };

/** One tile's pooling work, as the vertex's worklists see it (poplibs-costs §3.11). */
struct PoolTileWork
{
    uint64_t channelVectors = 1; // chansPerGroup / vector width (chansPerGroupD)
    uint64_t channelGroups = 1;  // groups of chansPerGroup channels on the tile
    uint64_t positions = 0;      // field positions per channel group (outputs; the gradient's: inputs)
    uint64_t rowWidth = 1;       // positions per row of the field: worklist rows are cut at its multiples
    uint64_t itemsPerRow = 1;    // work items (kernel positions) per row segment
    uint64_t stride = 1;         // a segment of w positions takes ceil(w / stride) outputs per item
};

/** popnn getPoolingCycles as the vertex estimator calls it (unpack costs 0, the worklist's 5):
 *  the positions split evenly over the workers, each worker's range cut at row boundaries into
 *  segments; 7 + 6 x the slowest worker + 6 (poplibs-costs §3.11). */
uint64_t pooling(const IpuParams& hw, PoolVertex vertex, const PoolTileWork& work);
/** poplin InverseStdDeviation, 1 / sqrt(variance + eps) of n channels (a worker vertex, one
 *  region per worker): 6 + 4 + 5 per 2 elements per worker, in fp32 (poplibs-costs §3.10). */
uint64_t inverseStdDeviation(const IpuParams& hw, uint64_t n);
/** poprand DropoutSupervisor over n elements (draw the mask and apply it):
 *  W x ceil(vectors / W) x 2 + 40 (poprandCycleEstimators.cpp). */
uint64_t dropout(const IpuParams& hw, Precision type, uint64_t n);
/** popops EncodeOneHot of n indices (a worker vertex per worker's share): 11 + 74 per index
 *  (poplibs-costs §3.12). */
uint64_t encodeOneHot(const IpuParams& hw, uint64_t n);
/** popops Fill of n elements (zeroing a gradient), split over the workers in whole vectors, at
 *  least two a worker; the busiest worker's m elements (§3.7): 6 x (26 + m / 4) fp16,
 *  6 x (23 + m / 2 + m mod 2) fp32. */
uint64_t fill(const IpuParams& hw, Precision type, uint64_t n);
/** popops MultiSlice (§3.12, getMultiSliceCycleEstimate): each worker checks its share of the
 *  `offsets` against the rows this tile holds (19 cycles each) and copies the `elements` that
 *  hit, 2 cycles per vector; 30 cycles of set-up per worker. */
uint64_t multiSlice(const IpuParams& hw, Precision type, uint64_t offsets, uint64_t elements);
/** popops MultiUpdateAdd: as MultiSlice, with a load, add and store per vector (3 cycles). */
uint64_t multiUpdateAdd(const IpuParams& hw, Precision type, uint64_t offsets, uint64_t elements);
/** On-tile copy of `bytes` (rearrangement before a vertex), §3.7. */
uint64_t copy(const IpuParams& hw, uint64_t bytes, unsigned elementBytes);

} // namespace ipusim::costs
