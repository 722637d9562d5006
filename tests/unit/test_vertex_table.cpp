// SPDX-License-Identifier: MIT
// The vertex table: every row priced as a hand-written schedule names it, at two sizes and in
// both precisions, against values worked by hand from PopLibs' estimators (poplibs-costs.md);
// and codelet names that round-trip.
#include "models/json/VertexJson.hpp"
#include "models/timing/VertexTable.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <stdexcept>

using namespace ipusim;
using json = nlohmann::json;

namespace {

class ThrowingDiagnostics : public Diagnostics
{
protected:
    void raise(const std::string& pointer, const std::string& message) const override
    {
        throw std::runtime_error(pointer + ": " + message);
    }
};

struct Case
{
    const char* vertex;
    json params;
    uint64_t expected;
    const char* precision; // "fp16", "fp32", or "-" for a vertex priced without one
    uint64_t size;         // the count that scales the work
};

// Hand computations: W = 6 workers, 11 cycles of supervisor, 64-bit vectors (4 fp16, 2 fp32),
// AMP weights loaded at 16 B/cycle with 128-bit loads ("wide_loads"), copies at one element a cycle.
const std::vector<Case> kCases = {
    // ConvPartial1x1Out (§3.2). fp16 -> fp16, 16 x 16, 96 rows: test_costs' 679; 132 rows add
    // 6 workers x 6 rows x 4 cycles. fp32, 16 x 8, 36 rows: 865; 72 rows: T = 46 + 98 + 72 = 216,
    // inner max(1296, 1310); 50 + 13 + 11 + 18 + 7 + 32 + 1310.
    {"ConvPartial1x1Out", {{"positions", 96}, {"in_chans", 16}, {"out_chans", 16}, {"input", "fp16"}, {"partials", "fp16"}, {"wide_loads", true}}, 679, "fp16", 96},
    {"ConvPartial1x1Out", {{"positions", 132}, {"in_chans", 16}, {"out_chans", 16}, {"input", "fp16"}, {"partials", "fp16"}, {"wide_loads", true}}, 823, "fp16", 132},
    {"ConvPartial1x1Out", {{"positions", 36}, {"in_chans", 8}, {"out_chans", 16}, {"input", "fp32"}, {"wide_loads", true}}, 865, "fp32", 36},
    {"ConvPartial1x1Out", {{"positions", 72}, {"in_chans", 8}, {"out_chans", 16}, {"input", "fp32"}, {"wide_loads", true}}, 1441, "fp32", 72},
    // PopLibs' default 64-bit weight loads: L doubles, 32 more a pass (fp16 16 x 16, fp32 16 x 8).
    {"ConvPartial1x1Out", {{"positions", 96}, {"in_chans", 16}, {"out_chans", 16}, {"input", "fp16"}, {"partials", "fp16"}}, 679 + 32, "fp16", 96},
    {"ConvPartial1x1Out", {{"positions", 36}, {"in_chans", 8}, {"out_chans", 16}, {"input", "fp32"}}, 865 + 32, "fp32", 36},
    // ConvPartialnx1 (§3.2), a 2 x 1 kernel. fp16 -> fp32 (8 units, L = 16): 12 rows 1,090
    // (test_costs); 24 rows: g(4) = 38, worker 49, 303 a position; 2 x (60 + 303) = 726; zeroing
    // 6 x (16 + 14) = 180; 109 + 54 + 54 + 19 + 180 + 16 + 14 + 14 + 726. fp32 (16 units, L = 32,
    // 8 cycles a row): 12 rows g(2) = 44, worker 55, 339; 2 x (76 + 339) = 830; zeroing 180: 1,290;
    // 24 rows g(4) = 53, worker 64, 393; 2 x (76 + 393) = 938; zeroing 6 x (32 + 14) = 276: 1,494.
    {"ConvPartialnx1", {{"positions", 12}, {"in_chans", 16}, {"out_chans", 8}, {"input", "fp16"}, {"kernel_height", 2}, {"wide_loads", true}}, 1090, "fp16", 12},
    {"ConvPartialnx1", {{"positions", 24}, {"in_chans", 16}, {"out_chans", 8}, {"input", "fp16"}, {"kernel_height", 2}, {"wide_loads", true}}, 1186, "fp16", 24},
    {"ConvPartialnx1", {{"positions", 12}, {"in_chans", 8}, {"out_chans", 16}, {"input", "fp32"}, {"kernel_height", 2}, {"wide_loads", true}}, 1290, "fp32", 12},
    {"ConvPartialnx1", {{"positions", 24}, {"in_chans", 8}, {"out_chans", 16}, {"input", "fp32"}, {"kernel_height", 2}, {"wide_loads", true}}, 1494, "fp32", 24},
    // UnaryOp1D<RELU> (§3.4): 20 + 6 x (17 + ceil(m / u) x 3), m = ceil(n / 6); u = 4 fp16, 2 fp32.
    {"UnaryOp1D", {{"op", "relu"}, {"type", "fp16"}, {"elements", 1200}}, 20 + 6 * (17 + 50 * 3), "fp16", 1200},
    {"UnaryOp1D", {{"op", "relu"}, {"type", "fp16"}, {"elements", 2400}}, 20 + 6 * (17 + 100 * 3), "fp16", 2400},
    {"UnaryOp1D", {{"op", "relu"}, {"type", "fp32"}, {"elements", 600}}, 20 + 6 * (17 + 50 * 3), "fp32", 600},
    {"UnaryOp1D", {{"op", "exp"}, {"type", "fp32"}, {"elements", 1200}}, 20 + 6 * (33 + 100 * 6), "fp32", 1200},
    // UnaryOp1DInPlace<RELU>: preamble 55, 2 cycles a vector. fp16 3,072 is §3.4's check value 1,886.
    {"UnaryOp1DInPlace", {{"op", "relu"}, {"type", "fp16"}, {"elements", 3072}}, 1886, "fp16", 3072},
    {"UnaryOp1DInPlace", {{"op", "relu"}, {"type", "fp16"}, {"elements", 1200}}, 20 + 6 * (55 + 50 * 2), "fp16", 1200},
    {"UnaryOp1DInPlace", {{"op", "relu"}, {"type", "fp32"}, {"elements", 3072}}, 20 + 6 * (55 + 256 * 2), "fp32", 3072},
    {"UnaryOp1DInPlace", {{"op", "relu"}, {"type", "fp32"}, {"elements", 1200}}, 20 + 6 * (55 + 100 * 2), "fp32", 1200},
    // BinaryOp1D<ADD> (§3.4): 11 + 6 x (26 fp16 / 29 fp32 + ceil(m / vw) x 3).
    {"BinaryOp1D", {{"op", "add"}, {"type", "fp16"}, {"elements", 240}}, 11 + 6 * (26 + 10 * 3), "fp16", 240},
    {"BinaryOp1D", {{"op", "add"}, {"type", "fp16"}, {"elements", 1200}}, 11 + 6 * (26 + 50 * 3), "fp16", 1200},
    {"BinaryOp1D", {{"op", "add"}, {"type", "fp32"}, {"elements", 240}}, 11 + 6 * (29 + 20 * 3), "fp32", 240},
    {"BinaryOp1D", {{"op", "add"}, {"type", "fp32"}, {"elements", 1200}}, 11 + 6 * (29 + 100 * 3), "fp32", 1200},
    // BinaryOp1D<EQUAL>: unrolled by 4, 9 cycles fp16, 14 fp32, 22 int32 (preamble 26, as fp16).
    {"BinaryOp1D", {{"op", "equal"}, {"type", "fp16"}, {"elements", 240}}, 11 + 6 * (26 + 10 * 9), "fp16", 240},
    {"BinaryOp1D", {{"op", "equal"}, {"type", "fp32"}, {"elements", 1200}}, 11 + 6 * (29 + 50 * 14), "fp32", 1200},
    {"BinaryOp1D", {{"op", "equal"}, {"type", "int32"}, {"elements", 240}}, 11 + 6 * (26 + 10 * 22), "int32", 240},
    {"BinaryOp1D", {{"op", "equal"}, {"type", "int32"}, {"elements", 1201}}, 11 + 6 * (26 + 51 * 22), "int32", 1201},
    // BinaryOp1DInPlace<DIVIDE>: preamble 58; 21 cycles per 4 fp16, 10 per 2 fp32.
    {"BinaryOp1DInPlace", {{"op", "div"}, {"type", "fp16"}, {"elements", 240}}, 11 + 6 * (58 + 10 * 21), "fp16", 240},
    {"BinaryOp1DInPlace", {{"op", "div"}, {"type", "fp16"}, {"elements", 1200}}, 11 + 6 * (58 + 50 * 21), "fp16", 1200},
    {"BinaryOp1DInPlace", {{"op", "div"}, {"type", "fp32"}, {"elements", 240}}, 11 + 6 * (58 + 20 * 10), "fp32", 240},
    {"BinaryOp1DInPlace", {{"op", "div"}, {"type", "fp32"}, {"elements", 1200}}, 11 + 6 * (58 + 100 * 10), "fp32", 1200},
    // BroadcastScalar1DInPlace (§3.9): 11 + 6 x (20 + 2 a vector); DIVIDE 8 per 2 fp16.
    {"BroadcastScalar1DInPlace", {{"op", "mul"}, {"type", "fp16"}, {"elements", 240}}, 11 + 6 * (20 + 2 * 10), "fp16", 240},
    {"BroadcastScalar1DInPlace", {{"op", "mul"}, {"type", "fp16"}, {"elements", 1200}}, 11 + 6 * (20 + 2 * 50), "fp16", 1200},
    {"BroadcastScalar1DInPlace", {{"op", "mul"}, {"type", "fp32"}, {"elements", 240}}, 11 + 6 * (20 + 2 * 20), "fp32", 240},
    {"BroadcastScalar1DInPlace", {{"op", "mul"}, {"type", "fp32"}, {"elements", 1200}}, 11 + 6 * (20 + 2 * 100), "fp32", 1200},
    {"BroadcastScalar1DInPlace", {{"op", "div"}, {"type", "fp16"}, {"elements", 240}}, 11 + 6 * (20 + 8 * 20), "fp16", 240},
    {"BroadcastScalar1DInPlace", {{"op", "div"}, {"type", "fp32"}, {"elements", 240}}, 11 + 6 * (20 + 6 * 20), "fp32", 240},
    // BroadcastScalar1D<NOT_EQUAL> (bool out): 11 + 6 x (20 + 10 (fp16) or 18 (fp32) per 4 elements
    // of the busiest worker): 240 -> 40 a worker, 10 groups; 1200 -> 200, 50 groups.
    {"BroadcastScalar1D", {{"op", "not_equal"}, {"type", "fp16"}, {"elements", 240}}, 11 + 6 * (20 + 10 * 10), "fp16", 240},
    {"BroadcastScalar1D", {{"op", "not_equal"}, {"type", "fp16"}, {"elements", 1200}}, 11 + 6 * (20 + 10 * 50), "fp16", 1200},
    {"BroadcastScalar1D", {{"op", "not_equal"}, {"type", "fp32"}, {"elements", 240}}, 11 + 6 * (20 + 18 * 10), "fp32", 240},
    {"BroadcastScalar1D", {{"op", "not_equal"}, {"type", "fp32"}, {"elements", 1200}}, 11 + 6 * (20 + 18 * 50), "fp32", 1200},
    // ClampInPlace, a worker vertex each: 6 x (5 + 6 + 2 a vector of the busiest worker's): 240 ->
    // 40 a worker, 10 vectors fp16, 20 fp32; 1202 -> 201, 51 and 101.
    {"ClampInPlace", {{"type", "fp16"}, {"elements", 240}}, 6 * (5 + 6 + 2 * 10), "fp16", 240},
    {"ClampInPlace", {{"type", "fp16"}, {"elements", 1202}}, 6 * (5 + 6 + 2 * 51), "fp16", 1202},
    {"ClampInPlace", {{"type", "fp32"}, {"elements", 240}}, 6 * (5 + 6 + 2 * 20), "fp32", 240},
    {"ClampInPlace", {{"type", "fp32"}, {"elements", 1202}}, 6 * (5 + 6 + 2 * 101), "fp32", 1202},
    // BroadcastScalar1D out of place, MAXIMUM 3 per 4 fp16 / per 2 fp32, GREATER_THAN 8 / 12 per 4
    // (bool out): 240 -> 40 a worker.
    {"BroadcastScalar1D", {{"op", "max"}, {"type", "fp16"}, {"elements", 240}}, 11 + 6 * (20 + 3 * 10), "fp16", 240},
    {"BroadcastScalar1D", {{"op", "greater"}, {"type", "fp32"}, {"elements", 240}}, 11 + 6 * (20 + 12 * 10), "fp32", 240},
    // UnaryOp1D<ABSOLUTE>: 5 an element (not a natural vector), in place 5 a vector; 240 -> 40 a
    // worker. LOGICAL_NOT (bool): 21 an element.
    {"UnaryOp1D", {{"op", "abs"}, {"type", "fp16"}, {"elements", 240}}, 20 + 6 * (17 + 5 * 40), "fp16", 240},
    {"UnaryOp1DInPlace", {{"op", "abs"}, {"type", "fp16"}, {"elements", 240}}, 20 + 6 * (55 + 5 * 10), "fp16", 240},
    {"UnaryOp1D", {{"op", "logical_not"}, {"type", "fp16"}, {"elements", 240}}, 20 + 6 * (17 + 21 * 40), "fp16", 240},
    // SelectInPlace, its estimator as written: 6 x (5 + 6 + 5 x 1), whatever the size.
    {"SelectInPlace", {{"elements", 240}}, 6 * 16, "-", 240},
    {"SelectInPlace", {{"elements", 1200}}, 6 * 16, "-", 1200},
    // Select: 6 x (5 + 6 + 5 an element of a worker's region), 240 -> 40 a worker.
    {"Select", {{"elements", 240}}, 6 * (5 + 6 + 5 * 40), "-", 240},
    {"Select", {{"elements", 1201}}, 6 * (5 + 6 + 5 * 201), "-", 1201},
    // FusedMap (ExpressionGenerator): hard_sigmoid, 4 fused ops on 1 input, vectorised, so one
    // MultiVertex: 20 + (n / vw + n mod vw) x 4, up to a multiple of 6. fp16 240: 20 + 60 x 4 =
    // 260 -> 264; 1202: 20 + (300 + 2) x 4 = 1228 -> 1230. fp32 240: 20 + 120 x 4 = 500 -> 504;
    // 1201: 20 + (600 + 1) x 4 = 2424.
    {"FusedMap", {{"expression", "hard_sigmoid"}, {"type", "fp16"}, {"elements", 240}}, 264, "fp16", 240},
    {"FusedMap", {{"expression", "hard_sigmoid"}, {"type", "fp16"}, {"elements", 1202}}, 1230, "fp16", 1202},
    {"FusedMap", {{"expression", "hard_sigmoid"}, {"type", "fp32"}, {"elements", 240}}, 504, "fp32", 240},
    {"FusedMap", {{"expression", "hard_sigmoid"}, {"type", "fp32"}, {"elements", 1201}}, 2424, "fp32", 1201},
    // hard_sigmoid_grad, 11 ops on 2 inputs, not vectorised: an fp16 store of one element is not
    // atomic (2 < 4 bytes), so a vertex a worker, 6 x (13 + 2 x (40 / 4) x 11) for 240; fp32's is,
    // one MultiVertex: 20 + 2 x 120 x 11 = 2660 -> 2664.
    {"FusedMap", {{"expression", "hard_sigmoid_grad"}, {"type", "fp16"}, {"elements", 240}}, 6 * (13 + 2 * 10 * 11), "fp16", 240},
    {"FusedMap", {{"expression", "hard_sigmoid_grad"}, {"type", "fp32"}, {"elements", 240}}, 2664, "fp32", 240},
    // NonLinearity1DInPlace<GELU> (§3.5): 9 + 6 x (20 + 3 + o (v + 1) + tail). fp16 3,072 is the
    // check value 4,041; fp16 1,027: v = 43, 262; fp32 3,072: v = 256, 15,585; fp32 1,200: v = 100,
    // 20 + 3 + 1,010 + 3 = 1,036.
    {"NonLinearity1DInPlace", {{"nonlinearity", "gelu"}, {"type", "fp16"}, {"elements", 3072}}, 4041, "fp16", 3072},
    {"NonLinearity1DInPlace", {{"nonlinearity", "gelu"}, {"type", "fp16"}, {"elements", 1027}}, 9 + 6 * 262, "fp16", 1027},
    {"NonLinearity1DInPlace", {{"nonlinearity", "gelu"}, {"type", "fp32"}, {"elements", 3072}}, 15585, "fp32", 3072},
    {"NonLinearity1DInPlace", {{"nonlinearity", "gelu"}, {"type", "fp32"}, {"elements", 1200}}, 9 + 6 * 1036, "fp32", 1200},
    // NonLinearityGrad1D (§3.5): 9 + 6 x (20 + 5 + g (v - 1) + tail). ReLU fp16 3,072: the check
    // value 2,481; tanh fp16 6: 25 + 6 + 5 = 36; ReLU fp32 1,200: 25 + 297 + 4; GELU fp32 1,201:
    // 25 + 990 + 4 + 11.
    {"NonLinearityGrad1D", {{"nonlinearity", "relu"}, {"type", "fp16"}, {"elements", 3072}}, 2481, "fp16", 3072},
    {"NonLinearityGrad1D", {{"nonlinearity", "tanh"}, {"type", "fp16"}, {"elements", 6}}, 9 + 6 * 36, "fp16", 6},
    {"NonLinearityGrad1D", {{"nonlinearity", "relu"}, {"type", "fp32"}, {"elements", 1200}}, 9 + 6 * 326, "fp32", 1200},
    {"NonLinearityGrad1D", {{"nonlinearity", "gelu"}, {"type", "fp32"}, {"elements", 1201}}, 9 + 6 * 1030, "fp32", 1201},
    // ScaledAddSupervisor (§3.6): 57 (63 with a remainder) + 6 x (15 + 6 + 3 (v - 1) + 2 + 1 +
    // tail + 1). The check values at 16,384; fp32 1,200: v = 100; fp16 1,203: v = 50, tail 18.
    {"ScaledAddSupervisor", {{"type", "fp16"}, {"elements", 16384}}, 12465, "fp16", 16384},
    {"ScaledAddSupervisor", {{"type", "fp16"}, {"elements", 1203}}, 63 + 6 * 190, "fp16", 1203},
    {"ScaledAddSupervisor", {{"type", "fp32"}, {"elements", 16384}}, 24759, "fp32", 16384},
    {"ScaledAddSupervisor", {{"type", "fp32"}, {"elements", 1200}}, 57 + 6 * 322, "fp32", 1200},
    // Cast1D (§3.7): 12 + 6 x (19 + body + 18). fp32 -> fp16: 2 per 4, the check value 8,454 at
    // 16,384; 1,200: 100 + 2 bits at 1. fp16 -> fp32: 1 per 2; 1,201: 201 a worker, 100 + 3;
    // 600: 50 + 1.
    {"Cast1D", {{"from", "fp32"}, {"to", "fp16"}, {"elements", 16384}}, 8454, "fp32", 16384},
    {"Cast1D", {{"from", "fp32"}, {"to", "fp16"}, {"elements", 1200}}, 12 + 6 * (19 + 102 + 18), "fp32", 1200},
    {"Cast1D", {{"from", "fp16"}, {"to", "fp32"}, {"elements", 1201}}, 12 + 6 * (19 + 103 + 18), "fp16", 1201},
    {"Cast1D", {{"from", "fp16"}, {"to", "fp32"}, {"elements", 600}}, 12 + 6 * (19 + 51 + 18), "fp16", 600},
    // bool -> fp16 (the attention mask of packed sequences): 2 cycles an element, no remainder.
    {"Cast1D", {{"from", "bool"}, {"to", "fp16"}, {"elements", 600}}, 12 + 6 * (19 + 200 + 18), "bool", 600},
    {"Cast1D", {{"from", "bool"}, {"to", "fp32"}, {"elements", 1201}}, 12 + 6 * (19 + 402 + 18), "bool", 1201},
    // Fill (§3.7), whole vectors, at least two a worker: fp16 64: 12 elements, 26 + 3; fp16 6:
    // one worker, 26 + 1; fp32 65: 12, 23 + 6; fp32 1,000: 84 vectors, 168 elements, 23 + 84.
    {"Fill", {{"type", "fp16"}, {"elements", 64}}, 6 * 29, "fp16", 64},
    {"Fill", {{"type", "fp16"}, {"elements", 6}}, 6 * 27, "fp16", 6},
    {"Fill", {{"type", "fp32"}, {"elements", 65}}, 6 * 29, "fp32", 65},
    {"Fill", {{"type", "fp32"}, {"elements", 1000}}, 6 * 107, "fp32", 1000},
    // ReducePartials (§3.3): 6 x (32 + (3P + 7) x loops a worker), loops = ceil(N / A), A = 8
    // fp16, 4 fp32. fp32 1,536 x 4 is the check value 7,488.
    {"ReducePartials", {{"partials", "fp16"}, {"outputs", 64}, {"partials_per_output", 4}}, 6 * (32 + 19 * 2), "fp16", 64},
    {"ReducePartials", {{"partials", "fp16"}, {"outputs", 1536}, {"partials_per_output", 4}}, 6 * (32 + 19 * 32), "fp16", 1536},
    {"ReducePartials", {{"partials", "fp32"}, {"outputs", 64}, {"partials_per_output", 4}}, 6 * (32 + 19 * 3), "fp32", 64},
    {"ReducePartials", {{"partials", "fp32"}, {"outputs", 1536}, {"partials_per_output", 4}}, 7488, "fp32", 1536},
    // ReduceSingleInput (§3.8): 6 x (17 + floor(2n / A) + n mod A, + 5 for a result not fp32).
    {"ReduceSingleInput", {{"partials", "fp16"}, {"partials_per_output", 100}}, 6 * (17 + 25 + 4 + 5), "fp16", 100},
    {"ReduceSingleInput", {{"partials", "fp16"}, {"output", "fp32"}, {"partials_per_output", 1000}}, 6 * (17 + 250), "fp16", 1000},
    {"ReduceSingleInput", {{"partials", "fp32"}, {"partials_per_output", 100}}, 6 * (17 + 50), "fp32", 100},
    {"ReduceSingleInput", {{"partials", "fp32"}, {"partials_per_output", 1000}}, 6 * (17 + 500), "fp32", 1000},
    // ReduceStrided (§3.8): 6 x (16 + loops x (3 + post + 3 + n - 1)). fp16 -> fp32, 64 x 16: 3
    // loops, post 7; fp16, 5 x 10, stride 5: 4 loops, post 8; fp32 64 x 16: 6 loops, post 5; fp32,
    // 8 x 100: 2 columns a worker, one loop.
    {"ReduceStrided", {{"partials", "fp16"}, {"output", "fp32"}, {"outputs", 64}, {"partials_per_output", 16}}, 6 * (16 + 3 * 28), "fp16", 16},
    {"ReduceStrided", {{"partials", "fp16"}, {"outputs", 5}, {"partials_per_output", 10}}, 6 * (16 + 4 * 23), "fp16", 10},
    {"ReduceStrided", {{"partials", "fp32"}, {"outputs", 64}, {"partials_per_output", 16}}, 6 * (16 + 6 * 26), "fp32", 16},
    {"ReduceStrided", {{"partials", "fp32"}, {"outputs", 8}, {"partials_per_output", 100}}, 6 * (16 + 110), "fp32", 100},
    // ReduceContinuous: rows x length split over the workers, a cycle a vector, 12 a row, 17.
    // 12 rows of 100: 200 a worker, 2 rows; 1 row of 3,000: 500 a worker.
    {"ReduceContinuous", {{"partials", "fp16"}, {"outputs", 12}, {"partials_per_output", 100}}, 6 * (50 + 24 + 17), "fp16", 100},
    {"ReduceContinuous", {{"partials", "fp16"}, {"outputs", 1}, {"partials_per_output", 3000}}, 6 * (125 + 12 + 17), "fp16", 3000},
    {"ReduceContinuous", {{"partials", "fp32"}, {"outputs", 12}, {"partials_per_output", 100}}, 6 * (100 + 24 + 17), "fp32", 100},
    {"ReduceContinuous", {{"op", "max"}, {"partials", "fp32"}, {"outputs", 1}, {"partials_per_output", 3000}}, 6 * (250 + 12 + 17), "fp32", 3000},
    // Pooling (§3.11): 7 + 6 x the slowest worker + 6; precision enters as channel vectors.
    // 2x2 max over 12 x 12, 5 groups: test_costs' 2,205 a worker; 12 positions in rows of 5: 143.
    {"MaxPooling", {{"positions", 144}, {"row_width", 12}, {"items_per_row", 4}, {"channel_groups", 5}}, 7 + 6 * 2205 + 6, "-", 144},
    {"MaxPooling", {{"positions", 12}, {"row_width", 5}}, 7 + 6 * 143 + 6, "-", 12},
    // SumPooling: the same forward, 2,246; the average pool's gradient over 24 x 24, 2,636.
    {"SumPooling", {{"positions", 144}, {"row_width", 12}, {"items_per_row", 4}, {"channel_groups", 5}}, 7 + 6 * 2246 + 6, "-", 144},
    {"SumPooling", {{"positions", 576}, {"row_width", 24}, {"items_per_row", 2}, {"stride", 2}, {"channel_groups", 5}}, 7 + 6 * 2636 + 6, "-", 576},
    // MaxPoolingGrad over 24 x 24: 3,665; 12 positions in rows of 5: start 17 + 6 + 6 + 25, two
    // segments of 1 at 13 + (20 + 12 + 3) + 2 = 50, + 1 = 155.
    {"MaxPoolingGrad", {{"positions", 576}, {"row_width", 24}, {"items_per_row", 2}, {"stride", 2}, {"channel_groups", 5}}, 7 + 6 * 3665 + 6, "-", 576},
    {"MaxPoolingGrad", {{"positions", 12}, {"row_width", 5}}, 7 + 6 * 155 + 6, "-", 12},
    // InverseStdDeviation (§3.10), fp32 inside: 6 x (10 + 5 x ceil(m / 2)); 64: m = 11; 1,000: 167.
    {"InverseStdDeviation", {{"elements", 64}}, 6 * (10 + 5 * 6), "-", 64},
    {"InverseStdDeviation", {{"elements", 1000}}, 6 * (10 + 5 * 84), "-", 1000},
    // DropoutSupervisor: 6 x ceil(vectors / 6) x 2 + 40.
    {"DropoutSupervisor", {{"type", "fp16"}, {"elements", 1024}}, 6 * 43 * 2 + 40, "fp16", 1024},
    {"DropoutSupervisor", {{"type", "fp16"}, {"elements", 4096}}, 6 * 171 * 2 + 40, "fp16", 4096},
    {"DropoutSupervisor", {{"type", "fp32"}, {"elements", 1024}}, 6 * 86 * 2 + 40, "fp32", 1024},
    {"DropoutSupervisor", {{"type", "fp32"}, {"elements", 4096}}, 6 * 342 * 2 + 40, "fp32", 4096},
    // EncodeOneHot (§3.12): 6 x (11 + 74 per index a worker).
    {"EncodeOneHot", {{"indices", 40}}, 6 * (11 + 74 * 7), "-", 40},
    {"EncodeOneHot", {{"indices", 600}}, 6 * (11 + 74 * 100), "-", 600},
    // MultiSlice (§3.12): 11 + 6 x (30 + 19 per offset a worker + 2 per vector a worker).
    {"MultiSlice", {{"type", "fp16"}, {"offsets", 12}, {"elements", 1024}}, 11 + 6 * (30 + 38 + 86), "fp16", 1024},
    {"MultiSlice", {{"type", "fp16"}, {"offsets", 60}, {"elements", 4096}}, 11 + 6 * (30 + 190 + 342), "fp16", 4096},
    {"MultiSlice", {{"type", "fp32"}, {"offsets", 12}, {"elements", 1024}}, 11 + 6 * (30 + 38 + 172), "fp32", 1024},
    {"MultiSlice", {{"type", "fp32"}, {"offsets", 60}, {"elements", 4096}}, 11 + 6 * (30 + 190 + 684), "fp32", 4096},
    // MultiUpdateAdd: 3 cycles a vector.
    {"MultiUpdateAdd", {{"type", "fp16"}, {"offsets", 12}, {"elements", 1024}}, 11 + 6 * (30 + 38 + 129), "fp16", 1024},
    {"MultiUpdateAdd", {{"type", "fp16"}, {"offsets", 60}, {"elements", 4096}}, 11 + 6 * (30 + 190 + 513), "fp16", 4096},
    {"MultiUpdateAdd", {{"type", "fp32"}, {"offsets", 12}, {"elements", 1024}}, 11 + 6 * (30 + 38 + 258), "fp32", 1024},
    {"MultiUpdateAdd", {{"type", "fp32"}, {"offsets", 60}, {"elements", 4096}}, 11 + 6 * (30 + 190 + 1026), "fp32", 4096},
    // Copy: an element a cycle (the copy rate is at most 8 B/cycle, one element a load).
    {"Copy", {{"type", "fp16"}, {"elements", 1000}}, 1000, "fp16", 1000},
    {"Copy", {{"type", "fp16"}, {"elements", 3000}}, 3000, "fp16", 3000},
    {"Copy", {{"type", "fp32"}, {"elements", 1000}}, 1000, "fp32", 1000},
    {"Copy", {{"type", "fp32"}, {"elements", 3000}}, 3000, "fp32", 3000},
};

// Vertices priced without a precision: pooling works in channel vectors, InverseStdDeviation in
// fp32, EncodeOneHot on integer indices.
const std::set<Vertex> kUntyped = {Vertex::SelectInPlace, Vertex::Select, Vertex::MaxPooling, Vertex::SumPooling, Vertex::MaxPoolingGrad, Vertex::InverseStdDeviation,
                                   Vertex::EncodeOneHot};

} // namespace

