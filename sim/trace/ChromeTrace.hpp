// SPDX-License-Identifier: MIT
#pragma once
#include "models/program/PhaseObserver.hpp"
#include "sim/config/RunSpec.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace ipusim {

/** Streams Chrome Trace Event JSON (opens in ui.perfetto.dev and chrome://tracing).
 *  Time axis: 1 tile cycle is shown as 1 ns. Written to `path`.tmp and renamed by commit(),
 *  so a failed run leaves no half-written trace. */
class ChromeTrace : public IPhaseObserver
{
public:
    ChromeTrace(const std::string& path, const TraceWindow& window, double clockHz, uint32_t numIpus);
    ~ChromeTrace() override;
    ChromeTrace(const ChromeTrace&) = delete;
    ChromeTrace& operator=(const ChromeTrace&) = delete;

    [[nodiscard]] CycleRange observedCycles() const override { return {m_window.fromCycle, m_window.toCycle}; }
    void phase(uint32_t ipu, PhaseKind kind, const std::string& name, uint64_t start, uint64_t end,
               uint64_t iteration) override;
    [[nodiscard]] bool tileWindow(uint32_t ipu, uint32_t& first, uint32_t& last, uint64_t& fromCycle,
                                  uint64_t& toCycle) const override;
    void tileSpan(uint32_t ipu, uint32_t tile, const std::string& name, uint64_t start, uint64_t end) override;

    void fragmentSpan(uint32_t ipu, const std::string& fragment, uint64_t start, uint64_t end, int64_t microBatch) override;
    void linkSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end, uint64_t bytes) override;
    void hostSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end) override;

    /** A label shown beside an IPU's name (Perfetto process label), e.g. its stages' work. */
    void label(uint32_t ipu, const std::string& text);
    /** Closes the JSON and moves the file into place. */
    void commit();
    [[nodiscard]] uint64_t events() const { return m_events; }

private:
    void event(const std::string& text);
    /** Spans starting inside /run/trace/cycles are written (all by default). */
    [[nodiscard]] bool inWindow(uint64_t start) const { return start >= m_window.fromCycle && start <= m_window.toCycle; }
    void flush();
    /** Track `track` of process `pid` (named `process`) in `tracks`, named in the trace the
     *  first time. */
    uint32_t trackIn(std::map<std::string, uint32_t>& tracks, uint32_t pid, const char* process, const std::string& track);

    std::string m_path, m_tmpPath;
    TraceWindow m_window;
    std::FILE* m_file = nullptr;
    std::string m_buffer;
    uint64_t m_events = 0;
    bool m_committed = false;
    std::vector<bool> m_tileNamed;
    uint32_t m_numIpus;
    std::map<std::string, uint32_t> m_linkTracks;
    std::map<std::string, uint32_t> m_hostTracks;
};

} // namespace ipusim
