// SPDX-License-Identifier: MIT
#include "models/timing/VertexCosts.hpp"

#include "models/common/CeilDiv.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace ipusim::costs {
namespace {

// Weight-load cycles per pass: every unit loads in_chans_per_group weights, at the AMP's load
// rate with 128-bit loads and half of it with PopLibs' default 64-bit loads.
uint64_t weightLoadCycles(const IpuParams& hw, const ConvShape& s)
{
    const AmpParams& amp = hw.amp(s.input, s.partials);
    const uint64_t bytes = uint64_t(amp.units) * amp.inChansPerGroup * bytesOf(s.input);
    return ceilDiv(bytes * (s.wideLoads ? 1 : 2), hw.coeffLoadBytesPerCycle);
}

// One worklist entry per worker: the field is split evenly over the W workers, so the
// slowest worker has ceil(n/W) positions and the fastest floor(n/W).
template <class F>
uint64_t innerLoop(const IpuParams& hw, uint64_t positions, uint64_t imbalanceSlack, F workerCycles)
{
    uint64_t maxT = workerCycles(ceilDiv(positions, hw.workers));
    uint64_t minT = workerCycles(positions / hw.workers);
    return std::max(hw.workers * maxT, hw.workers * minT + imbalanceSlack);
}

} // namespace

uint64_t convPartial1x1WorkerCycles(const IpuParams& hw, const ConvShape& s, uint64_t n, bool zeroing)
{
    const AmpParams& amp = hw.amp(s.input, s.partials);
    const uint64_t step = amp.cyclesPerPosition();
    const uint64_t z = zeroing ? 1 : 0;
    if (s.input == Precision::FP16) {
        // The common path: zeroing is folded into the loop (a pass that does not zero takes one
        // cycle more); 7 cycles of state retention saved.
        static constexpr uint64_t small[3] = {21, 32, 41};
        return (n < 3 ? small[n] : 37 + step * (n - 3)) + (1 - z) - 7;
    }
    // fp32: 24, 47 + 10Z, 46 + 18Z, then 46 + (2 + 8n)Z + 8(n - 3), Z = 1 on the zeroing pass.
    switch (n) {
    case 0: return 24;
    case 1: return 47 + 10 * z;
    case 2: return 46 + 18 * z;
    default: return 46 + (2 + 8 * n) * z + step * (n - 3);
    }
}

uint64_t convPartial1x1Out(const IpuParams& hw, const ConvShape& s)
{
    // PopLibs' common path: fp16 activations on 16 units, or fp32 partials (every fp32 case).
    const AmpParams& amp = hw.amp(s.input, s.partials);
    const bool common = (s.input == Precision::FP16 && amp.units == 16) || s.partials == Precision::FP32;
    const uint64_t W = hw.workers;
    const uint64_t L = weightLoadCycles(hw, s);
    const uint64_t passes = 1; // output channels per group == AMP units
    auto inner = [&](bool zeroing) {
        return innerLoop(hw, s.positions, 14, [&](uint64_t n) { return convPartial1x1WorkerCycles(hw, s, n, zeroing); });
    };
    const uint64_t cGroup = common ? 13 : 12, cIn = common ? 15 : 16, cOut = common ? 18 : 19;
    // The common path retains worker state: 7, and 3 per further (input group, conv group) pass.
    const uint64_t retention = s.input == Precision::FP16 ? 7 + 3 * (s.inGroups * s.convGroups - 1) : 0;
    uint64_t perConvGroup = cGroup + (s.inGroups - 1) * (cIn + s.outGroups * (19 + passes * (6 + L + inner(false)))) +
                            (11 + s.outGroups * (cOut + passes * (7 + L + inner(true))));
    return 50 + W * retention + s.convGroups * perConvGroup;
}

