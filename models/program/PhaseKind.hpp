// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/Schedule.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace ipusim {

/** What an IPU spends time in. The table below is the one list of kinds: engines, summaries,
 *  the printed table, traces and sweep columns all iterate it. */
enum class PhaseKind : uint8_t { Compute, Sync, Exchange, Host, IpuCopy, Collective, StreamingMemory, HostWait };

struct PhaseKindInfo
{
    PhaseKind kind;
    const char* name;  // in summary.json breakdowns, trace categories and sweep columns
    bool alwaysShown;  // the printed summary shows it even when it took no time
};

inline constexpr std::array<PhaseKindInfo, 8> kPhaseKinds{{
    {PhaseKind::Compute, "compute", true},
    {PhaseKind::Sync, "sync", true},
    {PhaseKind::Exchange, "exchange", true},
    {PhaseKind::Host, "host", true},
    {PhaseKind::IpuCopy, "ipu_copy", false},
    {PhaseKind::Collective, "collective", false},
    {PhaseKind::StreamingMemory, "streaming_memory", false},
    {PhaseKind::HostWait, "host_wait", false}, // before a host call, while the host dispatches it
}};

constexpr bool phaseKindsInOrder()
{
    for (std::size_t i = 0; i < kPhaseKinds.size(); ++i)
        if (std::size_t(kPhaseKinds[i].kind) != i)
            return false;
    return true;
}
static_assert(phaseKindsInOrder(), "kPhaseKinds is indexed by PhaseKind");

inline const char* nameOf(PhaseKind k) { return kPhaseKinds[std::size_t(k)].name; }

/** Cycles spent in each kind of phase. */
struct PhaseBreakdown
{
    std::array<uint64_t, kPhaseKinds.size()> cycles{};
    uint64_t& operator[](PhaseKind k) { return cycles[std::size_t(k)]; }
    uint64_t operator[](PhaseKind k) const { return cycles[std::size_t(k)]; }
    [[nodiscard]] uint64_t total() const
    {
        uint64_t sum = 0;
        for (uint64_t c : cycles)
            sum += c;
        return sum;
    }
    PhaseBreakdown& operator+=(const PhaseBreakdown& o)
    {
        for (std::size_t i = 0; i < cycles.size(); ++i)
            cycles[i] += o.cycles[i];
        return *this;
    }
};

/** The kind of phase a step takes time as; none for loops and calls. */
inline std::optional<PhaseKind> phaseKindOf(const Step& s)
{
    struct Kind
    {
        std::optional<PhaseKind> operator()(const ComputeStep&) const { return PhaseKind::Compute; }
        std::optional<PhaseKind> operator()(const SyncStep&) const { return PhaseKind::Sync; }
        std::optional<PhaseKind> operator()(const ExchangeStep&) const { return PhaseKind::Exchange; }
        std::optional<PhaseKind> operator()(const HostTransferStep&) const { return PhaseKind::Host; }
        std::optional<PhaseKind> operator()(const IpuCopyStep&) const { return PhaseKind::IpuCopy; }
        std::optional<PhaseKind> operator()(const CollectiveStep&) const { return PhaseKind::Collective; }
        std::optional<PhaseKind> operator()(const StreamingMemoryStep&) const { return PhaseKind::StreamingMemory; }
        std::optional<PhaseKind> operator()(const RepeatStep&) const { return std::nullopt; }
        std::optional<PhaseKind> operator()(const CallStep&) const { return std::nullopt; }
    };
    return std::visit(Kind{}, s.op); // a new step type fails to compile here until it has a kind
}

} // namespace ipusim
