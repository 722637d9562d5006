// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/Schedule.hpp"

#include <optional>

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

} // namespace ipusim
