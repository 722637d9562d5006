// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/PhaseKind.hpp"

#include <cstdint>
#include <string>

namespace ipusim {

/** Receives timestamped phases from the hardware model (tracing is an observer, off the
 *  model's logic). Contract: calls arrive in non-decreasing start order per IPU. */
class IPhaseObserver
{
public:
    /** Cycles [first, last]; empty when first > last. */
    struct CycleRange
    {
        uint64_t first = 0, last = UINT64_MAX;
        [[nodiscard]] bool empty() const { return first > last; }
        [[nodiscard]] bool everything() const { return first == 0 && last == UINT64_MAX; }
    };

    virtual ~IPhaseObserver() = default;
    /** The cycles whose phases and spans this observer records. Loops skip iterations (the same
     *  figures as simulating them, LoopSkipper) only where the iterations lie wholly
     *  outside, so the observer sees exactly what it would if every iteration were simulated.
     *  By default it records every cycle, and nothing is skipped. */
    [[nodiscard]] virtual CycleRange observedCycles() const { return {}; }
    virtual void phase(uint32_t ipu, PhaseKind kind, const std::string& name, uint64_t start, uint64_t end,
                       uint64_t iteration) = 0;
    /** Tiles [first, last] of `ipu` whose compute spans starting in the window are wanted. */
    [[nodiscard]] virtual bool tileWindow(uint32_t ipu, uint32_t& first, uint32_t& last, uint64_t& fromCycle,
                                          uint64_t& toCycle) const = 0;
    virtual void tileSpan(uint32_t ipu, uint32_t tile, const std::string& name, uint64_t start, uint64_t end) = 0;
    /** A called fragment (a pipeline stage's forward, backward, ...) with its micro-batch. */
    virtual void fragmentSpan(uint32_t ipu, const std::string& fragment, uint64_t start, uint64_t end, int64_t microBatch) = 0;
    /** Bytes crossing IPU-Links: an IPU copy's transfer or a ring collective. */
    virtual void linkSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end, uint64_t bytes) = 0;
    /** The host's own work on `track` (a data loader's worker building a batch, the dispatch
     *  of a host call); by default not recorded. */
    virtual void hostSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end)
    {
        (void)track, (void)name, (void)start, (void)end;
    }
};

} // namespace ipusim
