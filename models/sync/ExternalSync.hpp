// SPDX-License-Identifier: MIT
#pragma once
#include <systemc>

#include <cstdint>
#include <functional>
#include <vector>

namespace ipusim {

/** Barrier across the IPUs of a system over the Sync-Links. It releases its latency after the
 *  last IPU arrives; the latency grows with the group's extent as in PopLibs' IPU model:
 *  ceil(2 x hop time x clock x hops), hops = 1 + (IPUs / 2) / 2. */
class ExternalSync : public sc_core::sc_module
{
public:
    using Release = std::function<void(uint64_t releaseCycle, uint64_t nowCycle)>;

    /** `participants` IPUs are simulated; the barrier spans `extent` IPUs (more when identical
     *  replicas are simulated once), which sets its latency. */
    ExternalSync(sc_core::sc_module_name name, uint32_t participants, uint32_t extent, double hopSeconds, double clockHz);

    [[nodiscard]] static uint64_t latencyCycles(uint32_t ipus, double hopSeconds, double clockHz);
    [[nodiscard]] uint64_t latency() const { return m_latency; }

    /** A participant arrives at `cycle`; `release` is called for every participant when the
     *  last one arrives. */
    void arrive(uint32_t participant, uint64_t cycle, Release release);
    [[nodiscard]] uint64_t barriers() const { return m_barriers; }
    /** Participants waiting now (for deadlock reports). */
    [[nodiscard]] std::vector<uint32_t> waiting() const;

private:
    uint32_t m_participants;
    uint64_t m_latency;
    uint64_t m_barriers = 0;
    uint64_t m_lastArrival = 0;
    std::vector<Release> m_waiting; // indexed by participant; empty when not waiting
};

} // namespace ipusim