TEST_CASE("Vertex table: one row per vertex, in order, each with a source", "[vertices]")
{
    const auto& table = vertexTable();
    for (std::size_t i = 0; i < table.size(); ++i) {
        INFO(table[i].name);
        CHECK(std::size_t(table[i].vertex) == i);
        CHECK(vertexNamed(table[i].name) == table[i].vertex);
        CHECK(std::string(table[i].source).size() > 10);
    }
    CHECK_FALSE(vertexNamed("BinaryOp"));
}

TEST_CASE("Vertex table: codelet names round-trip and stay distinct", "[vertices]")
{
    const Codelet mul{Vertex::BinaryOp1D, costs::BinaryOpKind::Mul};
    CHECK(mul.name() == "BinaryOp1D<MULTIPLY>");
    CHECK(Codelet(Vertex::ReduceStrided).name() == "ReduceStrided<ADD>");
    CHECK(Codelet(Vertex::ReduceContinuous, ReduceOp::Max).name() == "ReduceContinuous<MAX>");
    CHECK(Codelet(Vertex::NonLinearityGrad1D, costs::NonLinearity::Gelu).name() == "NonLinearityGrad1D<GELU>");
    CHECK(Codelet(Vertex::UnaryOp1DInPlace, costs::UnaryOpKind::Relu).name() == "UnaryOp1DInPlace<RELU>");
    for (const char* name : {"BinaryOp1D<MULTIPLY>", "UnaryOp1D<EXPONENT>", "ReducePartials<MAX>", "Fill", "ConvPartialnx1"})
        CHECK(Codelet::parse(name)->name() == name);
    for (const char* name : {"BinaryOp<MULTIPLY>", "BinaryOp1D<MUL>", "BinaryOp1D", "Fill<ADD>", "ReduceAdd", ""})
        CHECK_FALSE(Codelet::parse(name));
    CHECK(codeletNames({mul, Codelet(Vertex::Fill), mul}) == std::vector<std::string>{"BinaryOp1D<MULTIPLY>", "Fill"});
    // A vertex with the wrong kind of operation is a programming error.
    CHECK_THROWS_AS(Codelet(Vertex::Fill, costs::BinaryOpKind::Add), std::logic_error);
    CHECK_THROWS_AS(Codelet(Vertex::BinaryOp1D), std::logic_error);
}

