// SPDX-License-Identifier: MIT
#include "sim/engine/Simulation.hpp"

#include "models/common/SaturatingCycles.hpp"
#include "models/system/ClockPeriod.hpp"
#include "models/timing/HostCallTiming.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/engine/Interrupt.hpp"
#include "sim/engine/Progress.hpp"

#include <fmt/format.h>
#include <sysc/tracing/sc_tracing_ids.h>

#include <chrono>
#include <cstdio>
#include <cmath>
#include <map>
#include <stdexcept>

namespace ipusim {
Simulation::Simulation(const Experiment& experiment, IPhaseObserver* observer, std::string vcdPath,
                       std::vector<std::shared_ptr<const TileMemory>> memory)
    : m_experiment(experiment), m_vcdPath(std::move(vcdPath))
{
    if (memory.empty())
        memory = experiment.memory;
    // Integer cycles inside; SystemC time only orders events, at femtosecond resolution.
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
    // A run stopped at SystemC's time limit says why itself; several IPUs reaching the limit at
    // once (as a host call starts) each stop the kernel, which SystemC would note on stdout.
    sc_core::sc_report_handler::set_actions(sc_core::SC_ID_SIMULATION_STOP_CALLED_TWICE_, sc_core::SC_DO_NOTHING);
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING); // "stopped by user"
    m_period = clockPeriod(experiment.system.ipu.clockHz);
    const auto& programs = experiment.schedule.programs;
    const SystemParams& sys = experiment.system;
    std::vector<uint32_t> programmed;
    for (const auto& p : programs)
        programmed.push_back(p.ipu);
    m_links = std::make_unique<IpuLinks>("ipu_links", sys, m_period, programmed, replicaCopies(experiment.schedule));
    // A copy's transfer takes its links as soon as both its IPUs are there.
    m_copies.onPaired([links = m_links.get()](const CopyRendezvous::End& e, uint64_t number) {
        links->startTransfer({e.from, e.to, number}, e.bytes);
    });
    const uint32_t replicas = experiment.schedule.strategy ? experiment.schedule.strategy->replicas : 1;
    m_sync = std::make_unique<ExternalSync>("external_sync", uint32_t(programs.size()), uint32_t(programs.size()) * replicas,
                                            sys.syncHopSeconds, sys.ipu.clockHz);
    m_host = std::make_unique<HostProcess>(
        uint32_t(programs.size()),
        HostCallClock(sys.host, experiment.run.dataLoader, experiment.schedule.samplesPerHostCall, sys.ipu.clockHz),
        hostSyncCycles(sys.host, sys.ipu.clockHz));
    m_host->observe(observer);
    for (std::size_t i = 0; i < programs.size(); ++i) {
        std::string name = "ipu" + std::to_string(programs[i].ipu);
        m_ipus.push_back(std::make_unique<Ipu>(name.c_str(), programs[i].ipu, experiment.system.ipu,
                                               experiment.system.hostLink, programs[i], experiment.run.hostCalls,
                                               m_period, observer, SystemPorts{m_sync.get(), m_links.get(), &m_copies, uint32_t(i), m_host.get()},
                                               sys.streamingMemory, i < memory.size() ? memory[i] : nullptr));
    }
}

Simulation::~Simulation()
{
    if (m_vcd) { // an unfinished run leaves no waveform behind
        sc_core::sc_close_vcd_trace_file(m_vcd);
        std::remove((m_vcdPath + ".tmp.vcd").c_str());
    }
}

void Simulation::checkTimeLimit() const
{
    const uint64_t last = lastCycle(m_period);
    for (const auto& program : m_experiment.schedule.programs) {
        const CycleBound b = lowerBoundCycles(program);
        const uint64_t cycles = saturatingMul(m_experiment.run.hostCalls, b.cycles);
        if (cycles > last)
            throw config::ConfigError(
                m_experiment.config.file, "",
                fmt::format("IPU {} runs at least {}{} cycles (\"{}\" in each of {} host calls), past cycle {}, where SystemC's "
                            "64-bit femtosecond clock ends at {:.6g} GHz: simulate fewer iterations, samples or steps",
                            program.ipu, cycles == kCycleCeiling ? "2^62 = " : "", cycles, b.step, m_experiment.run.hostCalls,
                            last, m_experiment.system.ipu.clockHz / 1e9));
    }
}

std::vector<uint64_t> Simulation::microBatchLatencies() const
{
    std::map<int64_t, std::pair<uint64_t, uint64_t>> spans;
    for (const auto& ipu : m_ipus)
        for (const auto& [mb, span] : ipu->microBatchSpans()) {
            auto [it, fresh] = spans.try_emplace(mb, span);
            it->second.first = std::min(it->second.first, span.first);
            it->second.second = std::max(it->second.second, span.second);
        }
    std::vector<uint64_t> out;
    for (const auto& [mb, span] : spans)
        out.push_back(span.second - span.first);
    return out;
}

void Simulation::endElaboration()
{
    if (m_elaborated)
        return;
    checkTimeLimit();
    m_elaborated = true;
    if (!m_vcdPath.empty()) {
        // SystemC appends ".vcd" to the name it is given.
        m_vcd = sc_core::sc_create_vcd_trace_file((m_vcdPath + ".tmp").c_str());
        // The kernel's own resolution (events fall on whole femtoseconds: a cycle is 751,880 fs
        // at 1.33 GHz), so every change is representable; SystemC's note that the unit was set
        // (naming the temporary file) stays off stdout.
        sc_core::sc_report_handler::set_actions(sc_core::SC_ID_TRACING_TIMESCALE_UNIT_, sc_core::SC_DO_NOTHING);
        m_vcd->set_time_unit(1, sc_core::SC_FS);
        for (const auto& ipu : m_ipus)
            ipu->traceTo(m_vcd);
        m_links->traceTo(m_vcd);
    }
    // SystemC's own elaboration ends here (this simulation's kernel context is its own): its
    // end-of-elaboration callbacks run and its processes are made ready; run()'s first slice
    // runs them.
    sc_core::sc_get_curr_simcontext()->initialize(true);
}

