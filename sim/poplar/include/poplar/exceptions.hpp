// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: the errors Poplar throws, under Poplar's names. Every message names
// what was wrong (the vertex, the field, the tensor) and what would be accepted.
#include <stdexcept>
#include <string>

namespace poplar {

struct poplar_error : std::runtime_error
{
    std::string type;
    explicit poplar_error(const std::string& message) : std::runtime_error(message), type("poplar_error") {}
    poplar_error(const std::string& kind, const std::string& message) : std::runtime_error(message), type(kind) {}
};

#define IPUSIM_POPLAR_ERROR(NAME)                                                                                       \
    struct NAME : poplar_error                                                                                          \
    {                                                                                                                   \
        explicit NAME(const std::string& message) : poplar_error(#NAME, message) {}                                     \
    };
IPUSIM_POPLAR_ERROR(graph_connection_error)
IPUSIM_POPLAR_ERROR(graph_cycle_error)
IPUSIM_POPLAR_ERROR(invalid_tile_mapping)
IPUSIM_POPLAR_ERROR(missing_perf_estimate)
IPUSIM_POPLAR_ERROR(no_size_specified)
IPUSIM_POPLAR_ERROR(index_error)
IPUSIM_POPLAR_ERROR(stream_connection_error)
IPUSIM_POPLAR_ERROR(stream_memory_allocation_error)
IPUSIM_POPLAR_ERROR(tensor_creation_error)
IPUSIM_POPLAR_ERROR(type_error)
IPUSIM_POPLAR_ERROR(unknown_field)
IPUSIM_POPLAR_ERROR(unknown_vertex_type)
IPUSIM_POPLAR_ERROR(graph_program_compilation_error)
IPUSIM_POPLAR_ERROR(invalid_option)
IPUSIM_POPLAR_ERROR(invalid_program)
IPUSIM_POPLAR_ERROR(memory_elem_constraints_error)
IPUSIM_POPLAR_ERROR(graph_memory_allocation_error)
IPUSIM_POPLAR_ERROR(parse_error)
IPUSIM_POPLAR_ERROR(unimplemented_error)
#undef IPUSIM_POPLAR_ERROR

} // namespace poplar