TEST_CASE("Vertex table: every row priced by name at two sizes in each precision", "[vertices]")
{
    const IpuParams hw;
    const ThrowingDiagnostics diag;
    std::map<Vertex, std::map<std::string, std::set<uint64_t>>> covered;
    for (const Case& c : kCases) {
        INFO(c.vertex << " " << c.params.dump());
        const VertexCall call = vertexCallFromJson(diag, "/v", c.vertex, c.params, hw);
        CHECK(cyclesOf(hw, call) == c.expected);
        CHECK(call.codelet.vertex() == *vertexNamed(c.vertex));
        covered[call.codelet.vertex()][c.precision].insert(c.size);
    }
    for (const VertexRow& row : vertexTable()) {
        INFO(row.name);
        const auto& seen = covered[row.vertex];
        const std::vector<std::string> precisions = kUntyped.count(row.vertex) ? std::vector<std::string>{"-"}
                                                                               : std::vector<std::string>{"fp16", "fp32"};
        for (const auto& p : precisions) {
            INFO(p);
            CHECK(seen.count(p));
            CHECK((seen.count(p) ? seen.at(p).size() : 0) >= 2);
        }
    }
}

TEST_CASE("Vertex table: a generated map codelet is one MultiVertex only where a worker's store is atomic", "[vertices]")
{
    // /system/ipu/atomic_store_bytes: at 2 bytes an fp16 element's store is atomic, so
    // hard_sigmoid_grad over 240 fp16 runs as one MultiVertex, 20 + 2 x 60 x 11 = 1340 -> 1344.
    IpuParams hw;
    const VertexCall call{{Vertex::FusedMap, costs::MapExpr::HardSigmoidGrad}, ElementArgs{Precision::FP16, 240}};
    CHECK(cyclesOf(hw, call) == 6 * (13 + 2 * 10 * 11));
    hw.atomicStoreBytes = 2;
    CHECK(cyclesOf(hw, call) == 1344);
    hw.atomicStoreBytes = 16; // and at 16 bytes not even a vectorised fp16 store is: a vertex a worker
    CHECK(cyclesOf(hw, {{Vertex::FusedMap, costs::MapExpr::HardSigmoid}, ElementArgs{Precision::FP16, 240}}) == 6 * (13 + 10 * 4));
}

