// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Snapshottable.hpp"
#include "models/common/StatGroup.hpp"
#include "models/program/PhaseObserver.hpp"
#include "models/program/Schedule.hpp"
#include "models/sync/ExternalSync.hpp"

#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace ipusim {

/** Loop fast-forward for one IPU: once an iteration of a loop repeats the previous one exactly
 *  (every counter's growth, its length, and the state it leaves behind), the rest but the last
 *  are added at once instead of simulated. Loops ending at an external sync skip only when every
 *  IPU offers the same at that barrier (ExternalSync grants it); loops with other external
 *  syncs, IPU copies (which wait for partners) or collectives (whose links other IPUs share)
 *  never skip on their own, unless this is the only IPU with a program. Only iterations wholly
 *  outside the cycles the observer records are skipped.
 *
 *  It sees the IPU's modules only through their statistics (StatGroup) and their Snapshottable
 *  state, so what it skips is what they count. The sequencer (Ipu) calls it as a loop starts,
 *  at the external sync that ends an iteration and at each iteration's end. */
class LoopSkipper
{
public:
    /** What the skipper keeps of a running loop; the sequencer's frame for the loop holds it. */
    struct Loop
    {
        const std::vector<Step>* body = nullptr;
        std::vector<uint64_t> start;      // counters when the iteration began
        uint64_t startCycle = 0;
        std::vector<uint64_t> lastDelta;  // the previous iteration's growth
        std::vector<int64_t> lastShape;   // state after the previous iteration
        uint64_t lastDuration = 0;
        bool haveLast = false;
        std::vector<uint64_t> lastPartial; // growth up to the final barrier's arrival
        uint64_t lastArrival = 0;
        bool havePartial = false;
        bool resuming = false; // the sequencer sleeps through skipped iterations
    };
    /** Iterations to skip, and the cycles they take. */
    struct Skip
    {
        uint64_t iterations = 0, cycles = 0;
    };

    /** `stats` and `parts`: every counter and state of the IPU that loop iterations change, read
     *  at each snapshot (not here: their owners may still be registering them); `observed`: the
     *  cycles the observer records; `sharesLinks`: other IPUs with programs use the links this
     *  IPU uses (and wait for it at copies and collectives). */
    LoopSkipper(const Program& program, std::vector<const StatGroup*> stats, std::vector<Snapshottable*> parts,
                IPhaseObserver::CycleRange observed, bool sharesLinks);

    /** A loop of `count` iterations of `body` starts at `cycle`: its record, or null when it
     *  never skips (too few iterations, a call every N-th time inside, every cycle observed). */
    std::unique_ptr<Loop> enter(const std::vector<Step>& body, uint64_t count, uint64_t cycle);
    /** At the external sync that ends an iteration of `loop`, with `remaining` iterations left
     *  counting this one, this IPU's tiles first ready at `firstReady` and last at `arrival`:
     *  the skip it offers, when the iteration has so far grown exactly as the previous one. */
    std::optional<ExternalSync::SkipOffer> offer(Loop& loop, uint64_t remaining, uint64_t arrival, uint64_t firstReady);
    /** The barrier was released with `iterations` granted (0 when none). */
    void granted(uint64_t iterations) { m_grant = iterations; }
    /** At the end of an iteration of `loop` at `cycle`, more than one iteration `remaining`
     *  counting it, the tiles first ready at `firstReady`: how many iterations to skip (none
     *  unless the barrier granted them or the iteration repeated the previous one exactly). */
    Skip atIterationEnd(Loop& loop, uint64_t remaining, uint64_t cycle, uint64_t firstReady);
    /** Skips as atIterationEnd() decided, once the sequencer has found `skip.cycles` within its
     *  clock: adds the iterations' growth to every counter, lets every part follow, and takes up
     *  the loop again at `cycle`, past them. */
    void skip(Loop& loop, const Skip& skip, uint64_t cycle);
    /** Loop iterations skipped so far. */
    [[nodiscard]] uint64_t skipped() const { return m_skipped; }

private:
    /** What a loop body does, for fast-forward (cached per body). */
    struct Body
    {
        bool externalSync = false;   // any external sync inside (called fragments included)
        bool linked = false;         // any IPU copy, collective or host transfer: links shared, partners waited for
        bool endsExternal = false;   // the last step is an external sync
        bool periodic = false;       // a call every N-th time: iterations differ
        uint64_t externalSyncs = 0;  // per iteration
    };
    const Body& body(const std::vector<Step>& steps);
    /** Every counter: the statistics, then each part's; `starts` gets where each part's begin. */
    std::vector<uint64_t*> counters(std::vector<std::size_t>* starts = nullptr) const;
    std::vector<uint64_t> snapshot() const;
    std::vector<int64_t> shape(uint64_t cycle) const;
    [[nodiscard]] bool settled() const;
    /** At most `iterations`, as many as every part allows at the growth `growth` (counters() of
     *  an earlier iteration; none when they were laid out differently). */
    [[nodiscard]] uint64_t room(const std::vector<uint64_t>& growth, uint64_t iterations) const;
    /** How many of `count` iterations of `duration` cycles from cycle `from` on may be skipped
     *  without hiding anything the observer records. */
    [[nodiscard]] uint64_t unobserved(uint64_t from, uint64_t count, uint64_t duration, uint64_t firstReady) const;

    const Program& m_program;
    std::vector<const StatGroup*> m_stats;
    std::vector<Snapshottable*> m_parts;
    IPhaseObserver::CycleRange m_observed;
    bool m_sharesLinks;
    std::map<const std::vector<Step>*, Body> m_bodies;
    uint64_t m_grant = 0;   // iterations ExternalSync granted at the barrier ending this iteration
    uint64_t m_skipped = 0;
};

} // namespace ipusim
