// SPDX-License-Identifier: MIT
#pragma once
#include <systemc>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace ipusim {

/** Barrier across the IPUs of a system over the Sync-Links. It releases its latency
 *  (externalSyncCycles, models/timing/SyncTiming) after the last IPU arrives. */
class ExternalSync : public sc_core::sc_module
{
public:
    /** `grant` iterations of the loop every participant offered to skip (0: none). */
    using Release = std::function<void(uint64_t releaseCycle, uint64_t nowCycle, uint64_t grant)>;

    /** A participant at the last barrier of a loop iteration whose last iterations were
     *  identical offers to skip `iterations` more of them, each `period` cycles long with
     *  `barriers` external syncs, the current one having begun at `iterationStart`. */
    struct SkipOffer
    {
        uint64_t iterations = 0, period = 0, iterationStart = 0, barriers = 0;
        bool operator==(const SkipOffer& o) const { return iterations == o.iterations && sameLoop(o); }
        /** The same loop at the same point: then all skip the fewest iterations any offers. */
        [[nodiscard]] bool sameLoop(const SkipOffer& o) const
        {
            return period == o.period && iterationStart == o.iterationStart && barriers == o.barriers;
        }
    };

    /** `participants` IPUs are simulated; the barrier spans `extent` IPUs (more when identical
     *  replicas are simulated once), which sets its latency. */
    ExternalSync(sc_core::sc_module_name name, uint32_t participants, uint32_t extent, double hopSeconds, double clockHz);

    [[nodiscard]] uint64_t latency() const { return m_latency; }

    /** A participant arrives at `cycle`; `release` is called for every participant when the
     *  last one arrives. When every participant made the same offer and this barrier ends the
     *  iteration exactly one period after it began, the iterations are granted to all: the
     *  system is periodic, so skipping them changes no figure but the wall time. */
    void arrive(uint32_t participant, uint64_t cycle, Release release, const SkipOffer* offer = nullptr);
    [[nodiscard]] uint64_t barriers() const { return m_barriers; }
    /** Participants waiting now (for deadlock reports). */
    [[nodiscard]] std::vector<uint32_t> waiting() const;

private:
    uint32_t m_participants;
    uint64_t m_latency;
    uint64_t m_barriers = 0;
    uint64_t m_lastArrival = 0;
    std::vector<Release> m_waiting; // indexed by participant; empty when not waiting
    std::vector<std::optional<SkipOffer>> m_offers;
};

} // namespace ipusim
