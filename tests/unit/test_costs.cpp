// SPDX-License-Identifier: MIT
// Vertex cycle formulas against hand computations (ipu-facts.md §3 restated in VertexCosts.cpp).
#include "models/timing/VertexCosts.hpp"

#include <catch2/catch.hpp>

using namespace ipusim;
using namespace ipusim::costs;

TEST_CASE("ConvPartial1x1Out: one 16x16 fp16 block of 96 rows", "[costs]")
{
    IpuParams hw;
    ConvShape s;
    s.positions = 96; // 16 per worker
    s.input = Precision::FP16;
    s.partials = Precision::FP16;
    s.wideLoads = true; // 128-bit weight loads, 16 B/cycle
    // worker T(16) = 37 + 4*(16-3) - 7 = 82; inner = max(6*82, 6*82 + 14) = 506;
    // L = 16 units * 16 chans * 2 B / 16 B/cycle = 32;
    // total = 50 + 6*7 + 13 + 11 + 18 + (7 + 32 + 506) = 679
    CHECK(convPartial1x1WorkerCycles(hw, s, 16, true) == 82);
    CHECK(convPartial1x1Out(hw, s) == 679);
    // Asymptotically 4 cycles per row of 16x16 MACs: 64 MAC/cycle. 6 more rows per worker
    // cost 6 workers x 6 rows x 4 cycles = 144.
    s.positions = 96 + 36;
    CHECK(convPartial1x1Out(hw, s) == 679 + 144);
    // PopLibs' default 64-bit loads take twice as long: L = 64, once per pass.
    s.wideLoads = false;
    CHECK(convPartial1x1Out(hw, s) == 679 + 144 + 32);
}

TEST_CASE("ConvPartial1x1Out: a second input group accumulates without zeroing", "[costs]")
{
    IpuParams hw;
    ConvShape s;
    s.positions = 96;
    s.inGroups = 2;
    s.input = Precision::FP16;
    s.partials = Precision::FP16;
    s.wideLoads = true;
    // A pass that does not zero takes a cycle more a worker: T = 83, inner 6 x 83 + 14 = 512;
    // adds (inGroups-1) x [15 + 1 x (19 + 1 x (6 + 32 + 512))] = 584, and 6 x 3 of retention
    CHECK(convPartial1x1WorkerCycles(hw, s, 16, false) == 83);
    CHECK(convPartial1x1Out(hw, s) == 679 + 584 + 18);
    // The poplibs-costs §3.2 check value: 4 input and 2 output groups, 4,755 at 16 B/cycle of
    // weight loads and 5,011 at PopLibs' default 64-bit loads (8 B/cycle: L = 64).
    s.inGroups = 4;
    s.outGroups = 2;
    CHECK(convPartial1x1Out(hw, s) == 4755);
    s.wideLoads = false;
    CHECK(convPartial1x1Out(hw, s) == 5011);
    // The same as 128-bit loads on an AMP that loads 8 B/cycle.
    hw.coeffLoadBytesPerCycle = 8;
    s.wideLoads = true;
    CHECK(convPartial1x1Out(hw, s) == 5011);
}

TEST_CASE("ConvPartial1x1Out: fp32 activations take 8 cycles per row and zero partials", "[costs]")
{
    IpuParams hw;
    ConvShape s;
    s.positions = 36; // 6 per worker
    s.input = Precision::FP32;
    s.partials = Precision::FP32;
    s.wideLoads = true;
    // step = 16 units x 8 chans / 16 MAC = 8; T(6) = 46 + 8*3 = 70; with zeroing + 2 + 8*6 = 120
    CHECK(convPartial1x1WorkerCycles(hw, s, 6, false) == 70);
    CHECK(convPartial1x1WorkerCycles(hw, s, 6, true) == 120);
    // Short rows: 24; 47 + 10Z; 46 + 18Z
    CHECK(convPartial1x1WorkerCycles(hw, s, 0, true) == 24);
    CHECK(convPartial1x1WorkerCycles(hw, s, 1, true) == 57);
    CHECK(convPartial1x1WorkerCycles(hw, s, 2, false) == 46);
    // L = 16 x 8 x 4 / 16 = 32; inner(zero) = max(720, 734) = 734;
    // total = 50 + 0 + 12 + 11 + 19 + (7 + 32 + 734) = 865
    CHECK(convPartial1x1Out(hw, s) == 865);
}