uint64_t convPartialNx1(const IpuParams& hw, const ConvShape& s)
{
    const AmpParams& amp = hw.amp(s.input, s.partials);
    const uint64_t W = hw.workers;
    const uint64_t step = amp.cyclesPerPosition();
    const bool halfPartials = s.partials == Precision::FP16;
    const uint64_t L = weightLoadCycles(hw, s);
    const uint64_t passes = 1;
    auto g = [&](uint64_t n) -> uint64_t {
        if (s.input == Precision::FP32)
            return n == 0 ? 17 : n == 1 ? 33 : n == 2 ? 44 : 45 + step * (n - 3);
        return n == 0 ? 17 : n == 1 ? 29 : n == 2 ? 34 : 34 + step * (n - 3);
    };
    // One worklist entry per worker and kernel position; 9 cycles of state retention saved.
    auto worker = [&](uint64_t n) { return 17 + (halfPartials ? 1 : 0) + 3 + g(n) - 9; };
    const uint64_t perPosition = innerLoop(hw, s.positions, 9, worker) * passes;
    const uint64_t heightTerm = 15; // AMP height 1
    const uint64_t perRowSupervisor = 14 + s.kernelWidth * (12 + passes * (L + heightTerm + 3));
    const uint64_t inner = s.kernelHeight * (perRowSupervisor + s.kernelWidth * perPosition);
    const uint64_t zeroRetention = s.partials == Precision::FP32 ? 9 : 10;
    const uint64_t zeroLoop = s.convGroups * (17 * s.outGroups + 6 * (s.outGroups - 1) + 1) + 6 * (s.convGroups - 1) + 1;
    // Partials are zeroed in a separate supervisor pass: each worker clears its share.
    const uint64_t partialElems = s.positions * amp.units;
    const uint64_t zeroPass = s.outGroups * W *
                              (ceilDiv(ceilDiv(partialElems, W), hw.vectorWidth(s.partials)) + (halfPartials ? 15 : 14));
    return 109 + W * 9 + W * zeroRetention + zeroLoop + zeroPass +
           s.convGroups * (16 + s.inGroups * (14 + s.outGroups * (14 + inner)));
}

uint64_t convPartial(const IpuParams& hw, const ConvShape& s)
{
    return s.kernelHeight * s.kernelWidth == 1 ? convPartial1x1Out(hw, s) : convPartialNx1(hw, s);
}

