// SPDX-License-Identifier: MIT
#include "sim/trace/ChromeTrace.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace ipusim {
namespace {
// Cycles shown as nanoseconds: Chrome trace timestamps are microseconds, printed exactly.
std::string micros(uint64_t cycles) { return fmt::format("{}.{:03}", cycles / 1000, cycles % 1000); }
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }
constexpr uint32_t kTileTidBase = 16;
} // namespace

ChromeTrace::ChromeTrace(const std::string& path, const TraceWindow& window, double clockHz, uint32_t numIpus)
    : m_path(path), m_tmpPath(path + ".tmp"), m_window(window), m_numIpus(numIpus)
{
    m_file = std::fopen(m_tmpPath.c_str(), "wb");
    if (!m_file)
        throw std::runtime_error(fmt::format("{}: cannot write trace ({})", m_tmpPath, std::strerror(errno)));
    m_buffer.reserve(1 << 20);
    m_buffer += fmt::format(
        "{{\"displayTimeUnit\":\"ns\",\"otherData\":{{\"time_axis\":\"1 ns = 1 tile cycle\",\"clock_hz\":{}}},\n\"traceEvents\":[\n",
        clockHz);
    bool first = true;
    for (uint32_t ipu = 0; ipu < numIpus; ++ipu) {
        m_buffer += fmt::format("{}{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"IPU {}\"}}}}",
                                first ? "" : ",\n", ipu, ipu);
        first = false;
        m_buffer += fmt::format(",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"phases\"}}}}", ipu);
        m_buffer += fmt::format(",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":1,\"args\":{{\"name\":\"pipeline\"}}}}", ipu);
        ++m_events;
    }
}

ChromeTrace::~ChromeTrace()
{
    if (m_file)
        std::fclose(m_file);
    if (!m_committed)
        std::remove(m_tmpPath.c_str());
}

void ChromeTrace::event(const std::string& text)
{
    m_buffer += ",\n";
    m_buffer += text;
    ++m_events;
    if (m_buffer.size() > (1u << 20))
        flush();
}

void ChromeTrace::flush()
{
    if (!m_buffer.empty() && std::fwrite(m_buffer.data(), 1, m_buffer.size(), m_file) != m_buffer.size())
        throw std::runtime_error(fmt::format("{}: write failed ({})", m_tmpPath, std::strerror(errno)));
    m_buffer.clear();
}

void ChromeTrace::phase(uint32_t ipu, PhaseKind kind, const std::string& name, uint64_t start, uint64_t end,
                        uint64_t iteration)
{
    if (!inWindow(start))
        return;
    event(fmt::format("{{\"ph\":\"X\",\"pid\":{},\"tid\":0,\"cat\":\"{}\",\"name\":{},\"ts\":{},\"dur\":{},"
                      "\"args\":{{\"start_cycle\":{},\"cycles\":{},\"iteration\":{}}}}}",
                      ipu, nameOf(kind), quoted(name.empty() ? nameOf(kind) : name), micros(start), micros(end - start),
                      start, end - start, iteration));
}

bool ChromeTrace::tileWindow(uint32_t, uint32_t& first, uint32_t& last, uint64_t& fromCycle, uint64_t& toCycle) const
{
    if (!m_window.tiles)
        return false;
    first = m_window.firstTile;
    last = m_window.lastTile;
    fromCycle = m_window.fromCycle;
    toCycle = m_window.toCycle;
    return true;
}

void ChromeTrace::tileSpan(uint32_t ipu, uint32_t tile, const std::string& name, uint64_t start, uint64_t end)
{
    const uint32_t index = ipu * (m_window.lastTile - m_window.firstTile + 1) + (tile - m_window.firstTile);
    if (index >= m_tileNamed.size())
        m_tileNamed.resize(index + 1, false);
    if (!m_tileNamed[index]) {
        m_tileNamed[index] = true;
        event(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"tile {}\"}}}}",
                          ipu, kTileTidBase + tile, tile));
    }
    event(fmt::format("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"cat\":\"tile\",\"name\":{},\"ts\":{},\"dur\":{}}}", ipu,
                      kTileTidBase + tile, quoted(name), micros(start), micros(end - start)));
}

void ChromeTrace::fragmentSpan(uint32_t ipu, const std::string& fragment, uint64_t start, uint64_t end, int64_t microBatch)
{
    if (!inWindow(start))
        return;
    event(fmt::format("{{\"ph\":\"X\",\"pid\":{},\"tid\":1,\"cat\":\"pipeline\",\"name\":{},\"ts\":{},\"dur\":{},"
                      "\"args\":{{\"start_cycle\":{},\"cycles\":{},\"micro_batch\":{}}}}}",
                      ipu, quoted(microBatch >= 0 ? fragment + " " + std::to_string(microBatch) : fragment), micros(start),
                      micros(end - start), start, end - start, microBatch));
}

uint32_t ChromeTrace::trackIn(std::map<std::string, uint32_t>& tracks, uint32_t pid, const char* process, const std::string& track)
{
    // Named as they first appear: the process with its first track, each track once.
    auto it = tracks.find(track);
    if (it != tracks.end())
        return it->second;
    if (tracks.empty())
        event(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}", pid, quoted(process)));
    it = tracks.emplace(track, uint32_t(tracks.size())).first;
    event(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}", pid, it->second,
                      quoted(track)));
    return it->second;
}

void ChromeTrace::linkSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end, uint64_t bytes)
{
    if (!inWindow(start))
        return;
    // IPU-Links are one process after the IPUs, one track per link direction or ring.
    const uint32_t pid = m_numIpus;
    const uint32_t tid = trackIn(m_linkTracks, pid, "IPU-Links", track);
    event(fmt::format("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"cat\":\"link\",\"name\":{},\"ts\":{},\"dur\":{},"
                      "\"args\":{{\"start_cycle\":{},\"cycles\":{},\"bytes\":{}}}}}",
                      pid, tid, quoted(name), micros(start), micros(end - start), start, end - start, bytes));
}

void ChromeTrace::hostSpan(const std::string& track, const std::string& name, uint64_t start, uint64_t end)
{
    if (!inWindow(start))
        return;
    // The host is the process after the IPU-Links, one track per loader worker and dispatch.
    const uint32_t pid = m_numIpus + 1;
    const uint32_t tid = trackIn(m_hostTracks, pid, "host", track);
    event(fmt::format("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"cat\":\"host_work\",\"name\":{},\"ts\":{},\"dur\":{},"
                      "\"args\":{{\"start_cycle\":{},\"cycles\":{}}}}}",
                      pid, tid, quoted(name), micros(start), micros(end - start), start, end - start));
}

void ChromeTrace::label(uint32_t ipu, const std::string& text)
{
    // Both as a label (chrome://tracing) and in the process name, which every viewer shows.
    event(fmt::format("{{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":{},\"args\":{{\"labels\":{}}}}}", ipu,
                      nlohmann::json(text).dump()));
    event(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}", ipu,
                      nlohmann::json(fmt::format("IPU {} ({})", ipu, text)).dump()));
}

void ChromeTrace::commit()
{
    m_buffer += "\n]}\n";
    flush();
    if (std::fclose(m_file) != 0) {
        m_file = nullptr;
        throw std::runtime_error(fmt::format("{}: close failed ({})", m_tmpPath, std::strerror(errno)));
    }
    m_file = nullptr;
    std::filesystem::rename(m_tmpPath, m_path);
    m_committed = true;
}

} // namespace ipusim