TEST_CASE("ConvPartialnx1: 2x1 kernel, fp16 in, fp32 partials, 12 positions", "[costs]")
{
    IpuParams hw;
    ConvShape s;
    s.positions = 12;
    s.kernelHeight = 2;
    s.kernelWidth = 1;
    s.input = Precision::FP16;
    s.partials = Precision::FP32;
    s.wideLoads = true;
    // 8 units, L = 8*16*2/16 = 16; worker = 17 + 3 + g(2)=34 - 9 = 45; per position max(270, 279) = 279
    // per row supervisor 14 + (12 + 16 + 15 + 3) = 60; inner = 2 x (60 + 279) = 678
    // outer 109 + 54 + 54 + zero loop 19 + zero pass 6 x (ceil(16/2) + 14) = 132; + 16 + 14 + 14 + 678
    CHECK(convPartialNx1(hw, s) == 1090);
    CHECK(convPartial(hw, s) == 1090);
    // 64-bit loads: L = 32 in each of the 2 kernel rows' supervisor terms.
    s.wideLoads = false;
    CHECK(convPartialNx1(hw, s) == 1090 + 2 * 16);
}

TEST_CASE("Element-wise, scaled add, reduce and pooling vertices", "[costs]")
{
    IpuParams hw;
    // popops UnaryOp1D: 20 + 6 x (preamble + ceil(m / u) x c), m = ceil(n / 6) (poplibs-costs §3.4).
    // RELU fp32, 1200: m = 200, 3 per 2: 300; 20 + 6 x (17 + 300)
    CHECK(unaryOp(hw, UnaryOpKind::Relu, Precision::FP32, 1200) == 1922);
    // UnaryOp1DInPlace<RELU> fp16, 3072 (the §3.4 check value): m = 512, 2 per 4: 256; 20 + 6 x (55 + 256)
    CHECK(unaryOp(hw, UnaryOpKind::Relu, Precision::FP16, 3072, true) == 1886);
    // ... fp32: 2 per 2: 512; 20 + 6 x (55 + 512)
    CHECK(unaryOp(hw, UnaryOpKind::Relu, Precision::FP32, 3072, true) == 3422);
    // EXPONENT has a longer preamble (33): fp32, 1200: 6 per 2: 600; fp16: 4 per 4: 200
    CHECK(unaryOp(hw, UnaryOpKind::Exp, Precision::FP32, 1200) == 20 + 6 * (33 + 600));
    CHECK(unaryOp(hw, UnaryOpKind::Exp, Precision::FP16, 1200) == 1418);
    // GELU_ERF is not vectorised: fp16, 100: m = 17 at 16 each; 20 + 6 x (17 + 272)
    CHECK(unaryOp(hw, UnaryOpKind::GeluErf, Precision::FP16, 100) == 1754);
    // popops BinaryOp1D: 11 + 6 x (26 fp16 / 29 fp32 / 58 in place + loop).
    // ADD fp16, 240: m = 40, 3 per vector of 4: 30; fp32: 3 per 2: 60
    CHECK(binaryOp(hw, BinaryOpKind::Add, Precision::FP16, 240) == 347);
    CHECK(binaryOp(hw, BinaryOpKind::Add, Precision::FP32, 240) == 545);
    // DIVIDE fp16, 240: 21 per 4: 210; in place fp32: 10 per 2: 200
    CHECK(binaryOp(hw, BinaryOpKind::Div, Precision::FP16, 240) == 1427);
    CHECK(binaryOp(hw, BinaryOpKind::Div, Precision::FP32, 240, true) == 1559);
    // ScaledAdd fp32, 1200: supervisor 57; 100 vectors per worker: 15 + 6 + 3 x 99 + 2 + 1 + 1 = 322
    CHECK(scaledAdd(hw, Precision::FP32, 1200) == 57 + 6 * 322);
    // The poplibs-costs §3.6 check values, n = 16,384: fp16 682 vectors a worker, fp32 1,365
    CHECK(scaledAdd(hw, Precision::FP16, 16384) == 12465);
    CHECK(scaledAdd(hw, Precision::FP32, 16384) == 24759);
    // fp16, 1203: 300 vectors, 50 a worker, 3 left: supervisor 63; 15 + 6 + 147 + 2 + 1 + (5 + 7 + 6) + 1
    CHECK(scaledAdd(hw, Precision::FP16, 1203) == 63 + 6 * 190);
    // Reduce fp32, 64 outputs of 4 partials: k = 4/2 + 1 = 3, 16 loops, 3 per worker: 6 x (32 + 19 x 3)
    CHECK(reduce(hw, Precision::FP32, 64, 4) == 534);
    // Cast1D fp32 -> fp16, 1200: 200 a worker, 50 vectors of 4 at 2 cycles, two clear remainder
    // bits at 1: 102; 12 + 6 x (19 + 102 + 18)
    CHECK(cast(hw, Precision::FP32, Precision::FP16, 1200) == 846);
    // The §3.7 check value: 16,384 elements, 2,731 a worker: 2 x 682 + (1 + 2) + (1 + 2) = 1,370
    CHECK(cast(hw, Precision::FP32, Precision::FP16, 16384) == 8454);
    // fp16 -> fp32, 1201: 201 a worker, 100 vectors of 2 at 1 cycle, the odd one 1 + 2: 103
    CHECK(cast(hw, Precision::FP16, Precision::FP32, 1201) == 12 + 6 * (19 + 103 + 18));
    // Fill, split in whole vectors, at least two a worker: fp16 64 (16 vectors, 3 a worker: 12
    // elements, 26 + 3), fp32 65 (33 vectors, 6 a worker: 12, 23 + 6), fp16 6 (2 vectors: one
    // worker takes all 6, 26 + 1)
    CHECK(fill(hw, Precision::FP16, 64) == 6 * 29);
    CHECK(fill(hw, Precision::FP32, 65) == 6 * 29);
    CHECK(fill(hw, Precision::FP16, 6) == 6 * 27);
}

