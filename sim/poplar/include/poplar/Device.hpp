// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: a device of the simulated system. attach() always succeeds (no other
// process holds a simulated IPU).
#include <poplar/Target.hpp>

#include <vector>

namespace poplar {

class Device
{
public:
    Device() = default;
    Device(unsigned id, Target target) : m_id(id), m_target(std::move(target)), m_valid(true) {}
    [[nodiscard]] unsigned getId() const { return m_id; }
    [[nodiscard]] const Target& getTarget() const { return m_target; }
    bool attach() { return m_attached = m_valid; }
    void detach() { m_attached = false; }
    [[nodiscard]] bool isAttached() const { return m_attached; }
    [[nodiscard]] bool supportsRemoteBuffers() const { return true; }
    [[nodiscard]] std::vector<unsigned> getDriverIDs() const { return {m_id}; }
    explicit operator bool() const { return m_valid; }

private:
    unsigned m_id = 0;
    Target m_target;
    bool m_valid = false;
    bool m_attached = false;
};

} // namespace poplar