namespace {
// The unrolled inner loops of popops' UnaryOp and BinaryOp codelets: c cycles per u elements,
// by precision, and in place where that differs (poplibs-costs §3.4, the tables of
// popopsCycleEstimators.cpp).
struct OpLoop
{
    uint32_t c16, u16, c32, u32;
    uint32_t inPlace16, inPlace32; // c in place
    uint32_t inPlaceU16 = 0, inPlaceU32 = 0; // u in place, where it differs (0: the same)
};

OpLoop unaryLoop(UnaryOpKind op)
{
    switch (op) {
    case UnaryOpKind::Relu: return {3, 4, 3, 2, 2, 2};
    case UnaryOpKind::Exp: return {4, 4, 6, 2, 4, 6};
    case UnaryOpKind::Log: return {4, 4, 12, 2, 6, 14};
    case UnaryOpKind::Sqrt: return {23, 4, 10, 2, 23, 10};
    case UnaryOpKind::Rsqrt: return {19, 4, 8, 2, 19, 8};
    case UnaryOpKind::Inverse: return {15, 4, 6, 2, 15, 6};
    case UnaryOpKind::Tanh: return {4, 4, 12, 2, 2, 10};
    case UnaryOpKind::Sigmoid: return {6, 4, 12, 2, 4, 10};
    case UnaryOpKind::GeluErf: return {16, 1, 22, 1, 16, 22};
    case UnaryOpKind::Neg: return {2, 4, 2, 2, 3, 3};
    case UnaryOpKind::Square: return {2, 4, 2, 2, 2, 2};
    // ERF, one element per loop: 13 cycles fp16 (fp32 inside, cast in and out), 41 fp32.
    case UnaryOpKind::Erf: return {13, 1, 41, 1, 13, 41};
    // ABSOLUTE is {1, not natural}: one element a loop of 1 + 4 cycles; in place {1, natural}:
    // a vector a loop. LOGICAL_NOT exists for bool only, {17, not natural}: 21 an element (the
    // type a call gives is ignored).
    case UnaryOpKind::Abs: return {5, 1, 5, 1, 5, 5, 4, 2};
    case UnaryOpKind::LogicalNot: return {21, 1, 21, 1, 21, 21, 8, 8}; // in place {17, natural}: 8 bools a vector
    }
    throw std::logic_error("unknown unary op");
}

OpLoop binaryLoop(BinaryOpKind op)
{
    switch (op) {
    // ADD, SUB and MUL run one natural vector per 1 + 2 cycles (in place too, unless the
    // operands are forced to interleave, which PopLibs does not do by default).
    case BinaryOpKind::Add:
    case BinaryOpKind::Sub:
    case BinaryOpKind::Mul: return {3, 4, 3, 2, 3, 3};
    case BinaryOpKind::Div: return {21, 4, 10, 2, 21, 10};
    case BinaryOpKind::Max: return {4, 4, 3, 2, 4, 4};
    // Comparisons are unrolled by 4 in both float types; in place they exist for bool only.
    case BinaryOpKind::Equal: return {9, 4, 14, 4, 9, 14};
    case BinaryOpKind::NotEqual: return {11, 4, 20, 4, 11, 20};
    case BinaryOpKind::Greater:
    case BinaryOpKind::Less: return {9, 4, 14, 4, 9, 14}; // LESS_THAN as GREATER_THAN: {9 fp16, 14 fp32, by 4}
    // POWER has no power instruction: 325 (fp16) or 312 (fp32) cycles an element, in place too
    // (binaryOpPerfInfo, binaryOpInPlacePerfInfo: {325, false, 1}, {312, false, 1}).
    case BinaryOpKind::Pow: return {325, 1, 312, 1, 325, 312};
    }
    throw std::logic_error("unknown binary op");
}

uint64_t loopCycles(const IpuParams& hw, const OpLoop& l, Precision type, uint64_t n, bool inPlace)
{
    const bool half = type == Precision::FP16;
    const uint64_t m = ceilDiv(n, hw.workers); // elements of the busiest worker
    const uint64_t c = inPlace ? (half ? l.inPlace16 : l.inPlace32) : (half ? l.c16 : l.c32);
    const uint32_t inPlaceU = half ? l.inPlaceU16 : l.inPlaceU32;
    return ceilDiv(m, inPlace && inPlaceU ? inPlaceU : half ? l.u16 : l.u32) * c;
}
} // namespace

uint64_t unaryOp(const IpuParams& hw, UnaryOpKind op, Precision type, uint64_t n, bool inPlace)
{
    // UnaryOp1D: 11 + 9 of supervisor, then per worker its preamble (17; 33 for EXPONENT; 55 in
    // place) and its loop.
    const uint64_t base = inPlace ? 55 : op == UnaryOpKind::Exp ? 33 : 17;
    return hw.supervisorOverhead + 9 + hw.workers * (base + loopCycles(hw, unaryLoop(op), type, n, inPlace));
}

uint64_t binaryOp(const IpuParams& hw, BinaryOpKind op, Precision type, uint64_t n, bool inPlace)
{
    // BinaryOp1D: 11 of supervisor, then per worker its preamble (26 fp16, 29 fp32; 58 in place)
    // and its loop.
    if (inPlace && (op == BinaryOpKind::Equal || op == BinaryOpKind::NotEqual || op == BinaryOpKind::Greater || op == BinaryOpKind::Less))
        throw std::invalid_argument("BinaryOp1DInPlace of a comparison exists for bool operands only");
    const uint64_t base = inPlace ? 58 : type == Precision::FP16 ? 26 : 29;
    return hw.supervisorOverhead + hw.workers * (base + loopCycles(hw, binaryLoop(op), type, n, inPlace));
}

uint64_t equalInt32(const IpuParams& hw, uint64_t n)
{
    // BinaryOp1D's estimator takes the 26-cycle preamble for every type but float.
    return hw.supervisorOverhead + hw.workers * (26 + 22 * ceilDiv(ceilDiv(n, hw.workers), 4));
}

