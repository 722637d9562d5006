// SPDX-License-Identifier: MIT
#pragma once
#include "workloads/schedule/Schedule.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace ipusim {

enum class PhaseKind { Compute, Sync, Exchange, Host, IpuCopy, Collective, StreamingMemory };
inline const char* nameOf(PhaseKind k)
{
    switch (k) {
    case PhaseKind::Compute: return "compute";
    case PhaseKind::Sync: return "sync";
    case PhaseKind::Exchange: return "exchange";
    case PhaseKind::Host: return "host";
    case PhaseKind::IpuCopy: return "ipu_copy";
    case PhaseKind::Collective: return "collective";
    case PhaseKind::StreamingMemory: return "streaming_memory";
    }
    return "?";
}

/** The kind of phase a step takes time as; none for loops and calls. */
inline std::optional<PhaseKind> phaseKindOf(const Step& s)
{
    if (std::holds_alternative<ComputeStep>(s.op))
        return PhaseKind::Compute;
    if (std::holds_alternative<SyncStep>(s.op))
        return PhaseKind::Sync;
    if (std::holds_alternative<ExchangeStep>(s.op))
        return PhaseKind::Exchange;
    if (std::holds_alternative<HostTransferStep>(s.op))
        return PhaseKind::Host;
    if (std::holds_alternative<IpuCopyStep>(s.op))
        return PhaseKind::IpuCopy;
    if (std::holds_alternative<CollectiveStep>(s.op))
        return PhaseKind::Collective;
    if (std::holds_alternative<StreamingMemoryStep>(s.op))
        return PhaseKind::StreamingMemory;
    return std::nullopt;
}

/** Receives timestamped phases from the hardware model (tracing is an observer, off the
 *  model's logic). Contract: calls arrive in non-decreasing start order per IPU. */
class IPhaseObserver
{
public:
    virtual ~IPhaseObserver() = default;
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
};

} // namespace ipusim
