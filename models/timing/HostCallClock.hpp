// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/PhaseKind.hpp"

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace ipusim {

/** The host's data loader as PopTorch runs it (poptorch.DataLoader): a torch DataLoader whose
 *  batch is a whole host call's samples (micro-batch x gradient accumulation x device iterations
 *  x replicas), optionally behind an AsynchronousDataAccessor (DataLoaderMode.Async). */
struct DataLoaderParams
{
    uint32_t workers = 0;     // worker processes (num_workers); 0: the main process builds the batches
    bool async = false;       // an accessor process keeps `buffer` batches ready while the IPUs run
    uint32_t buffer = 3;      // the accessor's ring buffer (buffer_size)
    double sampleSeconds = 0; // one core's time to load and transform one sample; 0: free
    uint32_t instances = 1;   // PopRun instances, each with a loader like this for its share of the samples
    bool operator==(const DataLoaderParams& o) const
    {
        return workers == o.workers && async == o.async && buffer == o.buffer && sampleSeconds == o.sampleSeconds &&
               instances == o.instances;
    }
};

/** When the host starts each host call on the IPUs. The host waits until every IPU is back from
 *  the previous call (the call is a blocking run of the engine), takes the call's batch from its
 *  data loader (waiting if it is not built yet), and dispatches the call (the framework's
 *  per-call overhead). Timing model, per call k (0-based), in IPU cycles:
 *   - PopRun's I instances each load their share of the call's S samples, S / I, the same way
 *     at the same time (one is modelled); the I / H instances on each of H servers share its C
 *     cores, C' = C x H / I each;
 *   - an instance's batch takes B = S / I x sample_seconds on one core; its W workers on C'
 *     cores time-share them, so each worker takes B x W / min(W, C');
 *   - sync without workers: the main process builds batch k after call k-1 returns;
 *   - otherwise workers build batches round-robin (torch hands batch k to worker k mod W), each
 *     starting when it is free and when the host has taken batch k - D, D being what the loader
 *     may hold ahead: 2 per worker (torch's prefetch_factor), plus the accessor's ring buffer when
 *     async; the async accessor without workers builds them itself, one at a time;
 *   - call k starts at max(IPUs back, batch k built) + dispatch overhead. */
class HostCallClock
{
public:
    HostCallClock(const HostParams& host, const DataLoaderParams& loader, uint64_t samplesPerCall, double clockHz);

    /** The next call's timing: the IPUs waited `loaderWait` cycles for the batch, then
     *  `dispatch` cycles for the host, from the cycle they were all back. */
    struct Call
    {
        uint64_t start = 0, loaderWait = 0, dispatch = 0;
        uint64_t batchBegin = 0, batchBuilt = 0; // when the call's batch was built (equal for a free loader)
        uint32_t builder = 0;                    // which worker built it (0: the main process or accessor)
    };
    /** Every IPU is back from the previous call (or ready for the first) at `devicesFree`. */
    Call next(uint64_t devicesFree);

    /** One worker's cycles for a batch (with time-sharing); 0 when the loader is free. */
    [[nodiscard]] uint64_t batchCycles() const { return m_batch; }
    /** Batches built at once. */
    [[nodiscard]] uint32_t builders() const { return uint32_t(m_builderFree.size()); }
    [[nodiscard]] uint64_t dispatchCycles() const { return m_dispatch; }

    /** What an IPU waits for before call `number` (from 1), each up to its end cycle: the other
     *  IPUs' ends (sync, `host call N wait`), the data loader (`data loader, call N`), the
     *  dispatch (`host call N`). Each runs from the previous one's end; empty ones are skipped. */
    struct Wait
    {
        PhaseKind kind;
        std::string name;
        uint64_t end;
    };
    static std::array<Wait, 3> waitsBefore(const Call& call, uint64_t number);

private:
    uint64_t m_dispatch;
    uint64_t m_batch;
    bool m_ahead;       // batches are built while the IPUs run
    std::size_t m_depth; // batches the loader may build ahead of the host taking them
    std::vector<uint64_t> m_builderFree;
    std::deque<uint64_t> m_taken; // when the host took each of the last m_depth batches
    uint64_t m_calls = 0;
};

} // namespace ipusim
