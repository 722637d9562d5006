// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: a host stream (FIFO) a Copy program reads from or writes to.
#include <poplar/Type.hpp>

#include <cstddef>
#include <string>

namespace poplar {

enum class ReplicatedStreamMode { REPLICATE, BROADCAST };

class DataStream
{
public:
    DataStream() = default;
    DataStream(std::string handle, Type type, std::size_t numElements, bool toDevice)
        : m_handle(std::move(handle)), m_type(type), m_numElements(numElements), m_toDevice(toDevice) {}
    [[nodiscard]] const std::string& handle() const { return m_handle; }
    [[nodiscard]] Type elementType() const { return m_type; }
    [[nodiscard]] std::size_t numElements() const { return m_numElements; }
    [[nodiscard]] bool toDevice() const { return m_toDevice; }

private:
    std::string m_handle;
    Type m_type;
    std::size_t m_numElements = 0;
    bool m_toDevice = true;
};

/** A buffer in Streaming Memory (the IPU-Gateway's DRAM): `repeats` slots of `numElements`
 *  elements, loaded into and stored from tensors by Copy programs. */
class RemoteBuffer
{
public:
    RemoteBuffer() = default;
    RemoteBuffer(std::string handle, Type type, std::size_t numElements, std::size_t repeats)
        : m_handle(std::move(handle)), m_type(type), m_numElements(numElements), m_repeats(repeats) {}
    [[nodiscard]] const std::string& handle() const { return m_handle; }
    [[nodiscard]] Type elementType() const { return m_type; }
    [[nodiscard]] std::size_t numElements() const { return m_numElements; }
    [[nodiscard]] std::size_t getRepeats() const { return m_repeats; }

private:
    std::string m_handle;
    Type m_type;
    std::size_t m_numElements = 0;
    std::size_t m_repeats = 1;
};

using HostToDeviceFIFO = DataStream;
using DeviceToHostFIFO = DataStream;

} // namespace poplar