TEST_CASE("Vertex table: comparisons exist where PopLibs has them", "[vertices]")
{
    const IpuParams hw;
    const ThrowingDiagnostics diag;
    auto price = [&](const char* vertex, const json& params) { return vertexCallFromJson(diag, "/v", vertex, params, hw); };
    // In place, EQUAL exists for bool operands only; int32 is a comparison's operand type only.
    CHECK_THROWS_WITH(price("BinaryOp1DInPlace", {{"op", "equal"}, {"type", "fp16"}, {"elements", 64}}),
                      Catch::Contains("/v/params/op") && Catch::Contains("bool operands only"));
    CHECK_THROWS_WITH(price("BinaryOp1D", {{"op", "add"}, {"type", "int32"}, {"elements", 64}}),
                      Catch::Contains("/v/params/type") && Catch::Contains("expected one of fp16, fp32,"));
    CHECK_THROWS_WITH(price("BroadcastScalar1DInPlace", {{"op", "equal"}, {"type", "fp16"}, {"elements", 64}}),
                      Catch::Contains("/v/params/op"));
    CHECK(price("BinaryOp1D", {{"op", "equal"}, {"type", "int32"}, {"elements", 64}}).codelet.name() == "BinaryOp1D<EQUAL>");
    // NOT_EQUAL's bool output: a scalar comparison is never in place, and is all the out-of-place
    // scalar broadcast prices.
    CHECK_THROWS_WITH(price("BroadcastScalar1DInPlace", {{"op", "not_equal"}, {"type", "fp16"}, {"elements", 64}}),
                      Catch::Contains("/v/params/op"));
    CHECK_THROWS_WITH(price("BroadcastScalar1D", {{"op", "equal"}, {"type", "fp16"}, {"elements", 64}}),
                      Catch::Contains("/v/params/op") && Catch::Contains("expected one of add, sub, mul, div, max, not_equal, greater"));
    CHECK_THROWS_WITH(price("BroadcastScalar1DInPlace", {{"op", "greater"}, {"type", "fp16"}, {"elements", 64}}),
                      Catch::Contains("/v/params/op"));
    CHECK_THROWS_WITH(price("BinaryOp1DInPlace", {{"op", "not_equal"}, {"type", "fp16"}, {"elements", 64}}),
                      Catch::Contains("bool operands only"));
    CHECK(price("BinaryOp1D", {{"op", "not_equal"}, {"type", "fp16"}, {"elements", 64}}).codelet.name() == "BinaryOp1D<NOT_EQUAL>");
}

