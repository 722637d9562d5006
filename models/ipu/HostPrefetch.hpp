// SPDX-License-Identifier: MIT
#pragma once
#include "models/common/Snapshottable.hpp"
#include "models/link/IpuLinks.hpp"
#include "models/program/Schedule.hpp"

#include <systemc>

#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace ipusim {

/** One IPU's prefetch queue: a prefetching host transfer's data for later micro-batches is
 *  fetched into the IO tiles while earlier ones run, up to the step's depth ahead and never past
 *  the host call's last run of the step (a call's data comes with it). The Ipu starts each fetch
 *  on the links; this keeps which are ahead and how many the call has left. */
class HostPrefetch : public Snapshottable
{
public:
    /** `links` carry the fetches (null: none); `period` is a cycle in SystemC time. */
    HostPrefetch(const Program& program, const IpuLinks* links, sc_core::sc_time period);

    /** A host call starts: nothing is fetched ahead, and every run of the call is left to fetch. */
    void startCall();
    /** Is data of `h` fetched ahead (or on its way)? */
    [[nodiscard]] bool ahead(const HostTransferStep& h) const;
    /** Takes the oldest fetch ahead of `h`, this micro-batch's, if there is one. */
    std::optional<TransferKey> take(const HostTransferStep& h);
    /** A transfer of `h` starts: for a prefetching step, one fetch fewer left in the call. */
    void started(const HostTransferStep& h);
    /** `h`'s data was consumed: its buffer takes the next micro-batch's, fetched by refill(). */
    void consumed(const HostTransferStep& h);
    /** As the sequencer wakes: fills the buffers consumed, starting each fetch with `start`. */
    void refill(const std::function<TransferKey(const HostTransferStep&)>& start);

    /** The fetches left in the call, counting down. */
    void counters(std::vector<uint64_t*>& out) override;
    /** A fetch still on the links would not move with a skip: only once every fetch is in
     *  (then its end is past, like any other). */
    [[nodiscard]] bool settled() const override;
    /** An iteration that fetched and one past the call's last fetch differ: as many iterations
     *  as the fetches left last. */
    [[nodiscard]] uint64_t room(const uint64_t* growth, uint64_t iterations) const override;

private:
    const IpuLinks* m_links;
    sc_core::sc_time m_period;
    // Per prefetching step: its fetches ahead (oldest first), its runs in a host call, and of those
    // the ones not fetched yet in this call.
    std::map<const HostTransferStep*, std::deque<TransferKey>> m_ahead;
    std::map<const HostTransferStep*, uint64_t> m_runs;
    std::map<const HostTransferStep*, uint64_t> m_left;
    std::vector<const HostTransferStep*> m_consumed; // their next fetch starts as the sequencer wakes
};

} // namespace ipusim
