// SPDX-License-Identifier: MIT
#pragma once
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace ipusim {

/** Long-lived worker processes that run points one at a time. A worker keeps what it built
 *  for earlier points (a sweep worker, its compiled schedules), so a point costs about what
 *  simulating it costs. A worker that dies takes only its point with it: the point gets a
 *  failed result and a new worker takes its place. Ctrl-C and SIGTERM stop the workers and
 *  their points, which then have no result. */
class WorkerPool
{
public:
    /** Runs in a worker: the result of one point as JSON text on one line, {"status": ...};
     *  {"status": "interrupted"} when the point was stopped from outside (it has no result). */
    using Job = std::function<std::string(std::size_t point)>;
    /** Points of one group are best run by one worker (they share what it built). */
    using Group = std::function<std::string(std::size_t point)>;
    using Started = std::function<void(std::size_t point)>;
    using Done = std::function<void(std::size_t point, nlohmann::json result)>;

    WorkerPool(unsigned workers, Job job);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    /** Hands `points` out to the workers, each to a worker that ran its group before where
     *  one is free, else to one whose group no other worker has, else the first waiting, and
     *  returns once each has a result or the pool was interrupted. `started` is called as a
     *  point is handed out, `done` with its result. */
    void run(const std::vector<std::size_t>& points, const Group& group, const Started& started, const Done& done);
    /** True once a point was stopped by SIGINT, SIGTERM or SIGHUP, or the pool by an interrupt
     *  request: the points in flight have no result. */
    [[nodiscard]] bool interrupted() const { return m_interrupted; }
    /** Kills the workers and their points. */
    void kill();

private:
    struct Worker
    {
        pid_t pid = -1;
        int commands = -1, results = -1; // the coordinator's ends of the two pipes
        std::string received;            // a result line as it arrives
        bool busy = false;
        std::size_t point = 0;
        std::size_t group = SIZE_MAX; // the group of the point it ran last, numbered by run()
    };
    void spawn(Worker& w);
    class Waiting; // the points still to run, by group
    void handOut(Worker& w, Waiting& waiting, const Started& started, const Done& done);
    [[noreturn]] void serve(int commands, int results);
    void reap(Worker& w, const Done& done);
    void receive(Worker& w, const Done& done);

    Job m_job;
    std::vector<Worker> m_workers;
    bool m_interrupted = false;
};

} // namespace ipusim
