// SPDX-License-Identifier: MIT
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace ipusim {

/** Where the two ends of IPU-copy transfers meet. A transfer from IPU a to IPU b is listed on
 *  both: as a send in a copy step of a, as a receive in one of b. The n-th send on an edge pairs
 *  with the n-th receive on it, and the transfer starts once both ends have reached their copy
 *  step, as the BSP exchange between IPUs does: a receiver never takes data before its sender
 *  has it, and a sender never pushes into an IPU still computing. */
class CopyRendezvous
{
public:
    /** One transfer as one of its IPUs lists it. */
    struct End
    {
        uint32_t from = 0, to = 0;
        bool sending = false; // listed by `from` (a send) or by `to` (a receive)
        uint64_t bytes = 0;   // both listings of a transfer must give the same
        [[nodiscard]] uint32_t self() const { return sending ? from : to; }
        [[nodiscard]] uint32_t partner() const { return sending ? to : from; }
    };
    /** The cycle each End's partner reached its copy step, and each End's number on its edge
     *  (the n-th send pairs with the n-th receive), in the order the Ends were given. */
    using Release = std::function<void(const std::vector<uint64_t>& partnerReady, const std::vector<uint64_t>& numbers)>;
    /** Called once per transfer, as soon as both its ends are there: it can move now. */
    using Paired = std::function<void(const End& transfer, uint64_t number)>;
    void onPaired(Paired paired) { m_onPaired = std::move(paired); }

    /** `ipu` reaches copy step `step` at `ready`; `release` is called (perhaps at once) when
     *  every partner of `ends` has reached its own. An IPU waits at one copy at a time. */
    void arrive(uint32_t ipu, std::string step, std::vector<End> ends, uint64_t ready, Release release);

    /** An IPU waiting now, the copy it waits at and a transfer whose partner has not come. */
    struct Waiter
    {
        uint32_t ipu = 0;
        std::string step;
        End missing;
        uint64_t number = 0;       // the missing one's partner is the number-th listing on its edge
        uint64_t partnerListed = 0; // listings the partner's side of that edge has made so far
    };
    [[nodiscard]] std::vector<Waiter> waiting() const;

    /** The first pair whose two listings disagree on the bytes moved, described for the user
     *  (empty while every pair agrees). The transfer still runs, with the sender's count. */
    [[nodiscard]] const std::string& mismatch() const { return m_mismatch; }

    /** How an IPU spends a copy step it reached at `from` whose transfers ran over `spans`
     *  ([start, end), each from when both its ends were there): copying while any runs, waiting
     *  (sync) in between and for partners that come later. */
    struct Phase
    {
        bool copying = false;
        uint64_t start = 0, end = 0;
    };
    [[nodiscard]] static std::vector<Phase> phases(uint64_t from, std::vector<std::pair<uint64_t, uint64_t>> spans);

private:
    struct Waiting
    {
        std::string step;
        std::vector<End> ends;
        std::vector<uint64_t> numbers; // each End's number on its edge and side, from 1
        std::vector<uint64_t> partnerReady;
        std::vector<bool> paired;
        Release release;
    };
    /** One listing that has arrived and is not paired yet. */
    struct Arrival
    {
        uint64_t ready = 0, bytes = 0;
        uint64_t number = 0; // the n-th listing of its edge on its side
        std::string step;
    };
    using Side = std::tuple<uint32_t, uint32_t, bool>; // an edge, and which end listed it
    /** Pairs what `ipu` waits for with the partners' arrivals so far; releases it when all are. */
    void settle(uint32_t ipu);
    void checkBytes(const End& mine, const std::string& myStep, const Arrival& partner);
    [[nodiscard]] uint64_t listed(const Side& side) const;

    std::map<Side, std::deque<Arrival>> m_unpaired;
    std::map<Side, uint64_t> m_listed; // listings so far, per edge and side
    std::map<uint32_t, Waiting> m_waiting;
    std::string m_mismatch;
    Paired m_onPaired;
};

} // namespace ipusim
