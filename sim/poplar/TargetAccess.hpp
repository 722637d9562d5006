// SPDX-License-Identifier: MIT
#pragma once
// Targets as the library makes them: from a hardware preset of the simulated system, and the
// narrower targets of virtual graphs.
#include "models/hw/SystemParams.hpp"

#include <poplar/Target.hpp>

#include <string>

namespace poplar {

struct TargetAccess
{
    /** `ipus` IPUs of the system preset, from its IPU `firstIpu`; `tilesPerIpu` 0: the preset's. */
    static Target make(const std::string& system, unsigned firstIpu, unsigned ipus, unsigned tilesPerIpu = 0);
    /** The target of a virtual graph over `tiles` tiles from `firstTile` of `whole`'s. */
    static Target narrow(const Target& whole, unsigned firstTile, unsigned tiles);
};

/** The hardware of the system a target's devices belong to, its IPUs with the target's tiles. */
ipusim::SystemParams systemOf(const Target& target);

/** The simulated system's preset: IPUSIM_SYSTEM, else pod16. */
std::string systemPreset();

} // namespace poplar