uint64_t broadcastScalar(const IpuParams& hw, BinaryOpKind op, Precision type, uint64_t n)
{
    // BroadcastScalar1DInPlaceSupervisor: 11 of supervisor, 20 per worker, then the busiest
    // worker's loop: one natural vector per 2 cycles for ADD/SUB/MUL, DIVIDE unrolled by 2.
    const bool half = type == Precision::FP16;
    const uint64_t m = ceilDiv(n, hw.workers);
    uint64_t loop = 0;
    switch (op) {
    case BinaryOpKind::Add:
    case BinaryOpKind::Sub:
    case BinaryOpKind::Mul: loop = 2 * ceilDiv(m, hw.vectorWidth(type)); break;
    case BinaryOpKind::Div: loop = (half ? 8 : 6) * ceilDiv(m, 2); break;
    case BinaryOpKind::NotEqual: loop = (half ? 10 : 18) * ceilDiv(m, 4); break;
    case BinaryOpKind::Greater: loop = (half ? 8 : 12) * ceilDiv(m, 4); break;
    case BinaryOpKind::Max: loop = 3 * ceilDiv(m, half ? 4 : 2); break;
    case BinaryOpKind::Pow: loop = (half ? 325 : 312) * m; break; // an element a loop, no power instruction
    case BinaryOpKind::Equal:
    case BinaryOpKind::Less:
        throw std::invalid_argument("BroadcastScalar1D has an estimate for ADD, SUBTRACT, MULTIPLY, DIVIDE, MAXIMUM, NOT_EQUAL, "
                                    "GREATER_THAN and POWER only");
    }
    return hw.supervisorOverhead + hw.workers * (20 + loop);
}

uint64_t geluNonLinearity(const IpuParams& hw, Precision type, uint64_t n)
{
    // popnn NonLinearity1D(InPlace)<GELU> (the tanh approximation PopTorch's gelu lowers to):
    // v vectors for the busiest worker at o cycles each, plus the remainder's tail (§3.5).
    const bool half = type == Precision::FP16;
    const uint64_t v = ceilDiv(n / hw.vectorWidth(type), hw.workers);
    const uint64_t o = half ? 5 : 10;
    uint64_t worker = 20 + (v > 0 ? 3 + o * (v + 1) : 0);
    if (half)
        worker += 4 + (n % 4 >= 2 ? 2 + o : 0) + (n % 2 ? 3 + o : 0);
    else
        worker += 3 + (n % 2 ? 2 + o : 0);
    return 9 + hw.workers * worker;
}

uint64_t nonLinearityGrad(const IpuParams& hw, NonLinearity f, Precision type, uint64_t n)
{
    // popnn NonLinearityGrad1D<f>: dx = dy f'(x) from f's output, g cycles per vector (§3.5).
    const bool half = type == Precision::FP16;
    const uint64_t v = ceilDiv(n / hw.vectorWidth(type), hw.workers);
    const uint64_t g = f == NonLinearity::Gelu ? (half ? 5 : 10) : 3;
    uint64_t worker = 20 + (v > 0 ? 5 + g * (v - 1) : 0);
    if (half)
        worker += 6 + (n % 4 >= 2 ? g + 2 : 0) + (n % 2 ? g + 4 : 0);
    else
        worker += 4 + (n % 2 ? g + 1 : 0);
    return 9 + hw.workers * worker;
}

uint64_t scaledAdd(const IpuParams& hw, Precision type, uint64_t n)
{
    // getScaledArithmeticSupervisorCycleEstimate, same data and delta types, a tensor scale:
    // every worker gets floor(vectors / 6) vectors (the vectors left over are not charged, a
    // quirk of the estimator); the worker that takes the remainder adds 1 and its elements.
    const bool half = type == Precision::FP16;
    const uint64_t vw = hw.vectorWidth(type);
    const uint64_t left = n % vw;
    const uint64_t supervisor = 21 + 11 + (left ? 13 : 7) + 12 + 6;
    const uint64_t v = n / vw / hw.workers;
    const uint64_t c = 3;
    const uint64_t tail = !left ? 0 : half ? 5 + (left >= 2 ? 7 : 0) + (left == 3 ? 6 : 0) : 8;
    const uint64_t worker = 15 + (v > 0 ? 6 + c * (v - 1) : 0) + 2 + 1 + tail + 1;
    return supervisor + hw.workers * worker;
}

