// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: what a device is, answered from the simulated system's hardware
// description (a Mk2 IPU's tiles, worker contexts, clock and memory).
#include <poplar/Half.hpp>
#include <poplar/TargetType.hpp>
#include <poplar/Type.hpp>

#include <string>

namespace poplar {

class Target
{
public:
    Target() = default;
    /** A target of `numIPUs` Mk2 IPUs of the simulated system ("ipu2" or "ipu21" Poplar calls it;
     *  both are Mk2 here). */
    static Target createIPUTarget(unsigned numIPUs, const std::string& systemType = "ipu2", const class OptionFlags* opts = nullptr);

    [[nodiscard]] TargetType getTargetType() const { return m_type; }
    [[nodiscard]] std::string getTargetArchString() const { return "ipu2"; }
    [[nodiscard]] std::string getTargetSystemString() const { return "ipu2"; }
    [[nodiscard]] unsigned getNumIPUs() const { return m_ipus; }
    [[nodiscard]] unsigned getTilesPerIPU() const { return m_tilesPerIpu; }
    [[nodiscard]] unsigned getNumTiles() const { return m_ipus * m_tilesPerIpu; }
    [[nodiscard]] unsigned getNumWorkerContexts() const { return m_workers; }
    [[nodiscard]] unsigned getBytesPerTile() const { return m_bytesPerTile; }
    [[nodiscard]] std::size_t getMemoryBytes() const { return std::size_t(m_bytesPerTile) * getNumTiles(); }
    [[nodiscard]] double getTileClockFrequency() const { return m_clockHz; }
    [[nodiscard]] unsigned getExchangeBytesPerCycle() const { return m_exchangeBytesPerCycle; }
    [[nodiscard]] unsigned getMemcpyBytesPerCycle() const { return m_memcpyBytesPerCycle; }
    [[nodiscard]] unsigned getDataPathWidth() const { return m_vectorWidthBits; }
    [[nodiscard]] unsigned getVectorWidth(const Type& t) const { return m_vectorWidthBits / 8 / (t.size() ? t.size() : 1); }
    [[nodiscard]] unsigned getTypeSize(const Type& t) const { return t.size(); }
    [[nodiscard]] unsigned getAtomicStoreGranularity() const { return m_atomicStoreBytes; }
    [[nodiscard]] unsigned getTilesPerSharedExchangeBus() const { return m_tilesPerReceiveBus; }
    [[nodiscard]] unsigned getIpuLinkToHostBytesPerCycle() const { return 0; }
    /** The simulated system this target's devices belong to (a hardware preset: pod16, m2000, ...). */
    [[nodiscard]] const std::string& ipusimSystem() const { return m_system; }
    [[nodiscard]] unsigned ipusimFirstIpu() const { return m_firstIpu; }

private:
    friend struct TargetAccess;
    TargetType m_type = TargetType::IPU;
    std::string m_system;
    unsigned m_firstIpu = 0;
    unsigned m_ipus = 0;
    unsigned m_tilesPerIpu = 0;
    unsigned m_workers = 0;
    unsigned m_bytesPerTile = 0;
    unsigned m_exchangeBytesPerCycle = 0;
    unsigned m_memcpyBytesPerCycle = 0;
    unsigned m_vectorWidthBits = 0;
    unsigned m_atomicStoreBytes = 0;
    unsigned m_tilesPerReceiveBus = 0;
    double m_clockHz = 0;
};

/** Host floats as the device's half (IEEE binary16, to nearest even), for HALF tensors' host buffers. */
inline void copyFloatToDeviceHalf(const Target&, const float* src, void* dst, std::size_t numElements)
{
    auto* out = static_cast<std::uint16_t*>(dst);
    for (std::size_t i = 0; i < numElements; ++i)
        out[i] = detail::floatToHalfBits(src[i]);
}
inline void copyDeviceHalfToFloat(const Target&, const void* src, float* dst, std::size_t numElements)
{
    const auto* in = static_cast<const std::uint16_t*>(src);
    for (std::size_t i = 0; i < numElements; ++i)
        dst[i] = detail::halfBitsToFloat(in[i]);
}

} // namespace poplar
