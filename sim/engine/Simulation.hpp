// SPDX-License-Identifier: MIT
#pragma once
#include "models/ipu/Ipu.hpp"
#include "models/system/Kernel.hpp"
#include "sim/engine/Experiment.hpp"

#include <memory>
#include <vector>

namespace ipusim {

struct SimResult
{
    uint64_t totalCycles = 0;
    double wallSeconds = 0;
    uint64_t tileSupersteps = 0; // compute sets executed x tiles
};

/** Elaborates the SystemC model of an experiment and runs it to completion, in a kernel
 *  context of its own (SystemC cannot re-elaborate one): one alive at a time, any number in
 *  turn. */
class Simulation
{
public:
    /** With `vcdPath`, each IPU's activity and IPU-Link bytes go to a VCD file (written under a
     *  temporary name and renamed when the run completes). `memory`: each program's tile memory
     *  accounted already (accountMemory); empty: the experiment's. A program without one is
     *  accounted here. */
    Simulation(const Experiment& experiment, IPhaseObserver* observer = nullptr, std::string vcdPath = "",
               std::vector<std::shared_ptr<const TileMemory>> memory = {});
    ~Simulation();

    [[nodiscard]] const std::vector<std::unique_ptr<Ipu>>& ipus() const { return m_ipus; }
    [[nodiscard]] const IpuLinks& links() const { return *m_links; }
    [[nodiscard]] const ExternalSync& externalSync() const { return *m_sync; }
    [[nodiscard]] const HostProcess& host() const { return *m_host; }
    /** Ends elaboration: checks the run fits SystemC's clock, opens the VCD, and lets SystemC
     *  finish its own elaboration (its processes made ready), so that run() times simulating
     *  alone. run() calls it when the caller has not; callers timing elaboration call it. */
    void endElaboration();
    SimResult run();
    /** Measures each micro-batch's latency over the first host call (microBatchLatencies). */
    void recordMicroBatchLatency()
    {
        for (auto& ipu : m_ipus)
            ipu->recordMicroBatches();
    }
    /** Per micro-batch of the first host call, in order: from its first fragment's start on any
     *  IPU to its last one's end (empty unless recorded, or when no call carries a number). */
    [[nodiscard]] std::vector<uint64_t> microBatchLatencies() const;
    /** Simulates every loop iteration, never skipping identical ones (tests compare the two). */
    void simulateEveryIteration()
    {
        for (auto& ipu : m_ipus)
            ipu->disableFastForward();
    }

private:
    /** Throws when a program's lower bound (lowerBoundCycles) already passes SystemC's clock. */
    void checkTimeLimit() const;
    /** Why the run stopped with IPUs still waiting (at copies whose partner never comes, at
     *  external syncs others never reach); empty when none is. */
    [[nodiscard]] std::string stuck() const;
    bool m_elaborated = false; // endElaboration() ran
    /** Runs the kernel for up to `slice` of simulated time (one progress update). */
    void runSlice(sc_core::sc_time slice);

    KernelContext m_kernel; // first: destroyed after the modules that live in it
    const Experiment& m_experiment;
    sc_core::sc_time m_period; // one tile cycle
    std::unique_ptr<IpuLinks> m_links;
    std::unique_ptr<ExternalSync> m_sync;
    CopyRendezvous m_copies;
    std::unique_ptr<HostProcess> m_host;
    std::vector<std::unique_ptr<Ipu>> m_ipus;
    std::string m_vcdPath;
    sc_core::sc_trace_file* m_vcd = nullptr;
};

} // namespace ipusim
