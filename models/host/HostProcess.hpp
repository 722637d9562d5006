// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/PhaseObserver.hpp"
#include "models/timing/HostCallClock.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace ipusim {

/** The host process driving the simulated IPUs' host calls (one PopRun instance). A host call
 *  is a blocking run of the engine on all of them: the host starts the next call only when every
 *  IPU is back from the previous one, and then only once its data loader has the batch and the
 *  framework has dispatched the call (HostCallClock). Within a call it answers each IPU's host
 *  exchange after `syncCycles` (HostParams::syncLatencySeconds). It also keeps what the IPUs
 *  waited for between calls. */
class HostProcess
{
public:
    /** The call starts on the IPU at `start`, after `loaderWait` and `dispatch` cycles of waiting
     *  from the cycle the last IPU was back. */
    using Start = std::function<void(const HostCallClock::Call& call)>;

    HostProcess(uint32_t participants, HostCallClock clock, uint64_t syncCycles = 0);

    /** Participant `ipu` is ready for its next host call at `cycle`; `start` is called for every
     *  participant (perhaps at once) when the last one is. */
    void arrive(uint32_t ipu, uint64_t cycle, Start start);

    /** Records each call's batch building and dispatch as host spans there (null: nowhere). */
    void observe(IPhaseObserver* observer) { m_observer = observer; }

    /** Participants waiting now (for deadlock reports). */
    [[nodiscard]] std::vector<uint32_t> waiting() const;

    /** Over the calls started so far: cycles the IPUs waited for the data loader, and for the
     *  host's dispatch. */
    [[nodiscard]] uint64_t loaderWaitCycles() const { return m_loaderWait; }
    [[nodiscard]] uint64_t dispatchCycles() const { return m_dispatch; }
    [[nodiscard]] uint64_t calls() const { return m_calls; }
    [[nodiscard]] const HostCallClock& clock() const { return m_clock; }
    /** Cycles an IPU waits at the start of each host exchange for the host to answer. */
    [[nodiscard]] uint64_t syncLatencyCycles() const { return m_syncCycles; }

private:
    /** The host's work for `call` (number `number`, from 1) on its trace tracks. */
    void trace(const HostCallClock::Call& call, uint64_t number);

    HostCallClock m_clock;
    uint64_t m_syncCycles;
    IPhaseObserver* m_observer = nullptr;
    std::vector<Start> m_waiting; // indexed by participant; empty when not waiting
    uint32_t m_arrived = 0;
    uint64_t m_lastArrival = 0;
    uint64_t m_loaderWait = 0, m_dispatch = 0, m_calls = 0;
};

} // namespace ipusim
