// SPDX-License-Identifier: MIT
// PopLibs' entry points as the Poplar tutorial on PopLibs uses them: element-wise ops, reductions
// and matrix products, their values against plain C++, their cycles from PopLibs' estimators.
#include "PoplarTest.hpp"

#include <poplar/Program.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/ElementWise.hpp>
#include <popops/ElementWiseUtil.hpp>
#include <popops/Reduce.hpp>
#include <popops/Zero.hpp>
#include <popops/codelets.hpp>
#include <poputil/TileMapping.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <numeric>

using namespace poplar;
using namespace poplar::program;
using poplar_test::summaryFigure;

TEST_CASE("PopLibs: element-wise maps, in place, on a single element, and zero give the plain C++ values")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    Tensor a = graph.addVariable(FLOAT, {4, 12}, "a"), b = graph.addVariable(FLOAT, {4, 12}, "b");
    Tensor two = graph.addConstant<float>(FLOAT, {1}, 2.0f);
    Tensor z = graph.addVariable(INT, {5}, "z");
    for (unsigned t = 0; t < 4; ++t) {
        graph.setTileMapping(a[t], t);
        graph.setTileMapping(b[t], t);
    }
    graph.setTileMapping(two, 0);
    graph.setTileMapping(z, 5);
    Sequence prog;
    Tensor sum = popops::add(graph, a, b, prog, "Add");
    Tensor scaled = popops::mul(graph, sum, two, prog);
    popops::subInPlace(graph, scaled, a, prog);
    Tensor e = popops::exp(graph, a, prog);
    popops::scaledAddTo(graph, b, a, 0.5f, prog);
    popops::zero(graph, z, prog);
    for (const auto& [name, t] : {std::pair{"scaled", scaled}, {"e", e}, {"b", b}, {"z", z}})
        graph.createHostRead(name, t);
    graph.createHostWrite("a", a);
    graph.createHostWrite("b", b);
    graph.createHostWrite("z", z);
    Engine engine(graph, prog);
    engine.load(device);
    std::vector<float> av(48), bv(48);
    std::iota(av.begin(), av.end(), -10.0f);
    for (unsigned i = 0; i < 48; ++i)
        bv[i] = float(i % 7) / 4;
    const std::vector<int> ones(5, 1);
    engine.writeTensor("a", av.data(), av.data() + 48);
    engine.writeTensor("b", bv.data(), bv.data() + 48);
    engine.writeTensor("z", ones.data(), ones.data() + 5);
    engine.run();
    std::vector<float> s(48), ev(48), bo(48);
    std::vector<int> zv(5);
    engine.readTensor("scaled", s.data(), s.data() + 48);
    engine.readTensor("e", ev.data(), ev.data() + 48);
    engine.readTensor("b", bo.data(), bo.data() + 48);
    engine.readTensor("z", zv.data(), zv.data() + 5);
    for (unsigned i = 0; i < 48; ++i) {
        CHECK(s[i] == (av[i] + bv[i]) * 2.0f - av[i]);
        CHECK(ev[i] == std::exp(av[i]));
        CHECK(bo[i] == bv[i] + 0.5f * av[i]);
    }
    CHECK(zv == std::vector<int>(5, 0));
}

TEST_CASE("PopLibs cycles: an element-wise add is a sync and BinaryOp1D's estimate over each tile's elements")
{
    // 12 floats a tile, 2 a worker: BinaryOp1D (poplibs-costs section 3.4) takes 11 of
    // supervisor and 6 x (29 of preamble + ceil(2 / 2) x 3 of loop) = 203 cycles.
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    Tensor a = graph.addVariable(FLOAT, {4, 12}, "a"), b = graph.addVariable(FLOAT, {4, 12}, "b");
    for (unsigned t = 0; t < 4; ++t) {
        graph.setTileMapping(a[t], t);
        graph.setTileMapping(b[t], t);
    }
    Sequence prog;
    popops::add(graph, a, b, prog);
    Engine engine(graph, prog);
    engine.load(device);
    engine.run();
    CHECK(summaryFigure(engine, "/breakdown/compute") == 11 + 6 * (29 + 3));
    CHECK(engine.ipusimCycles() == 126 + 11 + 6 * (29 + 3));
}

