// SPDX-License-Identifier: MIT
#pragma once
namespace poplar {
/** IPU: a device of the simulated system; IPU_MODEL: Poplar's host model (ipusim simulates a Mk2
 *  for it too); CPU: not offered. */
enum class TargetType { IPU, IPU_MODEL, CPU };
} // namespace poplar
