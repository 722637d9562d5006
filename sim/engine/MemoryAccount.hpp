// SPDX-License-Identifier: MIT
#pragma once
#include "models/memory/TileMemory.hpp"
#include "sim/engine/Experiment.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

namespace ipusim {

/** Each program's tile memory, accounted before anything is elaborated, in program order and
 *  only until a program does not fit: an out-of-memory run is reported as soon as the first
 *  IPU's peak is known, without accounting (or elaborating) the IPUs after it. */
struct MemoryAccount
{
    std::vector<std::shared_ptr<const TileMemory>> memory; // the programs accounted, in order
    std::optional<std::size_t> firstOver;                 // the first program that does not fit
};

/** Takes the memory accounted as the experiment's schedule was compiled or, for programs it
 *  lacks (a schedule built in code), accounts it. */
MemoryAccount accountMemory(const Experiment& e);

} // namespace ipusim
