// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/Precision.hpp"
#include "models/hw/SchemaDefaults.hpp" // generated from the schema at configure time

#include <cstdint>
#include <tuple>

namespace ipusim {

/** AMP geometry for one (input, partials) precision pair. */
struct AmpParams
{
    uint32_t macsPerCycle = schema::kIpuAmpFp16Fp16MacsPerCycle;
    uint32_t units = schema::kIpuAmpFp16Fp16Units;                     // output channels per pass
    uint32_t inChansPerGroup = schema::kIpuAmpFp16Fp16InChansPerGroup; // input channels each unit consumes per output position
    /** Worker cycles to push one output position through all units: the AMP core step. */
    [[nodiscard]] uint32_t cyclesPerPosition() const { return units * inChansPerGroup / macsPerCycle; }
    friend bool operator==(const AmpParams& a, const AmpParams& b)
    {
        return a.macsPerCycle == b.macsPerCycle && a.units == b.units && a.inChansPerGroup == b.inChansPerGroup;
    }
};

/** One IPU's parameters. Plain data: sim/config decodes them from a config. Units, sources and
 *  defaults are the schema's (`ipusim params`); the defaults here are generated from it. */
struct IpuParams
{
    uint32_t tiles = schema::kIpuTiles;
    uint32_t columns = schema::kIpuColumns;
    uint64_t tileMemoryBytes = schema::kIpuTileMemoryBytes;
    uint32_t workers = schema::kIpuWorkerContexts;
    double clockHz = schema::kIpuClockHz;
    uint32_t vectorWidthBits = schema::kIpuVectorWidthBits;
    uint32_t supervisorOverhead = schema::kIpuSupervisorOverheadCycles;
    uint32_t memcpyBytesPerCycle = schema::kIpuMemcpyBytesPerCycle;
    uint32_t sendBytesPerCycle = schema::kIpuExchangeSendBytesPerCycle;
    uint32_t recvBytesPerCycle = schema::kIpuExchangeRecvBytesPerCycle;
    uint32_t tilesPerReceiveBus = schema::kIpuExchangeTilesPerReceiveBus;
    uint32_t exchangeLatencyBase = schema::kIpuExchangeLatencyBaseCycles;
    uint32_t exchangeLatencyPerRow = schema::kIpuExchangeLatencyCyclesPerRow;
    uint32_t internalSyncCycles = schema::kIpuSyncInternalCycles;
    AmpParams ampHalfHalf{schema::kIpuAmpFp16Fp16MacsPerCycle, schema::kIpuAmpFp16Fp16Units, schema::kIpuAmpFp16Fp16InChansPerGroup};
    AmpParams ampHalfFloat{schema::kIpuAmpFp16Fp32MacsPerCycle, schema::kIpuAmpFp16Fp32Units, schema::kIpuAmpFp16Fp32InChansPerGroup};
    AmpParams ampFloatFloat{schema::kIpuAmpFp32Fp32MacsPerCycle, schema::kIpuAmpFp32Fp32Units, schema::kIpuAmpFp32Fp32InChansPerGroup};
    uint32_t coeffLoadBytesPerCycle = schema::kIpuAmpCoeffLoadBytesPerCycle;
    uint32_t codeBytesPerVertexType = schema::kIpuMemoryCodeBytesPerVertexType;
    uint32_t vertexStateBytes = schema::kIpuMemoryVertexStateBytes;
    uint32_t controlCodeBytesPerStep = schema::kIpuMemoryControlCodeBytesPerStep;
    uint32_t exchangeCodeBytesPerPhase = schema::kIpuMemoryExchangeCodeBytesPerPhase;
    double availableMemoryProportion = schema::kIpuMemoryAvailableMemoryProportion;

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

    /** Every field above: a new field joins this list. */
    [[nodiscard]] auto fields() const
    {
        return std::tie(tiles, columns, tileMemoryBytes, workers, clockHz, vectorWidthBits, supervisorOverhead, memcpyBytesPerCycle,
                        sendBytesPerCycle, recvBytesPerCycle, tilesPerReceiveBus, exchangeLatencyBase, exchangeLatencyPerRow,
                        internalSyncCycles, ampHalfHalf, ampHalfFloat, ampFloatFloat, coeffLoadBytesPerCycle, codeBytesPerVertexType,
                        vertexStateBytes, controlCodeBytesPerStep, exchangeCodeBytesPerPhase, availableMemoryProportion);
    }

    /** Two IPUs whose parameters are equal lower an op alike (their compiles share lowered ops). */
    friend bool operator==(const IpuParams& a, const IpuParams& b) { return a.fields() == b.fields(); }
    friend bool operator!=(const IpuParams& a, const IpuParams& b) { return !(a == b); }
};

} // namespace ipusim
