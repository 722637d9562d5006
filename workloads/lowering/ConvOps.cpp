// SPDX-License-Identifier: MIT
// GraphLowering's convolutions and matmuls: conv groups over slots of tiles, the planner's
// split of each, the AMP vertices and the reduction of partials.
#include "workloads/lowering/GraphLowering.hpp"

#include "models/common/CeilDiv.hpp"
#include "workloads/lowering/Codelets.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

namespace ipusim {

namespace {

/** Tiles' fractional shares of a tensor as whole elements, keeping the total: each tile its
 *  share rounded down, and the elements left over to the tiles with the largest remainders
 *  (the lower tile first). Rounding each share down alone would lose a narrow layer's outputs
 *  (and the work of every op after it) where each tile holds less than one element. */
std::vector<uint64_t> wholeElements(const std::vector<double>& shares)
{
    std::vector<uint64_t> whole(shares.size());
    double total = 0.0;
    uint64_t given = 0;
    std::vector<std::size_t> order(shares.size());
    for (std::size_t t = 0; t < shares.size(); ++t) {
        whole[t] = uint64_t(shares[t]);
        total += shares[t];
        given += whole[t];
        order[t] = t;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return shares[a] - double(whole[a]) > shares[b] - double(whole[b]);
    });
    const uint64_t wanted = uint64_t(std::llround(total));
    for (std::size_t k = 0; given < wanted && k < order.size() && shares[order[k]] > double(whole[order[k]]); ++k, ++given)
        ++whole[order[k]];
    return whole;
}

} // namespace

void GraphLowering::lowerConv(const Op& op)
{
    std::vector<ExchangeBytes> sends(m_hw.tiles);
    for (int in : op.inputs)
        addSends(sends, in);
    std::vector<PlanTensor> reads;
    for (int in : op.inputs)
        reads.push_back(PlanTensor::graph(in));
    OpPlan p;
    const ConvSteps conv = convSteps(p, op.name, op.conv, std::move(sends), reads);
    m_plans[op.name] = conv.plan;
    p.output(op.outputs.at(0), conv.out);
    if (conv.width)
        m_width[std::size_t(op.outputs.at(0))] = conv.width;
    emit(p);
}

GraphLowering::ConvSteps GraphLowering::convSteps(OpPlan& p, const std::string& name, const ConvProblem& whole,
                                                  std::vector<ExchangeBytes> sends, const std::vector<PlanTensor>& reads)
{
    const uint32_t T = m_hw.tiles;
    ConvSlots slots;
    ConvSteps result;
    result.plan = slotPlan(whole, slots);
    const ConvPlan& plan = result.plan;
    ConvProblem pr = whole;
    pr.groups = 1;
    const uint32_t serial = plan.serialSplits;
    const ConvProblem step = serialStep(pr, plan); // the problem each serial step solves
    // Model FLOPs as CompileGraph counts them: 2 per multiply-accumulate of the micro-batch.
    ConvWork w(T, name, 2.0 * double(whole.macs()) / serial);
    w.x = std::move(sends);
    for (ExchangeBytes& x : w.x) // each serial step sends its share (estimate: operands a step re-reads are sent once)
        x.send /= serial;
    planConvTiles(step, plan, slots, w);
    result.out = serialOutputs(pr, step, plan, w);

    PlanTensor sum;
    if (serial > 1 && plan.serialOverReduction) { // the steps' partial outputs add into a running sum
        sum = p.temporary(name + " running sum", w.partials);
        p.compute(fillOf(name + ".serial.zero", w.partials, pr.partials)).write(sum);
    }
    if (serial > 1)
        p.repeat(name + ".serial", serial);
    const PlanTensor inputs = p.temporary(name + " inputs", w.temp);
    p.exchange(name + ".in", std::move(w.x)).read(reads).write(inputs);
    const PlanTensor partials = p.temporary(name + " partials", w.partials);
    p.compute(std::move(w.conv), false).read(inputs).write(partials);
    if (plan.tilesPerInGroups > 1) { // the reduction slices' partials meet on the tiles reducing them
        std::vector<ExchangeBytes> r(T);
        for (uint32_t t = 0; t < T; ++t) {
            const uint64_t moved = w.partials[t] * (plan.tilesPerInGroups - 1) / plan.tilesPerInGroups;
            r[t] = {moved, moved, 0};
        }
        const PlanTensor received = p.temporary(name + " reduce buffer", w.partials);
        p.exchange(name + ".reduce.in", std::move(r)).write(received);
        p.compute(std::move(w.reduce), false).read(received);
    }
    p.steps.back().read(partials);
    if (serial > 1 && plan.serialOverReduction) {
        ComputePlan add{name + ".serial.add", TileCalls(T)};
        ShareRecipes<uint64_t> recipes;
        for (uint32_t t = 0; t < T; ++t)
            if (w.partials[t])
                add.calls.add(t, recipes(w.partials[t], [&] {
                    return std::vector<VertexCall>{calls::binary(costs::BinaryOpKind::Add, pr.partials, w.partials[t] / bytesOf(pr.partials))};
                }));
        p.compute(std::move(add), false).read(partials).read(sum);
    }
    if (serial > 1)
        p.endRepeat();
    if (plan.tilesPerOutGroups > 1)
        result.width = std::min<uint64_t>(step.outChans, uint64_t(plan.outGroupsPerTile) * m_hw.amp(pr.input, pr.partials).units);
    return result;
}

