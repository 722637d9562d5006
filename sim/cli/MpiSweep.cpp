// SPDX-License-Identifier: MIT
// Only the command-line executable links MPI; the library never does.
#include "sim/cli/MpiSweep.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/engine/Interrupt.hpp"
#include "sim/sweep/SimulatePoint.hpp"
#include "sim/sweep/WorkerPool.hpp"

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ipusim::cli {
namespace {

using json = nlohmann::json;
namespace mpi = boost::mpi;
enum Tag { kReady = 1, kWork = 2, kResult = 3 };

} // namespace

bool launchedByMpi()
{
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
}

std::optional<SweepTally> runSweepMpi(int argc, char** argv, const Sweep& sweep, const SweepOptions& options)
{
    mpi::environment env(argc, argv);
    mpi::communicator world;
    if (world.size() < 2)
        return runSweep(sweep, options); // one rank: the local sweep

    if (world.rank() != 0) {
        // Worker: ask for a point, simulate it on this rank's worker process (which keeps the
        // schedules it compiled), send the row back.
        CompileCache compiled;
        WorkerPool pool(1, [&](std::size_t i) { return simulatePointInWorker(sweep.config, sweep.setsFor(i), sweep.file, compiled); });
        while (true) {
            world.send(0, kReady, -1L);
            long index = -1;
            world.recv(0, kWork, index);
            if (index < 0)
                break;
            json result = {{"status", "interrupted"}};
            pool.run({std::size_t(index)}, [](std::size_t) { return std::string(); }, [](std::size_t) {},
                     [&](std::size_t, json r) { result = std::move(r); });
            world.send(0, kResult, json{{"point", index}, {"result", result}}.dump());
        }
        return std::nullopt;
    }
    // Rank 0: the rows are written by the same code as a local sweep; points are simulated
    // by the workers, handed out one at a time as they ask.
    SweepRowWriter writer(sweep, options);
    const std::vector<std::size_t> todo = writer.missingPoints();
    std::size_t next = 0, outstanding = 0, stopped = 0, interrupted = 0;
    const int workers = world.size() - 1;
    while (stopped < std::size_t(workers)) {
        mpi::status st = world.probe(mpi::any_source, mpi::any_tag);
        if (st.tag() == kResult) {
            std::string text;
            world.recv(st.source(), kResult, text);
            const json msg = json::parse(text);
            if (msg.at("result").at("status") == "interrupted") // stopped from outside: no row, --resume runs it
                ++interrupted;
            else
                writer.write(msg.at("point").get<std::size_t>(), msg.at("result"));
            --outstanding;
            continue;
        }
        long ignored = 0;
        world.recv(st.source(), kReady, ignored);
        if (next < todo.size()) {
            writer.started(todo[next]);
            world.send(st.source(), kWork, long(todo[next++]));
            ++outstanding;
        } else {
            world.send(st.source(), kWork, -1L);
            ++stopped;
        }
    }
    const SweepTally tally = writer.finish();
    if (interrupted > 0)
        throw Interrupted(fmt::format("interrupted: {} point{} stopped from outside; the finished points are in {}; --resume runs the rest",
                                      interrupted, interrupted == 1 ? " was" : "s were", writer.dir()));
    return tally;
}

} // namespace ipusim::cli
