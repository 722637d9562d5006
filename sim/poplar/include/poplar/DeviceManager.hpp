// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: the devices of the simulated system. An IPU-POD16 by default (its 16
// one-IPU devices, then 8 of two IPUs, 4 of four, 2 of eight and one of sixteen, numbered as
// gc-info numbers them); IPUSIM_SYSTEM names another hardware preset (mk2, m2000, pod64, ...).
#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/TargetType.hpp>

#include <vector>

namespace poplar {

class DeviceManager
{
public:
    DeviceManager();
    static DeviceManager createDeviceManager() { return DeviceManager(); }
    /** Every device of `numIpus` IPUs (0: every device). */
    [[nodiscard]] std::vector<Device> getDevices(TargetType type = TargetType::IPU, unsigned numIpus = 0,
                                                 const OptionFlags& opts = {}) const;
    [[nodiscard]] std::vector<Device> getDevices(const OptionFlags& opts) const { return getDevices(TargetType::IPU, 0, opts); }
    [[nodiscard]] Device getDevice(unsigned deviceManagerId, const OptionFlags& opts = {}) const;
    [[nodiscard]] std::size_t getNumDevices() const { return m_devices.size(); }
    /** Devices of one IPU on the IPUs a device of several spans. */
    [[nodiscard]] std::vector<unsigned> getChildDeviceIds(unsigned parentId, unsigned numChildIpus = 1) const;

private:
    std::vector<Device> m_devices;
};

} // namespace poplar