const ConvPlan& GraphLowering::slotPlan(const ConvProblem& whole, ConvSlots& slots)
{
    // A batched problem's groups spread over equal slots of tiles (PopLibs splits conv groups
    // across tiles first); each slot plans one group on its tiles and runs its groups in turn.
    const uint32_t T = m_hw.tiles;
    slots.groups = std::max<uint64_t>(whole.groups, 1);
    slots.tilesPerSlot = slots.groups >= T ? 1 : uint32_t(T / slots.groups);
    slots.count = T / slots.tilesPerSlot;
    const uint64_t groupsPerSlot = ceilDiv(slots.groups, slots.count);
    ConvProblem pr = whole;
    pr.groups = 1;
    IpuParams slotHw = m_hw;
    slotHw.tiles = slots.tilesPerSlot;
    slotHw.availableMemoryProportion = m_hw.availableMemoryProportion / double(groupsPerSlot);
    return m_planCache.plan(slotHw, pr);
}

ComputePlan GraphLowering::fillOf(const std::string& name, const TileVector& bytes, Precision type)
{
    ComputePlan zero{name, TileCalls(uint32_t(bytes.size()))};
    ShareRecipes<uint64_t> recipes;
    for (uint32_t t = 0; t < bytes.size(); ++t)
        if (bytes[t])
            zero.calls.add(t, recipes(bytes[t], [&] { return std::vector<VertexCall>{calls::fill(type, bytes[t] / bytesOf(type))}; }));
    return zero;
}

TileVector GraphLowering::serialOutputs(const ConvProblem& pr, const ConvProblem& step, const ConvPlan& plan, const ConvWork& w) const
{
    // Split over the output channels, each step's outputs sit beside the last's on the same
    // tiles: the whole output is the steps' (real channels) together.
    TileVector out = convOutputsHeld(step, w);
    if (plan.serialSplits == 1 || plan.serialOverReduction)
        return out;
    std::vector<double> held(out.size());
    for (std::size_t t = 0; t < out.size(); ++t)
        held[t] = double(out[t] / bytesOf(pr.output)) * double(pr.outChans) / double(step.outChans);
    const std::vector<uint64_t> elements = wholeElements(held);
    for (std::size_t t = 0; t < out.size(); ++t)
        out[t] = elements[t] * bytesOf(pr.output);
    return out;
}

