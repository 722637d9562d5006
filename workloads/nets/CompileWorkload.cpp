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
    Schedule operator()(ScheduleSpec& s) const { return std::move(s.schedule); }
    Schedule operator()(const MnistSpec& s) const { return compileMnist(s, system, diag); }
    Schedule operator()(const BertSpec& s) const { return compileBert(s, system, diag); }
    Schedule operator()(const GraphSpec& s) const { return compileGraphModel(s, system, diag); }
};

} // namespace

Schedule compileWorkload(WorkloadSpec workload, const SystemParams& system, const Diagnostics& diag)
{
    return std::visit(Compiler{system, diag}, workload);
}

} // namespace ipusim
