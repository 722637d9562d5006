// SPDX-License-Identifier: MIT
#pragma once
// A graph compiled for the engine: checked (every field connected, every tensor mapped, every
// vertex priced), each vertex's cycles, and each program lowered to a Schedule of the simulated
// device's IPUs.
#include "models/program/Schedule.hpp"
#include "sim/poplar/GraphStore.hpp"
#include "sim/poplar/ProgramNode.hpp"

#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

#include <memory>
#include <optional>
#include <vector>

namespace poplar::detail {

struct CompiledGraph
{
    std::shared_ptr<GraphStore> store; // the engine's own copy: its values change as it runs
    std::vector<NodePtr> programs;
    std::vector<std::uint64_t> vertexCycles; // by vertex: a worker's cycles, or the tile's for a MultiVertex
    /** By program, lowered when compiled; none for a program whose control flow depends on its data
     *  (lowered as each run decides it). */
    std::vector<std::optional<ipusim::Schedule>> schedules;
};

/** Throws as Poplar's compiler would, naming the vertex, the field and the tensor. */
void checkGraph(const GraphStore& store, const std::vector<NodePtr>& programs);

/** Each vertex's cycles: its setPerfEstimate, else its type's registered estimator, else its type's
 *  entry in the file IPUSIM_PERF_ESTIMATES names; none is an error naming the vertex. */
std::vector<std::uint64_t> priceVertices(const GraphStore& store);

/** The program on the device's IPUs: one Schedule program per IPU, in lockstep; If and RepeatWhile
 *  loops as `outcomes` (a host run's) say they went. */
ipusim::Schedule lowerProgram(const GraphStore& store, const std::vector<std::uint64_t>& vertexCycles, const ProgramNode& program,
                              const std::string& name, const ControlOutcomes* outcomes = nullptr);

inline std::string programName(std::size_t index) { return "poplar program " + std::to_string(index); }

std::shared_ptr<CompiledGraph> compile(const Graph& graph, ArrayRef<program::Program> programs);

} // namespace poplar::detail