void GraphLowering::planConvTiles(const ConvProblem& pr, const ConvPlan& plan, const ConvSlots& slots, ConvWork& w) const
{
    // Inputs and weights travel from where they live to the tiles that need them; a tile's
    // share of the weights is also wanted by its bus partner, so it arrives once for both.
    const AmpParams& amp = m_hw.amp(pr.input, pr.partials);
    const bool shared = plan.tilesPerPositions >= m_hw.tilesPerReceiveBus;
    const uint64_t outGroups = ceilDiv(pr.outChans, amp.units);
    const ConvOutputShare held = outputShare(pr);
    constexpr uint64_t kNoFill = UINT64_MAX;
    ShareRecipes<std::tuple<uint64_t, uint32_t, uint64_t, uint64_t>> tileCalls; // by positions, groups, slot groups, fill
    ShareRecipes<uint64_t> reduceCalls;                                         // by outputs reduced
    for (uint32_t slot = 0; slot < slots.count; ++slot) {
        const uint64_t n = slots.groups / slots.count + (slot < slots.groups % slots.count ? 1 : 0); // groups this slot runs
        for (uint64_t t = 0; n > 0 && t < plan.tilesUsed() && t < slots.tilesPerSlot; ++t) {
            // Tile t of the slot works on position slice p, output-group slice o, reduction slice i.
            const uint64_t p = t % plan.tilesPerPositions;
            const uint64_t o = (t / plan.tilesPerPositions) % plan.tilesPerOutGroups;
            const uint64_t positions = std::min(plan.positionsPerTile, pr.positions - std::min(pr.positions, p * plan.positionsPerTile));
            const uint32_t og = uint32_t(std::min<uint64_t>(plan.outGroupsPerTile, outGroups - std::min(outGroups, o * plan.outGroupsPerTile)));
            if (positions == 0 || og == 0)
                continue;
            const uint32_t tile = uint32_t(slot * slots.tilesPerSlot + t);
            const double share = double(positions) / double(plan.positionsPerTile);
            const uint64_t inBytes = uint64_t(double(plan.inputBytesPerTile) * share) * n;
            const uint64_t weightBytes = plan.weightBytesPerTile / plan.outGroupsPerTile * og * n;
            w.x[tile].recv += inBytes;
            (shared ? w.x[tile].recvShared : w.x[tile].recv) += weightBytes;
            w.temp[tile] = inBytes + weightBytes;
            const uint64_t slice = positions * og * amp.units * n; // outputs of the tile's slice
            w.partials[tile] = slice * bytesOf(pr.partials);
            // The reduced outputs of the slice split evenly over its reduction tiles (tile t is
            // reduction slice i); each tile reduces its share of them.
            const uint64_t i = t / (plan.tilesPerPositions * plan.tilesPerOutGroups);
            const uint64_t mine = slice * (i + 1) / plan.tilesPerInGroups - slice * i / plan.tilesPerInGroups;
            // A problem that computes fewer positions than it writes (a strided layer's data
            // gradient) zero-fills the rest of the tile's real outputs.
            const uint64_t fill = pr.outputPositions && mine ? uint64_t(double(mine) * held.realShare * (held.written - 1.0)) : kNoFill;
            w.conv.calls.add(tile, tileCalls({positions, og, n, fill}, [&] {
                std::vector<VertexCall> c{calls::conv(tileShape(pr, plan, positions, og, uint32_t(n)))};
                if (plan.tilesPerInGroups == 1 && pr.partials != pr.output)
                    c.push_back(calls::cast(pr.partials, pr.output, slice));
                if (fill != kNoFill)
                    c.push_back(calls::fill(pr.output, fill));
                return c;
            }));
            if (plan.tilesPerInGroups > 1 && mine > 0) {
                w.reduce.calls.add(tile, reduceCalls(mine, [&] {
                    std::vector<VertexCall> c{calls::partialsReduce(pr.partials, mine, plan.tilesPerInGroups)};
                    if (pr.partials != pr.output)
                        c.push_back(calls::cast(pr.partials, pr.output, mine));
                    return c;
                }));
            }
            w.out[tile] = mine * bytesOf(pr.output);
        }
    }
}

GraphLowering::ConvOutputShare GraphLowering::outputShare(const ConvProblem& pr) const
{
    // Outputs hold the real channels only (AMP groups are padded); a problem that computes
    // fewer positions than it writes (a strided layer's data gradient) writes the rest too.
    const uint64_t units = m_hw.amp(pr.input, pr.partials).units;
    return {double(pr.outChans) / double(ceilDiv(pr.outChans, units) * units),
            pr.outputPositions ? double(pr.outputPositions) / double(pr.positions) : 1.0};
}

TileVector GraphLowering::convOutputsHeld(const ConvProblem& pr, const ConvWork& w) const
{
    const uint32_t T = m_hw.tiles;
    const ConvOutputShare share = outputShare(pr);
    std::vector<double> held(T, 0.0); // real elements each tile holds, before whole-element rounding
    for (uint32_t t = 0; t < T; ++t)
        held[t] = double(w.out[t] / bytesOf(pr.output)) * share.realShare * share.written;
    const std::vector<uint64_t> elements = wholeElements(held);
    TileVector out(T, 0);
    for (uint32_t t = 0; t < T; ++t)
        out[t] = elements[t] * bytesOf(pr.output);
    return out;
}

} // namespace ipusim