TEST_CASE("Vertex table: each row prices its own kind of arguments and refuses any other", "[vertices]")
{
    // Every row, through the function it carries: the compiler's calls and a schedule's agree
    // because both reach the formula only through the row.
    const IpuParams hw;
    const ThrowingDiagnostics diag;
    std::set<Vertex> walked;
    for (const Case& c : kCases) {
        INFO(c.vertex << " " << c.params.dump());
        const VertexCall call = vertexCallFromJson(diag, "/v", c.vertex, c.params, hw);
        const VertexRow& row = rowOf(call.codelet.vertex());
        CHECK(row.cycles(hw, call) == c.expected);
        if (!walked.insert(row.vertex).second)
            continue;
        // The same codelet with arguments of every other kind is a programming error, never a price.
        const std::vector<VertexArgs> kinds = {costs::ConvShape{}, ElementArgs{}, Int32Args{}, CastArgs{}, ReduceArgs{},
                                               CountArgs{}, costs::PoolTileWork{}, SliceArgs{}, CopyArgs{}};
        REQUIRE(kinds.size() == std::variant_size_v<VertexArgs>);
        for (const VertexArgs& other : kinds) {
            if (other.index() == call.args.index() || (row.vertex == Vertex::BinaryOp1D && std::holds_alternative<Int32Args>(other) &&
                                                        call.codelet.binaryOp() == costs::BinaryOpKind::Equal))
                continue;
            INFO("arguments of kind " << other.index());
            CHECK_THROWS_AS(cyclesOf(hw, VertexCall{call.codelet, other}), std::logic_error);
        }
    }
    CHECK(walked.size() == kVertexCount);
    // Operations a formula does not price are refused too.
    CHECK_THROWS_AS(cyclesOf(hw, {{Vertex::NonLinearity1DInPlace, costs::NonLinearity::Relu}, ElementArgs{Precision::FP16, 64}}),
                    std::logic_error);
    CHECK_THROWS_AS(cyclesOf(hw, {{Vertex::BinaryOp1D, costs::BinaryOpKind::Add}, Int32Args{64}}), std::logic_error);
}
