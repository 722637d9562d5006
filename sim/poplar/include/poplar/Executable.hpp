// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: a compiled graph and its programs (compileGraph), loaded by an Engine.
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace poplar {

namespace detail {
struct CompiledGraph;
}

class Executable
{
public:
    Executable(std::shared_ptr<detail::CompiledGraph> compiled) : m_compiled(std::move(compiled)) {}
    [[nodiscard]] const std::shared_ptr<detail::CompiledGraph>& compiled() const { return m_compiled; }

private:
    std::shared_ptr<detail::CompiledGraph> m_compiled;
};

using ProgressFunc = std::function<void(int, int)>;

/** Checks the graph (every field connected, every tensor mapped, every vertex priced) and lowers
 *  its programs onto the simulated IPUs; errors throw as Poplar's compiler does. */
Executable compileGraph(const Graph& graph, ArrayRef<program::Program> progs, const OptionFlags& opt = {},
                        ProgressFunc progressCallBack = {}, const DebugContext& debugContext = {});

} // namespace poplar