TEST_CASE("PopLibs: reductions over some dimensions, and a matrix product, give the plain C++ values")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    poplin::addCodelets(graph);
    Tensor x = graph.addVariable(FLOAT, {6, 5, 4}, "x");
    poputil::mapTensorLinearly(graph, x);
    Tensor m1 = poplin::createMatMulInputLHS(graph, FLOAT, {30, 20}, {20, 10}, "m1");
    Tensor m2 = poplin::createMatMulInputRHS(graph, FLOAT, {30, 20}, {20, 10}, "m2");
    Sequence prog;
    Tensor sums = popops::reduce(graph, x, {0, 2}, popops::ReduceParams(popops::Operation::ADD), prog);
    Tensor maxima = popops::reduce(graph, x, {1}, popops::ReduceParams(popops::Operation::MAX), prog);
    Tensor m3 = poplin::matMul(graph, m1, m2, prog, "MatMul");
    REQUIRE(sums.shape() == std::vector<std::size_t>{5});
    REQUIRE(maxima.shape() == std::vector<std::size_t>{6, 4});
    REQUIRE(m3.shape() == std::vector<std::size_t>{30, 10});
    graph.createHostWrite("x", x);
    graph.createHostWrite("m1", m1);
    graph.createHostWrite("m2", m2);
    graph.createHostRead("sums", sums);
    graph.createHostRead("maxima", maxima);
    graph.createHostRead("m3", m3);
    Engine engine(graph, prog);
    engine.load(device);
    std::vector<float> xv(120), a(600), b(200);
    for (unsigned i = 0; i < 120; ++i)
        xv[i] = float((i * 37) % 23) - 11;
    for (unsigned i = 0; i < 600; ++i)
        a[i] = float(i % 9) / 8 - 0.5f;
    for (unsigned i = 0; i < 200; ++i)
        b[i] = float(i % 5) / 4;
    engine.writeTensor("x", xv.data(), xv.data() + 120);
    engine.writeTensor("m1", a.data(), a.data() + 600);
    engine.writeTensor("m2", b.data(), b.data() + 200);
    engine.run();
    std::vector<float> sv(5), mv(24), cv(300);
    engine.readTensor("sums", sv.data(), sv.data() + 5);
    engine.readTensor("maxima", mv.data(), mv.data() + 24);
    engine.readTensor("m3", cv.data(), cv.data() + 300);
    for (unsigned j = 0; j < 5; ++j) {
        float want = 0;
        for (unsigned i = 0; i < 6; ++i)
            for (unsigned k = 0; k < 4; ++k)
                want += xv[(i * 5 + j) * 4 + k];
        CHECK(sv[j] == want);
    }
    for (unsigned i = 0; i < 6; ++i)
        for (unsigned k = 0; k < 4; ++k) {
            float want = -INFINITY;
            for (unsigned j = 0; j < 5; ++j)
                want = std::max(want, xv[(i * 5 + j) * 4 + k]);
            CHECK(mv[i * 4 + k] == want);
        }
    for (unsigned i = 0; i < 30; ++i)
        for (unsigned j = 0; j < 10; ++j) {
            float want = 0;
            for (unsigned k = 0; k < 20; ++k)
                want += a[i * 20 + k] * b[k * 10 + j];
            CHECK(cv[i * 10 + j] == Approx(want).margin(1e-5));
        }
    CHECK(summaryFigure(engine, "/breakdown/compute") > 0);
    CHECK(summaryFigure(engine, "/breakdown/exchange") > 0);
}

TEST_CASE("PopLibs: logicalNot and allTrue of bools, an element-wise op's output, and compileGraph's progress")
{
    Device device = poplar_test::device();
    Graph graph(device.getTarget());
    popops::addCodelets(graph);
    Tensor flags = graph.addVariable(BOOL, {6}, "flags");
    poputil::mapTensorLinearly(graph, flags);
    Sequence prog;
    Tensor all = popops::allTrue(graph, flags, prog);
    Tensor negated = popops::logicalNot(graph, flags, prog);
    Tensor noneOf = popops::allTrue(graph, negated, prog);
    Tensor like = popops::createOutputForElementWiseOp(graph, {flags}, INT, "like");
    CHECK(like.elementType() == INT);
    CHECK(like.shape() == flags.shape());
    CHECK(graph.getTileMapping(like) == graph.getTileMapping(flags));
    graph.createHostWrite("flags", flags);
    graph.createHostRead("all", all);
    graph.createHostRead("none", noneOf);
    std::vector<std::pair<int, int>> stages;
    Engine engine(compileGraph(graph, {prog}, {}, [&](int done, int of) { stages.emplace_back(done, of); }));
    CHECK(stages == std::vector<std::pair<int, int>>{{0, 1}, {1, 1}});
    engine.load(device);
    for (bool allSet : {true, false}) {
        const bool in[6] = {true, true, allSet, true, true, true};
        engine.writeTensor("flags", in, in + 6);
        engine.run();
        bool a = !allSet, n = true;
        engine.readTensor("all", &a, &a + 1);
        engine.readTensor("none", &n, &n + 1);
        CHECK(a == allSet);
        CHECK(!n);
    }
}