TEST_CASE("Pooling vertices (popnn getPoolingCycles)", "[costs]")
{
    IpuParams hw;
    // 2x2 max pool of fp32, 12 x 12 outputs, 10 channels in 5 groups of 2 (1 vector each): 24
    // outputs = 2 rows of 12 per worker, 4 kernel positions per row, n = 11.
    // Worker: 17 + (4 + 24) x 5 + 6 = 163; + 2 + 1 + 3 + 2 + 2 x 5 + 1 = 182; per row
    // 13 + 4 x (20 + 5 x (1 + (3 + 4 + 3 x 11) + 1) + 4 x 4 + 3) + 2 = 1011; 182 + 2 x 1011 + 1 = 2205.
    const PoolTileWork forward{1, 5, 144, 12, 4, 1};
    CHECK(pooling(hw, PoolVertex::Max, forward) == 7 + 6 * 2205 + 6); // 13,243
    // SumPooling: + 1 once and 5 + 3n per vector: 183 + 2 x (13 + 4 x 254 + 2) + 1 = 2246.
    CHECK(pooling(hw, PoolVertex::Sum, forward) == 7 + 6 * 2246 + 6);
    // Its gradient over the 24 x 24 input: 96 positions = 4 rows of 24 per worker; 2 items
    // (the kernel's columns), each ceil(24 / 2) = 12 outputs (n = 11).
    // MaxPoolingGrad: 17 + (4 + 96) x 5 + 6 = 523; + 25 = 548; per row 13 + 2 x (20 + 5 x (1 + 3 +
    // 7 + 5 x 11 + 1) + 4 x 6 + 3) + 2 = 779; 548 + 4 x 779 + 1 = 3665.
    const PoolTileWork backward{1, 5, 576, 24, 2, 2};
    CHECK(pooling(hw, PoolVertex::MaxGrad, backward) == 7 + 6 * 3665 + 6); // 22,003
    // The average pool's gradient sums with SumPooling: 523 + 20 + 4 x (13 + 2 x (20 + 5 x (1 + 3 +
    // 5 + 3 x 11 + 1) + 4 x 4 + 3) + 2) + 1 = 2636.
    CHECK(pooling(hw, PoolVertex::Sum, backward) == 7 + 6 * 2636 + 6); // 15,829
    // A worker's range is cut where a row ends: 12 positions in rows of 5 give each worker 2,
    // worker 2 [4, 6) as two segments of 1 (n = 0), the slowest:
    // 17 + (4 + 2) + 6 + 19 + 2 x (13 + (20 + (1 + 3 + 4 + 1) + 3) + 2) + 1 = 143.
    const PoolTileWork ragged{1, 1, 12, 5, 1, 1};
    CHECK(pooling(hw, PoolVertex::Max, ragged) == 7 + 6 * 143 + 6);
    // Fewer positions than workers: workers without any stop after zeroing.
    CHECK(pooling(hw, PoolVertex::Max, {1, 1, 1, 5, 1, 1}) == 7 + 6 * (17 + 4 + 6 + 19 + (13 + 32 + 2) + 1) + 6);
}

