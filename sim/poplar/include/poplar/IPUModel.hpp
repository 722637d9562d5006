// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: Poplar's IPUModel (a device run on the host). ipusim runs it as it runs
// every device: codelets on the host, cycles from simulating a Mk2.
#include <poplar/Device.hpp>
#include <poplar/OptionFlags.hpp>

#include <string>

namespace poplar {

class IPUModel
{
public:
    explicit IPUModel(const char* ipuVersion = "ipu2");
    std::string IPUVersion = "ipu2";
    unsigned numIPUs = 1;
    unsigned tilesPerIPU;
    unsigned numWorkerContexts;
    bool compileIPUCode = false;
    [[nodiscard]] Device createDevice(OptionFlags opts = {}, bool accurateHalf = false, unsigned deviceManagerId = 0) const;
    [[nodiscard]] Target createTarget() const;
};

} // namespace poplar
