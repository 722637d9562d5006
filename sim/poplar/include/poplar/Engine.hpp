// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: runs a graph's programs. Each run executes the codelets on the host (the
// tensors hold real values) and simulates the program on the device's Mk2 IPUs: cycles per
// program step, the summary, the trace and the memory report of ipusim.
//
// Environment: IPUSIM_REPORT=DIR writes DIR/run-<n>.summary.json for the n-th run() call (from 0),
// and DIR/run-<n>/ its summary and trace (trace.json);
// IPUSIM_FUNCTIONAL=0 runs timing only (no codelet runs, tensors keep their values);
// IPUSIM_ENGINE=reference simulates on the per-cycle reference engine and checks the fast one
// against it.
#include <poplar/Device.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/Program.hpp>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace poplar {

namespace detail {
struct EngineState;
}

class Engine
{
public:
    Engine(const Graph& graph, ArrayRef<program::Program> progs, const OptionFlags& opt = {}, ProgressFunc progressCallBack = {});
    Engine(const Graph& graph, const program::Program& prog, const OptionFlags& opt = {}, ProgressFunc progressCallBack = {});
    Engine(Executable&& exe, const OptionFlags& opt = {});
    ~Engine();
    Engine(Engine&&) noexcept;

    void load(const Device& device);
    void run(unsigned prog = 0, const std::string& debugName = "");
    void writeTensor(StringRef handle, const void* buf, const void* bufEnd);
    void readTensor(StringRef handle, void* buf, void* bufEnd);
    /** A stream reads from (or writes to) this buffer, one stream's worth at every Copy. */
    void connectStream(StringRef handle, void* p);
    /** A circular buffer [begin, end): each Copy takes (or gives) the next stream's worth. */
    void connectStream(StringRef handle, void* begin, void* end);
    void connectStreamToCallback(StringRef handle, std::function<void(void*)> f);
    /** Writes (reads) one slot of a remote buffer from (to) the host. */
    void copyToRemoteBuffer(const void* data, StringRef handle, std::uint64_t repeatIndex = 0);
    void copyFromRemoteBuffer(StringRef handle, void* data, std::uint64_t repeatIndex = 0);
    /** Cycles of each program step of the last run, on the device's IPUs (the trace of one run). */
    void printProfileSummary(std::ostream& out, const OptionFlags& opt = {}) const;
    [[nodiscard]] double getTileClockFrequency() const;
    /** Poplar's switches of execution profiling: every run of ipusim is timed whole by simulating
     *  it, so they change nothing but are kept for the programs that call them. */
    void enableExecutionProfiling() {}
    void disableExecutionProfiling() {}
    void resetExecutionProfile() {}
    /** ipusim: the last run's summary (summary.json of ipusim run), as JSON text. */
    [[nodiscard]] std::string ipusimSummary() const;
    /** ipusim: the last run's simulated cycles. */
    [[nodiscard]] std::uint64_t ipusimCycles() const;

private:
    std::unique_ptr<detail::EngineState> m_state;
};

} // namespace poplar
