// SPDX-License-Identifier: MIT
#include "workloads/schedule/Schedule.hpp"

namespace ipusim {

void numberPoints(Program& program)
{
    uint32_t point = 0, computeSets = 0;
    forEachProgramStep(program, [&](Step& s) {
        if (auto* c = std::get_if<ComputeStep>(&s.op)) {
            c->point = point++;
            c->id = computeSets++;
        } else if (auto* x = std::get_if<ExchangeStep>(&s.op))
            x->point = point++;
        else if (auto* h = std::get_if<HostTransferStep>(&s.op))
            h->point = point++;
        else if (auto* i = std::get_if<IpuCopyStep>(&s.op))
            i->point = point++;
    });
    program.numPoints = point;
    program.numComputeSets = computeSets;
}

} // namespace ipusim