TEST_CASE("popnn non-linearity vertices", "[costs]")
{
    IpuParams hw;
    // NonLinearity1DInPlace<GELU>: 9 + 6 x (20 + 3 + o (v + 1) + tail), v = ceil(floor(n / vw) / 6)
    // (poplibs-costs §3.5). fp16, 3072 (the check value): v = 128, o = 5, tail 4: 9 + 6 x (32 + 5 x 128)
    CHECK(geluNonLinearity(hw, Precision::FP16, 3072) == 4041);
    // fp32, 3072: v = 256, o = 10, tail 3: 9 + 6 x (36 + 10 x 256)
    CHECK(geluNonLinearity(hw, Precision::FP32, 3072) == 15585);
    // fp16, 1027 (n mod 4 = 3): v = ceil(256 / 6) = 43; 20 + 3 + 5 x 44 + tail 4 + (2 + 5) + (3 + 5) = 262
    CHECK(geluNonLinearity(hw, Precision::FP16, 1027) == 9 + 6 * 262);
    // NonLinearityGrad1D<f>: 9 + 6 x (20 + 5 + g (v - 1) + tail).
    // GELU fp16, 3072 (check value): g = 5, tail 6: 9 + 6 x (25 + 5 x 127 + 6)
    CHECK(nonLinearityGrad(hw, NonLinearity::Gelu, Precision::FP16, 3072) == 4005);
    // ReLU fp16, 3072 (check value): g = 3: 9 + 6 x (25 + 3 x 127 + 6)
    CHECK(nonLinearityGrad(hw, NonLinearity::Relu, Precision::FP16, 3072) == 2481);
    // ReLU fp32, 1200: v = 100; 9 + 6 x (25 + 3 x 99 + 4)
    CHECK(nonLinearityGrad(hw, NonLinearity::Relu, Precision::FP32, 1200) == 1965);
    // GELU fp32, 1201 (odd): v = 100, g = 10; 25 + 990 + tail 4 + (10 + 1) = 1030
    CHECK(nonLinearityGrad(hw, NonLinearity::Gelu, Precision::FP32, 1201) == 9 + 6 * 1030);
    // Tanh fp16, 6: v = 1; 25 + tail 6 + (3 + 2) (6 mod 4 = 2) = 36. Sigmoid fp16, 2: no vector; 20 + 6 + 5
    CHECK(nonLinearityGrad(hw, NonLinearity::Tanh, Precision::FP16, 6) == 9 + 6 * 36);
    CHECK(nonLinearityGrad(hw, NonLinearity::Sigmoid, Precision::FP16, 2) == 9 + 6 * 31);
    // Against what it replaced for BERT's GELU (16 cycles an element as UnaryOp<GELU_ERF>): 12x less.
    CHECK(unaryOp(hw, UnaryOpKind::GeluErf, Precision::FP16, 3072) > 12 * geluNonLinearity(hw, Precision::FP16, 3072));
}

