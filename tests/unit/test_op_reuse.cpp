// SPDX-License-Identifier: MIT
// Identical ops lowered once: a replayed op is named after itself, and an op whose names read
// two ways is lowered afresh.
#include "workloads/lowering/GraphLowering.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

using namespace ipusim;

namespace {

/** Two 64 x 256 by 256 x 256 fp16 matmuls, "m" and "n", with their inputs loaded alike. */
struct TwoMatmuls
{
    Graph g;
    explicit TwoMatmuls(const std::string& firstInput)
    {
        const int a = g.addTensor(firstInput, {64, 256}, Precision::FP16, TensorRole::Input);
        const int b = g.addTensor("z", {64, 256}, Precision::FP16, TensorRole::Input);
        const int wa = g.addTensor("m.w", {256, 256}, Precision::FP16, TensorRole::Weight);
        const int wb = g.addTensor("n.w", {256, 256}, Precision::FP16, TensorRole::Weight);
        const int ya = g.addTensor("m.out", {64, 256}, Precision::FP16, TensorRole::Activation);
        const int yb = g.addTensor("n.out", {64, 256}, Precision::FP16, TensorRole::Activation);
        g.addOp("load", OpKind::HostLoad, {}, {a, b});
        for (auto [name, in, w, out] : {std::tuple{"m", a, wa, ya}, std::tuple{"n", b, wb, yb}}) {
            Op& op = g.addOp(name, OpKind::Conv, {in, w}, {out});
            op.conv.positions = 64;
            op.conv.reduction = 256;
            op.conv.outChans = 256;
            op.conv.input = op.conv.partials = op.conv.output = Precision::FP16;
        }
    }

    /** The names of the compiled program's exchanges. */
    std::vector<std::string> exchanges(bool reuse) const
    {
        IpuParams hw;
        ProgramBuilder b(hw);
        GraphLowering l(g, b);
        l.setReuseIdenticalOps(reuse);
        l.placePersistent();
        for (const Op& op : g.ops)
            l.lower(op);
        std::vector<std::string> names;
        for (const Step& s : b.finish(0).steps)
            if (const auto* x = std::get_if<ExchangeStep>(&s.op))
                names.push_back(x->name);
        return names;
    }
};

} // namespace

TEST_CASE("A replayed op is named after itself", "[reuse]")
{
    const TwoMatmuls model("x");
    const std::vector<std::string> names = model.exchanges(true);
    CHECK(names == model.exchanges(false));
    CHECK(std::count(names.begin(), names.end(), "n.in") == 1);
}

TEST_CASE("An identical op whose names read two ways for it is lowered afresh under its own names", "[reuse]")
{
    // "m" reads a tensor named "m.in", so its exchange "m.in" reads as the op's name plus ".in"
    // or as its input's name; for "n", reading "z", the two part: "n.in" or "z".
    const TwoMatmuls model("m.in");
    const std::vector<std::string> names = model.exchanges(true);
    CHECK(names == model.exchanges(false));
    CHECK(std::count(names.begin(), names.end(), "n.in") == 1);
    CHECK(std::count(names.begin(), names.end(), "z") == 0);
}

namespace {
/** Lowers every op of `g` with `l` and returns the program's steps as names and cycles. */
std::vector<std::pair<std::string, uint64_t>> lowerAll(const Graph& g, ProgramBuilder& b, GraphLowering& l)
{
    l.placePersistent();
    for (const Op& op : g.ops)
        l.lower(op);
    std::vector<std::pair<std::string, uint64_t>> steps;
    for (const Step& s : b.finish(0).steps)
        if (const auto* c = std::get_if<ComputeStep>(&s.op))
            steps.emplace_back(c->name, c->cycles.runs().empty() ? 0 : c->cycles.runs().front().value);
    return steps;
}
} // namespace

TEST_CASE("Equivalent IPUs share lowered ops: an op placed alike on a second IPU is not lowered again", "[reuse]")
{
    const TwoMatmuls model("x");
    IpuParams hw;
    ProgramBuilder first(hw);
    GraphLowering onFirst(model.g, first);
    const auto firstSteps = lowerAll(model.g, first, onFirst);
    const std::size_t lowered = onFirst.loweredOps().size();
    REQUIRE(lowered > 0);

    ProgramBuilder second(hw, first.pools());
    GraphLowering onSecond(model.g, second);
    onSecond.shareLoweredOps(onFirst);
    CHECK(lowerAll(model.g, second, onSecond) == firstSteps);
    CHECK(&onSecond.loweredOps() == &onFirst.loweredOps());
    CHECK(onFirst.loweredOps().size() == lowered); // every op of the second IPU was replayed

    // Without the shared store, the second IPU lowers its ops itself: the same program.
    ProgramBuilder alone(hw);
    GraphLowering onAlone(model.g, alone);
    CHECK(lowerAll(model.g, alone, onAlone) == firstSteps);
    CHECK(onAlone.loweredOps().size() == lowered);
}

TEST_CASE("Lowered ops are shared only between IPUs with equal parameters and pools", "[reuse]")
{
    const TwoMatmuls model("x");
    IpuParams hw, smaller;
    smaller.availableMemoryProportion = hw.availableMemoryProportion / 2;
    ProgramBuilder first(hw), ownPools(hw), otherParams(smaller, first.pools());
    GraphLowering onFirst(model.g, first), onOwnPools(model.g, ownPools), onOtherParams(model.g, otherParams);
    CHECK_THROWS_AS(onOwnPools.shareLoweredOps(onFirst), std::logic_error);
    CHECK_THROWS_AS(onOtherParams.shareLoweredOps(onFirst), std::logic_error);
}
