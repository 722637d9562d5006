// SPDX-License-Identifier: MIT
#pragma once

namespace ipusim {

/** A tensor's element type: what the compiler stores and the AMP multiplies. */
enum class Precision { FP16, FP32 };
inline unsigned bytesOf(Precision p) { return p == Precision::FP16 ? 2 : 4; }
inline const char* nameOf(Precision p) { return p == Precision::FP16 ? "fp16" : "fp32"; }

} // namespace ipusim
