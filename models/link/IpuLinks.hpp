// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"

#include <systemc>

#include <map>

namespace ipusim {

/** The IPU-Links of a system; their timing is models/timing/LinkTiming. */
class IpuLinks : public sc_core::sc_module
{
public:
    IpuLinks(sc_core::sc_module_name name, const Topology& topology, const IpuLinkParams& link, double clockHz);

    [[nodiscard]] uint64_t transferCycles(uint32_t from, uint32_t to, uint64_t bytes) const;
    /** A ring collective (ringCycles). */
    [[nodiscard]] uint64_t ringCycles(const std::vector<uint32_t>& ring, uint64_t bytes, CollectiveKind kind) const;
    /** Counts a ring collective's bytes on every ring edge (statistics); returns them. */
    std::vector<std::pair<std::pair<uint32_t, uint32_t>, uint64_t>> accountRing(const std::vector<uint32_t>& ring, uint64_t bytes,
                                                                                CollectiveKind kind);
    /** Counts bytes sent from `from` to `to` (statistics). */
    void account(uint32_t from, uint32_t to, uint64_t bytes) { m_bytes[{from, to}] += bytes; }
    [[nodiscard]] const std::map<std::pair<uint32_t, uint32_t>, uint64_t>& bytes() const { return m_bytes; }
    [[nodiscard]] const Topology& topology() const { return m_topology; }
    /** VCD: one traced value per directed link, the bytes its current transfer moves. */
    void traceTo(sc_core::sc_trace_file* file);
    /** The bytes `from` now sends to `to` (0: idle); only directly linked pairs are traced. */
    void setActive(uint32_t from, uint32_t to, uint64_t bytes);
    /** `from` starts a step that uses no link. */
    void clearFrom(uint32_t from);

private:
    const Topology& m_topology;
    IpuLinkParams m_link;
    double m_clockHz;
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> m_bytes;
    std::map<std::pair<uint32_t, uint32_t>, int64_t> m_active; // stable addresses for sc_trace
};

} // namespace ipusim