TEST_CASE("popops reduce vertices: single input and strided", "[costs]")
{
    IpuParams hw;
    // SINGLE_INPUT (getCyclesEstimateForSingleInput), a worker vertex: 17 + floor(2n / A) + n mod A.
    // fp32, 100 partials: A = 4: 17 + 50 + 0; tile cycles 6 x 67
    CHECK(singleInputReduce(hw, Precision::FP32, Precision::FP32, 100) == 402);
    // fp16 to fp16, 100: A = 8: 17 + 25 + 4 + 5 (the output is not fp32) = 51
    CHECK(singleInputReduce(hw, Precision::FP16, Precision::FP16, 100) == 306);
    // STRIDED_REDUCE: 64 channels of 16 rows, fp32: 32 vectors, 6 a worker = 12 columns in groups
    // of gcd(2, 64) = 2: 6 loops of 3 + 5 + 3 + 15 = 26; 16 + 156 = 172
    CHECK(stridedReduce(hw, Precision::FP32, Precision::FP32, 64, 16, 64) == 1032);
    // fp16 partials to fp32 sums: 16 vectors, 3 a worker = 12 columns in groups of 4: 3 loops of
    // 3 + 7 + 3 + 15 = 28; 16 + 84 = 100
    CHECK(stridedReduce(hw, Precision::FP16, Precision::FP32, 64, 16, 64) == 600);
    // An odd stride keeps a worker to one column a loop: 5 fp16 columns are 2 vectors, one a
    // worker (4 columns); gcd(4, 5) = 1: 4 loops of 3 + 8 + 3 + 9 = 23
    CHECK(stridedReduce(hw, Precision::FP16, Precision::FP16, 5, 10, 5) == 6 * (16 + 4 * 23));
    // Against the general conv-partials reduce the bias gradients used (6 x (39 + 3P) a channel):
    // 1,024 channels of 64 rows on one tile now take a fraction of 1,024 such reduces.
    CHECK(stridedReduce(hw, Precision::FP32, Precision::FP32, 1024, 64, 1024) < 1024 * reduce(hw, Precision::FP32, 1, 64) / 20);
}

TEST_CASE("Batch norm and dropout vertices", "[costs]")
{
    IpuParams hw;
    // InverseStdDeviation, 64 channels: 11 per worker = 6 pairs; 6 x (6 + 4 + 5 x 6)
    CHECK(inverseStdDeviation(hw, 64) == 240);
    // Dropout fp16, 1024 elements: 256 vectors, 43 per worker; 6 x 43 x 2 + 40
    CHECK(dropout(hw, Precision::FP16, 1024) == 556);
    // fp32: 512 vectors, 86 per worker
    CHECK(dropout(hw, Precision::FP32, 1024) == 6 * 86 * 2 + 40);
    // EncodeOneHot, 40 labels: 7 per worker; 6 x (11 + 74 x 7)
    CHECK(encodeOneHot(hw, 40) == 3174);
}

TEST_CASE("Costs grow with work and never shrink", "[costs]")
{
    IpuParams hw;
    uint64_t last = 0;
    for (uint64_t n = 6; n <= 6000; n += 6) {
        uint64_t c = unaryOp(hw, UnaryOpKind::Relu, Precision::FP16, n);
        CHECK(c >= last);
        last = c;
    }
    ConvShape s;
    s.input = Precision::FP16;
    // PopLibs' worker loop has special cases for 1 and 2 positions: 2 costs more than 3.
    CHECK(convPartial1x1WorkerCycles(hw, s, 2, true) > convPartial1x1WorkerCycles(hw, s, 3, true));
    last = 0;
    for (uint64_t p = 18; p < 400; ++p) { // from 3 positions per worker on
        s.positions = p;
        uint64_t c = convPartial1x1Out(hw, s);
        CHECK(c >= last);
        last = c;
    }
}