uint64_t cast(const IpuParams& hw, Precision from, Precision to, uint64_t n)
{
    // Cast1D between fp32 and fp16 (getCast1DCycleEstimate as poplibs-costs §3.7 restates it): a
    // worker's m = ceil(n / 6) elements in vectors of 4 at 2 cycles (fp32 to fp16: two 64-bit
    // loads) or of 2 at 1 (fp16 to fp32: one 64-bit store), then per remainder bit 1 cycle, 2
    // more if set. The same precision is a copy at the fp16 to fp32 rate.
    const uint64_t m = ceilDiv(n, hw.workers);
    const bool narrowing = from == Precision::FP32 && to == Precision::FP16;
    const uint64_t width = narrowing ? 4 : 2;
    uint64_t body = (narrowing ? 2 : 1) * (m / width);
    for (uint64_t bit = 1; bit < width; bit <<= 1)
        body += 1 + (m & bit ? 2 : 0);
    return 12 + hw.workers * (19 + body + 18);
}

MapExprShape shapeOf(MapExpr e)
{
    switch (e) {
    // Max(0, Min(1, Add(beta, Mul(alpha, x)))): four binary nodes (PopART hardsigmoidx.cpp).
    case MapExpr::HardSigmoid: return {4, 1, true};
    // Mul(dy, Mul(alpha, Mul(theta+, theta-))), each theta (1 + Signum(...)) / 2: nine binary
    // nodes and two SIGNUM over dy and x, not vectorised.
    case MapExpr::HardSigmoidGrad: return {11, 2, false};
    // Mul(Add(Signum(Sub(x, y)), 1), dy) over the forward's input and output and dy (PopART
    // maxx.cpp's MaxArgGrad), not vectorised (SIGNUM).
    case MapExpr::MaxArgGrad: return {4, 3, false};
    }
    throw std::logic_error("unknown map expression");
}

uint64_t fusedMap(const IpuParams& hw, MapExpr e, Precision type, uint64_t n)
{
    const MapExprShape s = shapeOf(e);
    const uint64_t vw = hw.vectorWidth(type), W = hw.workers;
    auto estimate = [&](uint64_t base, uint64_t m) { return base + s.inputs * (m / vw + m % vw) * s.ops; };
    const bool multiVertex = bytesOf(type) * (s.vectorised ? vw : 1) >= hw.atomicStoreBytes;
    if (multiVertex)
        return ceilDiv(estimate(20, n), W) * W;
    return W * estimate(13, ceilDiv(n, W));
}

uint64_t selectInPlace(const IpuParams& hw, uint64_t /*n*/)
{
    return hw.workers * (5 + 6 + 5 * 1);
}

uint64_t select(const IpuParams& hw, uint64_t n)
{
    return hw.workers * (5 + 6 + 5 * ceilDiv(n, hw.workers));
}

uint64_t clamp(const IpuParams& hw, Precision type, uint64_t n)
{
    const uint64_t m = ceilDiv(n, hw.workers);
    return hw.workers * (5 + 6 + 2 * ceilDiv(m, hw.vectorWidth(type)));
}

uint64_t castFromBool(const IpuParams& hw, uint64_t n)
{
    // One element a vector (loads and stores each take a cycle), plus one cycle for the C++
    // conversion; no remainder bits at a vector width of 1.
    return 12 + hw.workers * (19 + 2 * ceilDiv(n, hw.workers) + 18);
}

uint64_t reduce(const IpuParams& hw, Precision partials, uint64_t outputs, uint64_t partialsPerOutput)
{
    const uint64_t accWidth = partials == Precision::FP16 ? 8 : 4;
    const uint64_t dataPathElems = hw.vectorWidth(partials);
    const uint64_t k = accWidth / std::min(accWidth, dataPathElems) + 1;
    const uint64_t loops = ceilDiv(outputs, accWidth);
    return hw.workers * (32 + (k * partialsPerOutput + 7) * ceilDiv(loops, hw.workers));
}

