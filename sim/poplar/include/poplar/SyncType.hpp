// SPDX-License-Identifier: MIT
#pragma once
namespace poplar {
/** INTERNAL: the tiles of one IPU; EXTERNAL and GLOBAL: every IPU of the device. */
enum class SyncType { INTERNAL, EXTERNAL, GLOBAL };
} // namespace poplar
