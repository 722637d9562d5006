// SPDX-License-Identifier: MIT
#include "models/program/Schedule.hpp"

#include "models/common/SaturatingCycles.hpp"

#include <algorithm>
#include <optional>

namespace ipusim {

void numberPoints(Program& program)
{
    uint32_t point = 0, computeSets = 0;
    forEachProgramStep(program, [&](Step& s) {
        std::visit([&](auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (kIsPointStep<T>)
                op.point = point++;
            if constexpr (std::is_same_v<T, ComputeStep>)
                op.id = computeSets++;
        }, s.op);
    });
    program.numPoints = point;
    program.numComputeSets = computeSets;
}

namespace {

/** A bound naming its step without copying the name; each fragment's worked out once, however
 *  many call sites reach it (a pipeline calls a stage's fragments from every slot). */
struct NamedBound
{
    uint64_t cycles = 0;
    const std::string* step = nullptr;
};

NamedBound boundOf(const Program& program, const std::vector<Step>& steps, std::vector<std::optional<NamedBound>>& fragments)
{
    NamedBound best;
    for (const auto& s : steps) {
        NamedBound b;
        if (auto* c = std::get_if<ComputeStep>(&s.op)) {
            for (const auto& r : c->cycles.runs())
                b.cycles = std::max(b.cycles, r.value);
            b.step = &c->name;
        } else if (auto* r = std::get_if<RepeatStep>(&s.op)) {
            b = boundOf(program, r->body, fragments);
            b.cycles = saturatingMul(r->count, b.cycles);
            b.step = &r->name;
        } else if (auto* call = std::get_if<CallStep>(&s.op); call && call->period == 1) {
            auto& known = fragments.at(call->fragment);
            if (!known)
                known = boundOf(program, program.fragments.at(call->fragment), fragments);
            b = *known;
        }
        if (b.cycles > best.cycles)
            best = b;
    }
    return best;
}

} // namespace

CycleBound lowerBoundCycles(const Program& program)
{
    std::vector<std::optional<NamedBound>> fragments(program.fragments.size());
    const NamedBound b = boundOf(program, program.steps, fragments);
    return {b.cycles, b.step ? *b.step : std::string()};
}

namespace {

uint64_t stepsIn(const Program& program, const std::vector<Step>& steps)
{
    uint64_t n = 0;
    for (const auto& s : steps) {
        n = saturatingAdd(n, 1);
        if (auto* r = std::get_if<RepeatStep>(&s.op))
            n = saturatingAdd(n, saturatingMul(r->count, stepsIn(program, r->body)));
        else if (auto* c = std::get_if<CallStep>(&s.op))
            n = saturatingAdd(n, stepsIn(program, program.fragments.at(c->fragment)));
    }
    return n;
}

} // namespace

uint64_t stepsExecuted(const Program& program) { return stepsIn(program, program.steps); }

namespace {

void countPrefetches(const Program& program, const std::vector<Step>& steps, uint64_t times,
                     std::map<const HostTransferStep*, uint64_t>& runs)
{
    for (const auto& s : steps) {
        if (auto* h = std::get_if<HostTransferStep>(&s.op); h && h->prefetch)
            runs[h] = saturatingAdd(runs[h], times);
        else if (auto* r = std::get_if<RepeatStep>(&s.op))
            countPrefetches(program, r->body, saturatingMul(times, r->count), runs);
        else if (auto* c = std::get_if<CallStep>(&s.op))
            countPrefetches(program, program.fragments.at(c->fragment), times / std::max<uint32_t>(c->period, 1), runs);
    }
}

} // namespace

std::map<const HostTransferStep*, uint64_t> prefetchRunsPerCall(const Program& program)
{
    std::map<const HostTransferStep*, uint64_t> runs;
    countPrefetches(program, program.steps, 1, runs);
    return runs;
}

std::map<uint32_t, std::vector<uint32_t>> replicaCopies(const Schedule& s)
{
    const uint32_t replicas = s.strategy ? s.strategy->replicas : 1, stride = uint32_t(s.programs.size());
    std::map<uint32_t, std::vector<uint32_t>> out;
    for (const Program& p : s.programs) {
        auto& copies = out[p.ipu];
        for (uint32_t r = 1; r < replicas; ++r)
            copies.push_back(p.ipu + r * stride);
    }
    return out;
}

} // namespace ipusim