namespace {

/** Row segments of one width, and how many of them a worker has. */
struct SegmentRun
{
    uint64_t width, count;
};

/** One pooling worker: its rows (segments) of the given widths (getPoolingCycles). */
uint64_t poolingWorker(const IpuParams& hw, PoolVertex vertex, const PoolTileWork& w, uint32_t worker,
                       const std::vector<SegmentRun>& segments)
{
    const bool isMax = vertex != PoolVertex::Sum, isBwd = vertex == PoolVertex::MaxGrad;
    constexpr uint64_t kWorklistUnpack = 5; // DELTANELEMENTS; in, out and startPos are ONE_PTR (0)
    // Start-up, then each worker zeroes (initialises) its share of the outputs per channel group;
    // the share's remainder is computed in 32-bit unsigned arithmetic as PopLibs does, so it
    // wraps (and every worker gets one more) when the share rounds up.
    uint64_t c = 17;
    const uint64_t init = w.positions * w.channelVectors;
    const uint64_t share = init / hw.workers;
    const uint64_t extra = uint32_t(uint32_t(w.positions) - uint32_t(share * hw.workers)) > worker ? 1 : 0;
    c += (4 + share + extra) * w.channelGroups + 6;
    if (segments.empty())
        return c + 1;
    c += 2 + (isMax ? 1 : 2) + (isBwd ? 6 : 0) + 3 + 2 + 2 * kWorklistUnpack + 1;
    for (const auto& [width, count] : segments) {
        const uint64_t n = ceilDiv(width, w.stride) - 1;
        const uint64_t repeat = isBwd ? 7 + 5 * n : isMax ? 4 + 3 * n : 5 + 3 * n;
        const uint64_t group = 1 + w.channelVectors * (3 + repeat) + 1;
        const uint64_t item = 20 + w.channelGroups * group + (w.channelGroups - 1) * (isBwd ? 6 : 4) + 3;
        c += count * (13 + w.itemsPerRow * item + 2);
    }
    return c + 1;
}

} // namespace

uint64_t pooling(const IpuParams& hw, PoolVertex vertex, const PoolTileWork& work)
{
    // Worker i takes positions [i P / W, (i + 1) P / W), cut where a row of the field ends.
    const uint64_t P = work.positions, W = hw.workers, row = std::max<uint64_t>(work.rowWidth, 1);
    uint64_t slowest = 0;
    for (uint32_t i = 0; i < W; ++i) {
        // A partial row up to the first row end, whole rows, and what is left of the last row.
        std::vector<SegmentRun> segments;
        uint64_t at = i * P / W;
        const uint64_t end = (i + 1) * P / W;
        if (at < end) {
            const uint64_t next = std::min(end, (at / row + 1) * row);
            segments.push_back({next - at, 1});
            at = next;
        }
        if (const uint64_t whole = (end - at) / row; whole > 0) {
            segments.push_back({row, whole});
            at += whole * row;
        }
        if (at < end)
            segments.push_back({end - at, 1});
        slowest = std::max(slowest, poolingWorker(hw, vertex, work, i, segments));
    }
    return 7 + W * slowest + 6;
}

uint64_t singleInputReduce(const IpuParams& hw, Precision partials, Precision out, uint64_t n)
{
    // ADD accumulates 8 (fp16) or 4 (fp32) partials in two 64-bit loads a loop of 2 cycles:
    // 1 + 2 + 6 + 2n / A + 5 + n mod A + 3, and 5 to convert a result that is not fp32.
    const uint64_t A = partials == Precision::FP16 ? 8 : 4;
    const uint64_t worker = 1 + 2 + 6 + 2 * n / A + 5 + n % A + 3 + (out == Precision::FP32 ? 0 : 5);
    return hw.workers * worker;
}

