// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SystemParams.hpp"
#include "models/program/Schedule.hpp"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ipusim {

/** The invariants both engines rely on, checked once before elaboration (as XLA verifies HLO
 *  between passes). Returns each broken one, described with its IPU and step; empty when the
 *  Schedule holds them all:
 *  - each program runs on an IPU of the system, at most one program per IPU;
 *  - tile runs (compute cycles and vertices, exchange bytes, tensor bytes) are in tile order,
 *    disjoint and within the IPU's tiles; a compute step's vertices lie on tiles it gives cycles;
 *  - calls name fragments of their program;
 *  - IPU copies and collectives name IPUs of the system; a copy never names its own IPU; a ring
 *    holds its program's IPU, each IPU once; an edge some copy sends on, some copy on its peer
 *    receives on, and the other way round (the engines pair the two listings up);
 *  - program points are numbered in program order, and tensors live between points that exist. */
std::vector<std::string> checkSchedule(const Schedule& schedule, const SystemParams& system);

/** The same checks a program at a time, as a compiler finishes each (its memory can then be
 *  accounted before the next is compiled): all but the copy pairs, which need every program.
 *  Tile runs that steps share (identical layers, IPUs replaying another's) are walked once: the
 *  programs checked must outlive the checker, which knows their runs by address. */
class ProgramChecker
{
public:
    explicit ProgramChecker(const SystemParams& system);
    ~ProgramChecker();
    ProgramChecker(const ProgramChecker&) = delete;
    ProgramChecker& operator=(const ProgramChecker&) = delete;
    /** The invariants `program` breaks, on its own or beside the programs checked before it. */
    [[nodiscard]] std::vector<std::string> check(const Program& program);
    /** Throws std::logic_error naming each, as requireScheduleInvariants does. */
    void require(const Program& program);

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

/** IPU-copy edges a Schedule lists on one side only (the rest of checkSchedule's checks are
 *  ProgramChecker's), but for edges to IPUs it leaves out (a compile stopped before them). */
std::vector<std::string> checkCopyPairs(const Schedule& schedule, const std::vector<uint32_t>& ipusLeftOut = {});

/** Where each IPU-copy edge (from, to) is first listed as a send and as a receive (`Where`: a
 *  step name, a JSON pointer). A transfer is listed on both its IPUs. */
template <class Where>
struct CopyListing
{
    std::map<std::pair<uint32_t, uint32_t>, Where> sends, recvs;
    /** Calls f(edge, where, sending) for each edge listed on one side only. */
    template <class F>
    void forEachUnpaired(F&& f) const
    {
        for (const auto& [edge, where] : sends)
            if (!recvs.count(edge))
                f(edge, where, true);
        for (const auto& [edge, where] : recvs)
            if (!sends.count(edge))
                f(edge, where, false);
    }
};

/** Throws std::logic_error naming every broken invariant: a Schedule about to be simulated or
 *  written that breaks one is the compiler's (or test code's) fault, not the user's. */
void requireScheduleInvariants(const Schedule& schedule, const SystemParams& system);
/** The same for problems the checks above found (none: returns). */
void requireNoProblems(const std::vector<std::string>& problems);

} // namespace ipusim
