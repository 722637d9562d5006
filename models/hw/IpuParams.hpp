// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/ParamFields.hpp"
#include "models/hw/Precision.hpp"

#include <cstdint>

namespace ipusim {

/** AMP geometry for one (input, partials) precision pair: macsPerCycle, units (output channels
 *  per pass) and inChansPerGroup (input channels each unit consumes per output position). The
 *  fields are the schema's, below /system/ipu/amp/<pair> (a default AmpParams is fp16_fp16's). */
struct AmpParams
{
    IPUSIM_PARAM_FIELDS(AmpParams, IPUSIM_AMP_PARAMS_FIELDS)

    /** Worker cycles to push one output position through all units: the AMP core step. */
    [[nodiscard]] uint32_t cyclesPerPosition() const { return units * inChansPerGroup / macsPerCycle; }
    friend bool operator==(const AmpParams& a, const AmpParams& b) { return sameParams(a, b); }
};

/** One IPU's parameters. Plain data: sim/config decodes them from a config. Each field is a
 *  parameter the schema declares below /system/ipu with its C++ name ("x-cpp-field"), type and
 *  default, generated at configure time; its unit, range, source and meaning are the schema's
 *  (`ipusim params`). A new parameter is one schema entry: its field appears here. */
struct IpuParams
{
    IPUSIM_PARAM_FIELDS(IpuParams, IPUSIM_IPU_PARAMS_FIELDS)

    [[nodiscard]] const AmpParams& amp(Precision in, Precision partials) const
    {
        if (in == Precision::FP32)
            return ampFloatFloat;
        return partials == Precision::FP16 ? ampHalfHalf : ampHalfFloat;
    }
    /** Elements of `p` per vector instruction (4 x fp16 or 2 x fp32 on a 64-bit path). */
    [[nodiscard]] uint32_t vectorWidth(Precision p) const { return vectorWidthBits / (8 * bytesOf(p)); }
    /** Rows of tiles an exchange path may cross. */
    [[nodiscard]] uint32_t rows() const { return (tiles + columns - 1) / columns; }

    /** Two IPUs whose parameters are equal lower an op alike (their compiles share lowered ops). */
    friend bool operator==(const IpuParams& a, const IpuParams& b) { return sameParams(a, b); }
    friend bool operator!=(const IpuParams& a, const IpuParams& b) { return !(a == b); }
};

} // namespace ipusim
