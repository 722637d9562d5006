// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Precision.hpp"

#include <cstdint>

namespace ipusim {

/** AMP geometry for one (input, partials) precision pair. */
struct AmpParams
{
    uint32_t macsPerCycle = 64;
    uint32_t units = 16;           // output channels per pass
    uint32_t inChansPerGroup = 16; // input channels each unit consumes per output position
    /** Worker cycles to push one output position through all units: the AMP core step. */
    [[nodiscard]] uint32_t cyclesPerPosition() const { return units * inChansPerGroup / macsPerCycle; }
};

/** One IPU's parameters (configs/hardware/mk2.json; units and sources in the schema). Plain
 *  data: sim/config decodes them from a config. */
struct IpuParams
{
    uint32_t tiles = 1472;
    uint32_t columns = 16;
    uint64_t tileMemoryBytes = 638976;
    uint32_t workers = 6;
    double clockHz = 1.33e9;
    uint32_t vectorWidthBits = 64;
    uint32_t supervisorOverhead = 11;
    uint32_t memcpyBytesPerCycle = 8;
    uint32_t sendBytesPerCycle = 4;
    uint32_t recvBytesPerCycle = 4;
    uint32_t tilesPerReceiveBus = 2;
    uint32_t exchangeLatencyBase = 52;
    uint32_t exchangeLatencyPerRow = 2;
    uint32_t internalSyncCycles = 126;
    AmpParams ampHalfHalf{64, 16, 16};
    AmpParams ampHalfFloat{32, 8, 16};
    AmpParams ampFloatFloat{16, 16, 8};
    uint32_t coeffLoadBytesPerCycle = 16;
    uint32_t codeBytesPerVertexType = 1024;
    uint32_t vertexStateBytes = 48;
    uint32_t controlCodeBytesPerStep = 16;
    uint32_t exchangeCodeBytesPerPhase = 32;
    double availableMemoryProportion = 0.6;

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
};

} // namespace ipusim