uint64_t stridedReduce(const IpuParams& hw, Precision partials, Precision out, uint64_t outputs, uint64_t n, uint64_t stride)
{
    // The outputs split over the workers in whole vectors; a worker's outer loop takes the
    // outputs one 64-bit group at a time (gcd with the stride, to stay aligned) and adds its n
    // partials at one a cycle.
    const bool half = partials == Precision::FP16;
    const uint64_t vw = hw.vectorWidth(partials);
    const uint64_t perWorker = std::min(outputs, ceilDiv(ceilDiv(outputs, vw), hw.workers) * vw);
    const uint64_t group = std::gcd(std::min<uint64_t>(half ? 8 : 4, vw), std::max<uint64_t>(stride, 1));
    const uint64_t post = half ? 1 + (out == Precision::FP16 ? 7 : 6) : 3 + 2;
    const uint64_t outer = 3 + post + 3 + (n > 0 ? n - 1 : 0);
    return hw.workers * (3 + 2 + 6 + 5 + ceilDiv(perWorker, group) * outer);
}

uint64_t reduceRows(const IpuParams& hw, Precision type, uint64_t rows, uint64_t length)
{
    const uint64_t W = hw.workers;
    const uint64_t worker = ceilDiv(ceilDiv(rows * length, W), hw.vectorWidth(type)) + 12 * ceilDiv(rows, W) + 17;
    return W * worker;
}

uint64_t fill(const IpuParams& hw, Precision type, uint64_t n)
{
    // _fillCycleEstimate for the busiest worker's share, in tile cycles: 6 x (fp16: 15 for 1,
    // 21 for 2, else 26 + m / 4; fp32: 23 + m / 2, +1 if m is odd). PopLibs splits a fill over
    // the workers in whole vectors, at least two a worker (Fill.cpp's splitRegionsBetweenWorkers).
    if (n == 0)
        return 0;
    const uint64_t vw = hw.vectorWidth(type);
    const uint64_t vectors = ceilDiv(n, vw);
    const uint64_t pieces = std::min<uint64_t>(hw.workers, std::max<uint64_t>(1, vectors / 2));
    const uint64_t m = std::min(n, ceilDiv(vectors, pieces) * vw);
    const uint64_t worker = type == Precision::FP16 ? (m == 1 ? 15 : m == 2 ? 21 : 26 + m / 4) : 23 + m / 2 + m % 2;
    return hw.workers * worker;
}

uint64_t inverseStdDeviation(const IpuParams& hw, uint64_t n)
{
    const uint64_t perWorker = ceilDiv(n, hw.workers);
    return hw.workers * (6 + 4 + 5 * ceilDiv(perWorker, 2));
}

uint64_t encodeOneHot(const IpuParams& hw, uint64_t n)
{
    return hw.workers * (11 + 74 * ceilDiv(n, hw.workers));
}

uint64_t dropout(const IpuParams& hw, Precision type, uint64_t n)
{
    const uint64_t vectors = ceilDiv(n, hw.vectorWidth(type));
    return hw.workers * ceilDiv(vectors, hw.workers) * 2 + 40;
}

namespace {
uint64_t sliceLike(const IpuParams& hw, Precision type, uint64_t offsets, uint64_t elements, uint64_t cyclesPerVector)
{
    const uint64_t W = hw.workers;
    const uint64_t worker = 30 + 19 * ceilDiv(offsets, W) + cyclesPerVector * ceilDiv(ceilDiv(elements, hw.vectorWidth(type)), W);
    return hw.supervisorOverhead + W * worker;
}
} // namespace

uint64_t multiSlice(const IpuParams& hw, Precision type, uint64_t offsets, uint64_t elements)
{
    return sliceLike(hw, type, offsets, elements, 2);
}

uint64_t multiUpdateAdd(const IpuParams& hw, Precision type, uint64_t offsets, uint64_t elements)
{
    return sliceLike(hw, type, offsets, elements, 3);
}

uint64_t copy(const IpuParams& hw, uint64_t bytes, unsigned elementBytes)
{
    return ceilDiv(bytes, std::min<uint64_t>(hw.memcpyBytesPerCycle, std::max(elementBytes, 1u)));
}

} // namespace ipusim::costs
