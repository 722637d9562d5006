// SPDX-License-Identifier: MIT
#include "models/program/Schedule.hpp"

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

} // namespace ipusim
