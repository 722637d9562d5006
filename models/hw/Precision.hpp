// SPDX-License-Identifier: MIT
#pragma once

namespace ipusim {

/** A tensor's element type: what the compiler stores and the AMP multiplies (fp16, fp32), or
 *  8-bit data streamed from the host and cast on the IPU (eight-bit I/O; never an operand). */
enum class Precision { FP16, FP32, U8 };
inline unsigned bytesOf(Precision p) { return p == Precision::FP16 ? 2 : p == Precision::U8 ? 1 : 4; }
inline const char* nameOf(Precision p) { return p == Precision::FP16 ? "fp16" : p == Precision::U8 ? "u8" : "fp32"; }

} // namespace ipusim
