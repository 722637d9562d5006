// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <vector>

namespace ipusim {

/** A module's state as loop fast-forward (models/ipu/LoopSkipper) sees it beyond its
 *  statistics (StatGroup). The skipper knows modules only through these two, so a module that
 *  grows or keeps state from one loop iteration to the next says so here, where it keeps it,
 *  and no list in the skipper has to know.
 *
 *  Contract: two iterations are identical when every counter (registered statistics and
 *  counters() alike) grew by the same amount, they lasted as long and shape() is equal after
 *  each. The skipper then adds the skipped iterations' growth to every counter and calls
 *  skipped(). So counters() must give everything an iteration changes that a skip must change
 *  too, and shape() everything else a later iteration's timing depends on; a module that has
 *  work under way a skip would not move holds the skip back with settled() or room(). */
class Snapshottable
{
public:
    virtual ~Snapshottable() = default;
    /** Appends, writable, every counter an iteration grows that no statistic registers: the same
     *  ones in the same order at every call while shape() is unchanged. A counter may count
     *  down (its growth is taken modulo 2^64). */
    virtual void counters(std::vector<uint64_t*>& out) = 0;
    /** Appends what an iteration ending at `cycle` leaves behind, relative to `cycle`. None by
     *  default. */
    virtual void shape(uint64_t /*cycle*/, std::vector<int64_t>& /*out*/) const {}
    /** Whether a skip may start at SystemC's present time: false while work is under way that a
     *  skip would not move (a fetch still on the links). True by default. */
    [[nodiscard]] virtual bool settled() const { return true; }
    /** How many of `iterations` may be skipped, each growing this module's counters() by
     *  `growth` (in their order): fewer when its state runs out first (the fetches left in a
     *  host call). All by default. */
    [[nodiscard]] virtual uint64_t room(const uint64_t* /*growth*/, uint64_t iterations) const { return iterations; }
    /** `times` iterations were skipped: each of counters() has grown `times` × `growth` and time
     *  has moved on `cycles`. Brings along what follows from them (ready times, the bytes of
     *  links other IPUs share). Nothing by default. */
    virtual void skipped(const uint64_t* /*growth*/, uint64_t /*times*/, uint64_t /*cycles*/) {}
};

} // namespace ipusim
