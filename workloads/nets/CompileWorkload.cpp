// SPDX-License-Identifier: MIT
#include "workloads/nets/CompileWorkload.hpp"

#include "workloads/nets/Bert.hpp"
#include "workloads/nets/GraphModel.hpp"
#include "workloads/nets/Mnist.hpp"

namespace ipusim {
namespace {

struct Compiler
{
    const SystemParams& system;
    const Diagnostics& diag;
    CompiledSchedule operator()(ScheduleSpec& s) const { return accountSchedule(std::move(s.schedule), system); }
    CompiledSchedule operator()(const MnistSpec& s) const { return compileMnist(s, system, diag); }
    CompiledSchedule operator()(const BertSpec& s) const { return compileBert(s, system, diag); }
    CompiledSchedule operator()(const GraphSpec& s) const { return compileGraphModel(s, system, diag); }
};

} // namespace

CompiledSchedule compileWorkload(WorkloadSpec workload, const SystemParams& system, const Diagnostics& diag)
{
    return std::visit(Compiler{system, diag}, workload);
}

} // namespace ipusim
