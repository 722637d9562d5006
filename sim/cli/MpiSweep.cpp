// SPDX-License-Identifier: MIT
// Only the command-line executable links MPI; the library never does.
#include "sim/cli/MpiSweep.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/sweep/PointRunner.hpp"

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

std::size_t runSweepMpi(int argc, char** argv, const Sweep& sweep, const SweepOptions& options)
{
    mpi::environment env(argc, argv);
    mpi::communicator world;
    if (world.size() < 2)
        return runSweep(sweep, options); // one rank: the local sweep

    const std::filesystem::path scratch =
        std::filesystem::temp_directory_path() / fmt::format("ipusim-mpi-{}-{}", ::getpid(), world.rank());
    if (world.rank() != 0) {
        // Worker: ask for a point, simulate it in a child process, send the row back.
        PointRunner runner(scratch, 1);
        while (true) {
            world.send(0, kReady, -1L);
            long index = -1;
            world.recv(0, kWork, index);
            if (index < 0)
                break;
            const auto sets = sweep.setsFor(std::size_t(index));
            json result;
            auto done = [&](std::size_t, json r) { result = std::move(r); };
            runner.start(std::size_t(index), [&] { return simulatePoint(sweep.config, sets, sweep.file); }, done);
            runner.finish(done);
            world.send(0, kResult, json{{"point", index}, {"result", result}}.dump());
        }
        std::filesystem::remove_all(scratch);
        return 0;
    }
    // Rank 0: the rows are written by the same code as a local sweep; points are simulated
    // by the workers, handed out one at a time as they ask.
    SweepRowWriter writer(sweep, options);
    const std::vector<std::size_t> todo = writer.missingPoints();
    std::size_t next = 0, outstanding = 0, stopped = 0;
    const int workers = world.size() - 1;
    while (stopped < std::size_t(workers)) {
        mpi::status st = world.probe(mpi::any_source, mpi::any_tag);
        if (st.tag() == kResult) {
            std::string text;
            world.recv(st.source(), kResult, text);
            const json msg = json::parse(text);
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
    return writer.finish();
}

} // namespace ipusim::cli