SimResult Simulation::run()
{
    endElaboration();
    // Run in slices of simulated time so long runs can report progress between them.
    Progress progress("simulating " + m_experiment.config.name, "program steps");
    const auto t0 = std::chrono::steady_clock::now();
    const sc_core::sc_time slice = m_period * double(1u << 22);
    auto finished = [&] {
        for (const auto& ipu : m_ipus)
            if (!ipu->finished())
                return false;
        return true;
    };
    auto failure = [&]() -> std::string {
        for (const auto& ipu : m_ipus)
            if (!ipu->failure().empty())
                return ipu->failure();
        return m_links->failure();
    };
    // Listings of one transfer that disagree are the schedule's fault, like a stuck one.
    auto copyMismatch = [&] {
        if (!m_copies.mismatch().empty())
            throw config::ConfigError(m_experiment.config.file, "/workload", m_copies.mismatch());
    };
    do {
        runSlice(slice);
        uint64_t done = 0, total = 0;
        for (const auto& ipu : m_ipus) {
            done = saturatingAdd(done, ipu->stepsRun());
            total = saturatingAdd(total, ipu->stepsTotal());
        }
        progress.update(done, total);
        InterruptGuard::check("interrupted: the run wrote no results");
        if (const std::string why = failure(); !why.empty())
            throw config::ConfigError(m_experiment.config.file, "", why);
        copyMismatch();
    } while (!finished() && sc_core::sc_pending_activity());
    progress.finish();
    const auto t1 = std::chrono::steady_clock::now();
    if (m_vcd) {
        sc_core::sc_close_vcd_trace_file(m_vcd);
        m_vcd = nullptr;
        std::rename((m_vcdPath + ".tmp.vcd").c_str(), m_vcdPath.c_str());
    }
    SimResult r;
    r.wallSeconds = std::chrono::duration<double>(t1 - t0).count();
    if (const std::string why = stuck(); !why.empty())
        throw config::ConfigError(m_experiment.config.file, "/workload", why);
    for (const auto& ipu : m_ipus) {
        if (!ipu->finished())
            throw std::logic_error(std::string(ipu->name()) + " did not finish its program");
        r.totalCycles = std::max(r.totalCycles, ipu->cycle());
        r.tileSupersteps += ipu->computeSetsRun() * m_experiment.system.ipu.tiles;
    }
    return r;
}

void Simulation::runSlice(sc_core::sc_time slice)
{
    // Time stops at the last event, never at a slice's end past it, so a VCD ends where the run
    // does: a slice with events runs until its end or starvation, time staying at its last
    // event; a gap longer than a slice is crossed to its next event at once (so one call may
    // run past a slice). Elaboration has ended (endElaboration), so the processes it made
    // ready are pending activity now.
    const sc_core::sc_time gap = sc_core::sc_time_to_pending_activity();
    const sc_core::sc_time left = sc_core::sc_max_time() - sc_core::sc_time_stamp();
    if (gap > slice)
        sc_core::sc_start(std::min(gap, left));
    else
        sc_core::sc_start(std::min(slice, left), sc_core::SC_EXIT_ON_STARVATION);
}

std::string Simulation::stuck() const
{
    std::vector<std::string> why;
    for (const auto& w : m_copies.waiting())
        why.push_back(fmt::format(
            "IPU {} waits at IPU copy \"{}\" for the {} of IPU {} that pairs with its {} {} IPU {}, and it never comes "
            "(this is {} {} of the edge from IPU {} to IPU {}; IPU {} listed {}): each transfer is a send on one IPU and a "
            "receive on the other, the n-th of one pairing with the n-th of the other",
            w.ipu, w.step, w.missing.sending ? "receive" : "send", w.missing.partner(), w.missing.sending ? "send" : "receive",
            w.missing.sending ? "to" : "from", w.missing.partner(), w.missing.sending ? "send" : "receive", w.number,
            w.missing.from, w.missing.to, w.missing.partner(), w.partnerListed));
    for (auto& w : m_links->waiting())
        why.push_back(std::move(w));
    if (auto waiting = m_sync->waiting(); !waiting.empty()) {
        std::vector<uint32_t> ipus;
        for (uint32_t i : waiting)
            ipus.push_back(m_experiment.schedule.programs[i].ipu);
        why.push_back(fmt::format("IPU{} {} wait{} at an external sync the other IPUs never reach{}: every program must "
                                  "pass the same number of external syncs",
                                  ipus.size() > 1 ? "s" : "", fmt::join(ipus, ", "), ipus.size() > 1 ? "" : "s",
                                  why.empty() ? "" : " (stuck at the copies or collectives above, or finished)"));
    }
    if (auto waiting = m_host->waiting(); !waiting.empty() && !why.empty()) {
        std::vector<uint32_t> ipus;
        for (uint32_t i : waiting)
            ipus.push_back(m_experiment.schedule.programs[i].ipu);
        why.push_back(fmt::format("IPU{} {} wait{} for the next host call, which starts when every IPU has ended this one",
                                  ipus.size() > 1 ? "s" : "", fmt::join(ipus, ", "), ipus.size() > 1 ? "" : "s"));
    }
    return fmt::format("{}", fmt::join(why, "; "));
}

} // namespace ipusim
