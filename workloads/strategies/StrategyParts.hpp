// SPDX-License-Identifier: MIT
#pragma once
// What the strategies that lower a model graph share (one IPU, pipelined or sharded, phased).
#include "workloads/lowering/GraphLowering.hpp"
#include "workloads/strategies/CompileGraph.hpp"
#include "workloads/strategies/CompiledSchedule.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ipusim {

/** The ops at `indices` that `keep` accepts. */
std::vector<const Op*> opsOf(const Graph& g, const std::vector<std::size_t>& indices, const std::function<bool(const Op&)>& keep);

/** Forward ops that recomputation runs again: not host loads (the data is kept) or losses. */
bool recomputable(const Op& op);

/** The op that stores the outputs to the host. */
Op storeOp(const OutputPlan& out);

/** The block whose op first produces each tensor ("" for weights, state and inputs no op makes). */
std::vector<std::string> producerBlocks(const Graph& g);

/** The stage (or phase) whose op first produces each tensor; -1 for weights, state and inputs. */
std::vector<int> producerStages(const Graph& g, const Placement& placement);

/** The forward ops, and the backward ops with their gradient accumulations, in order. */
std::vector<std::size_t> forwardOps(const ModelGraph& m);
std::vector<std::size_t> backwardOps(const ModelGraph& m);

/** The backward pass of `blocks` (in model order), block by block from the last: with
 *  recomputation, each block's forward ops run again from its kept inputs (its checkpoints)
 *  just before its backward ops, so only one block's activations are live at a time. Each
 *  block's gradient accumulations follow its backward ops. */
void lowerBackward(GraphLowering& l, const ModelGraph& m, const std::vector<std::string>& blocks, bool recompute);

/** One IPU's program builder and lowering, set up alike by every strategy. */
struct IpuLowering
{
    /** `earlier`: the lowerings of this compile's other IPUs. One with equal parameters shares
     *  its pools of runs and its lowered ops with this one, so a layer placed alike on both
     *  is lowered once (as Poplar compiles one graph for all the IPUs). */
    IpuLowering(const Graph& g, const SystemParams& system, const Placement& placement, const CompileOptions& opt, uint32_t ipu,
                const std::vector<std::unique_ptr<IpuLowering>>& earlier = {});
    IpuParams params; // the builder keeps a reference
    ProgramBuilder builder;
    GraphLowering lowering;
};

/** The strategies: the whole model on one IPU; stages pipelined or sharded over IPUs; phases
 *  taking turns, streamed from Streaming Memory. */
CompiledSchedule compileSingleIpu(const ModelGraph& m, const SystemParams& system, const Placement& placement,
                                  const CompileOptions& opt);
CompiledSchedule compilePipelined(const ModelGraph& m, const SystemParams& system, const Placement& placement,
                                  const CompileOptions& opt, const Diagnostics& diag);
CompiledSchedule compilePhased(const ModelGraph& m, const SystemParams& system, const Placement& placement,
                               const CompileOptions& opt, const Diagnostics& diag);

} // namespace ipusim
