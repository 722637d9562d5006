// SPDX-License-Identifier: MIT
#pragma once

namespace ipusim {

/** An element-wise comparison of two tensors (torch.eq, torch.lt, torch.gt; ONNX's Equal, Less,
 *  Greater): a mask, no gradient through it. */
enum class Comparison { Equal, Less, Greater };

} // namespace ipusim
