// SPDX-License-Identifier: MIT
// Targets and devices from the simulated system's hardware preset (its IPUs and their Mk2
// parameters), and the device list of a DeviceManager.
#include "sim/poplar/TargetAccess.hpp"

#include "sim/config/ConfigLoader.hpp"
#include "sim/config/ExperimentSpec.hpp"

#include <poplar/DeviceManager.hpp>
#include <poplar/IPUModel.hpp>
#include <poplar/exceptions.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <map>
#include <mutex>

namespace poplar {

namespace {

/** The decoded hardware of a preset, decoded once a process. */
const ipusim::SystemParams& systemOf(const std::string& preset)
{
    static std::mutex lock;
    static std::map<std::string, ipusim::SystemParams> decoded;
    std::lock_guard<std::mutex> guard(lock);
    auto it = decoded.find(preset);
    if (it == decoded.end()) {
        nlohmann::json doc = {{"name", "poplar"}, {"workload", {{"kind", "schedule"}}}};
        try {
            const auto cfg = ipusim::config::loadConfig(doc, "IPUSIM_SYSTEM", {"/system=" + preset}, "IPUSIM_SYSTEM");
            it = decoded.emplace(preset, ipusim::decodeSystem(cfg)).first;
        } catch (const std::exception& e) {
            throw poplar_error(fmt::format("IPUSIM_SYSTEM={}: not a hardware preset of ipusim (mk2, m2000, pod16, pod64, pod128, "
                                           "pod256): {}", preset, e.what()));
        }
    }
    return it->second;
}

} // namespace

ipusim::SystemParams systemOf(const Target& target)
{
    ipusim::SystemParams s = systemOf(target.ipusimSystem());
    s.ipu.tiles = target.getTilesPerIPU();
    return s;
}

std::string systemPreset()
{
    const char* name = std::getenv("IPUSIM_SYSTEM");
    return name && *name ? name : "pod16";
}

Target TargetAccess::make(const std::string& system, unsigned firstIpu, unsigned ipus, unsigned tilesPerIpu)
{
    const auto& s = systemOf(system);
    const auto& hw = s.ipu;
    if (firstIpu + ipus > s.numIpus)
        throw poplar_error(fmt::format("{} IPUs from IPU {}: the simulated {} has {} IPUs", ipus, firstIpu, system, s.numIpus));
    Target t;
    t.m_type = TargetType::IPU;
    t.m_system = system;
    t.m_firstIpu = firstIpu;
    t.m_ipus = ipus;
    t.m_tilesPerIpu = tilesPerIpu ? tilesPerIpu : hw.tiles;
    t.m_workers = hw.workers;
    t.m_bytesPerTile = unsigned(hw.tileMemoryBytes);
    t.m_exchangeBytesPerCycle = hw.sendBytesPerCycle;
    t.m_memcpyBytesPerCycle = hw.memcpyBytesPerCycle;
    t.m_vectorWidthBits = hw.vectorWidthBits;
    t.m_atomicStoreBytes = hw.atomicStoreBytes;
    t.m_tilesPerReceiveBus = hw.tilesPerReceiveBus;
    t.m_clockHz = hw.clockHz;
    return t;
}

Target TargetAccess::narrow(const Target& whole, unsigned firstTile, unsigned tiles)
{
    Target t = whole;
    if (firstTile % whole.m_tilesPerIpu == 0 && tiles % whole.m_tilesPerIpu == 0) {
        t.m_firstIpu = whole.m_firstIpu + firstTile / whole.m_tilesPerIpu;
        t.m_ipus = tiles / whole.m_tilesPerIpu;
    } else {
        if (firstTile / whole.m_tilesPerIpu != (firstTile + tiles - 1) / whole.m_tilesPerIpu)
            throw unimplemented_error(fmt::format("createVirtualGraph over tiles {} to {}: ipusim's virtual graphs are whole IPUs or "
                                                  "tiles of one IPU ({} tiles an IPU)", firstTile, firstTile + tiles, whole.m_tilesPerIpu));
        t.m_firstIpu = whole.m_firstIpu + firstTile / whole.m_tilesPerIpu;
        t.m_ipus = 1;
        t.m_tilesPerIpu = tiles;
    }
    return t;
}

Target Target::createIPUTarget(unsigned numIPUs, const std::string& systemType, const OptionFlags*)
{
    if (systemType != "ipu2" && systemType != "ipu21")
        throw poplar_error(fmt::format("createIPUTarget: system type '{}': expected ipu2 or ipu21 (ipusim simulates a Mk2)", systemType));
    return TargetAccess::make(systemPreset(), 0, numIPUs);
}

DeviceManager::DeviceManager()
{
    // Devices of 1, 2, 4, ... IPUs, each size's devices side by side, numbered in that order
    // (as gc-info lists an IPU-POD's devices).
    const std::string system = systemPreset();
    const unsigned ipus = systemOf(system).numIpus;
    unsigned id = 0;
    for (unsigned size = 1; size <= ipus; size *= 2)
        for (unsigned first = 0; first + size <= ipus; first += size)
            m_devices.emplace_back(id++, TargetAccess::make(system, first, size));
}

std::vector<Device> DeviceManager::getDevices(TargetType type, unsigned numIpus, const OptionFlags&) const
{
    std::vector<Device> out;
    if (type == TargetType::CPU)
        return out;
    for (const auto& d : m_devices)
        if (numIpus == 0 || d.getTarget().getNumIPUs() == numIpus)
            out.push_back(d);
    return out;
}

Device DeviceManager::getDevice(unsigned deviceManagerId, const OptionFlags&) const
{
    if (deviceManagerId >= m_devices.size())
        throw poplar_error(fmt::format("getDevice({}): the simulated system has devices 0 to {}", deviceManagerId, m_devices.size() - 1));
    return m_devices[deviceManagerId];
}

std::vector<unsigned> DeviceManager::getChildDeviceIds(unsigned parentId, unsigned numChildIpus) const
{
    const Target parent = getDevice(parentId).getTarget();
    std::vector<unsigned> out;
    for (const auto& d : m_devices) {
        const Target& t = d.getTarget();
        if (t.getNumIPUs() == numChildIpus && t.ipusimFirstIpu() >= parent.ipusimFirstIpu() &&
            t.ipusimFirstIpu() + t.getNumIPUs() <= parent.ipusimFirstIpu() + parent.getNumIPUs() && d.getId() != parentId)
            out.push_back(d.getId());
    }
    return out;
}

IPUModel::IPUModel(const char* ipuVersion) : IPUVersion(ipuVersion ? ipuVersion : "ipu2")
{
    const Target t = TargetAccess::make(systemPreset(), 0, 1);
    tilesPerIPU = t.getTilesPerIPU();
    numWorkerContexts = t.getNumWorkerContexts();
}

Target IPUModel::createTarget() const
{
    if (IPUVersion != "ipu2" && IPUVersion != "ipu21")
        throw poplar_error(fmt::format("IPUModel('{}'): expected ipu2 or ipu21 (ipusim simulates a Mk2)", IPUVersion));
    if (numWorkerContexts != TargetAccess::make(systemPreset(), 0, 1).getNumWorkerContexts())
        throw poplar_error("IPUModel: numWorkerContexts cannot change: a Mk2 tile has 6 worker contexts");
    return TargetAccess::make(systemPreset(), 0, numIPUs, tilesPerIPU);
}

Device IPUModel::createDevice(OptionFlags, bool, unsigned deviceManagerId) const
{
    return Device(deviceManagerId, createTarget());
}

} // namespace poplar
