// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/StatGroup.hpp"
#include "models/program/Schedule.hpp"
#include "models/timing/LinkTiming.hpp"

#include <systemc>

#include <vector>

namespace ipusim {

/** A link that moves bytes to and from one IPU: a transfer costs the link's latency plus the
 *  bytes at its effective bandwidth, in tile cycles. The host link and Streaming Memory are two. */
class TransferLink : public sc_core::sc_module
{
public:
    TransferLink(sc_core::sc_module_name name, double bytesPerSecond, double efficiency, uint64_t latencyCycles, double clockHz)
        : sc_module(name), m_bytesPerSecond(bytesPerSecond), m_efficiency(efficiency), m_latency(latencyCycles), m_clockHz(clockHz)
    {
    }

    [[nodiscard]] uint64_t transferCycles(uint64_t bytes) const
    {
        return linkTransferCycles(bytes, m_bytesPerSecond, m_efficiency, m_latency, m_clockHz);
    }
    /** Starts a transfer; returns its duration and counts its bytes. */
    uint64_t transfer(Direction direction, uint64_t bytes)
    {
        account(direction, bytes);
        return transferCycles(bytes);
    }
    /** Counts bytes of a transfer whose time was spent earlier (a consumed prefetch). */
    void account(Direction direction, uint64_t bytes) { (direction == Direction::ToIpu ? m_toIpu : m_fromIpu) += bytes; }
    [[nodiscard]] uint64_t bytesToIpu() const { return m_toIpu; }
    [[nodiscard]] uint64_t bytesFromIpu() const { return m_fromIpu; }
    [[nodiscard]] const StatGroup& stats() const { return m_stats; }

protected:
    StatGroup& statGroup() { return m_stats; }
    /** Each kind of link registers its byte counts under its own names. */
    void registerStats(const char* toIpu, const char* fromIpu, const char* what)
    {
        m_stats.add(toIpu, m_toIpu, "B", std::string("bytes to the IPU over its ") + what);
        m_stats.add(fromIpu, m_fromIpu, "B", std::string("bytes from the IPU over its ") + what);
    }

private:
    double m_bytesPerSecond, m_efficiency;
    uint64_t m_latency;
    double m_clockHz;
    uint64_t m_toIpu = 0, m_fromIpu = 0;
    StatGroup m_stats;
};

} // namespace ipusim
