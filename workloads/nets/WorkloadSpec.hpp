// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/Schedule.hpp"
#include "workloads/nets/BertSpec.hpp"
#include "workloads/nets/GraphSpec.hpp"
#include "workloads/nets/MnistSpec.hpp"

#include <type_traits>
#include <variant>

namespace ipusim {

/** A hand-written Schedule (`"kind": "schedule"`): read by the program's JSON reader, it needs
 *  no compiling. */
struct ScheduleSpec
{
    Schedule schedule;
};

/** What the user asked to run, one alternative per workload kind. A new kind adds its spec
 *  here, its decoder to sim/config's table of kinds and its compile function to
 *  compileWorkload (the build fails until all three exist). */
using WorkloadSpec = std::variant<ScheduleSpec, MnistSpec, BertSpec, GraphSpec>;

/** The options the compiler reads of a workload; none for a hand-written Schedule. */
inline WorkloadOptions* optionsOf(WorkloadSpec& workload)
{
    return std::visit([](auto& spec) -> WorkloadOptions* {
        if constexpr (std::is_same_v<std::decay_t<decltype(spec)>, ScheduleSpec>)
            return nullptr;
        else
            return &spec.options;
    }, workload);
}

} // namespace ipusim
