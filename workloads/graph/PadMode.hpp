// SPDX-License-Identifier: MIT
#pragma once

namespace ipusim {

/** What a pad's border holds: a constant (filled), or the input's reflection or edge (copied
 *  from the input, as torch's reflect and replicate and ONNX's reflect and edge). */
enum class PadMode { Constant, Reflect, Edge };

} // namespace ipusim
