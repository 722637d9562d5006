// SPDX-License-Identifier: MIT
#include "sim/sweep/WorkerPool.hpp"

#include "sim/engine/Interrupt.hpp"
#include "sim/run/WriteAll.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <deque>
#include <map>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ipusim {
namespace {

using json = nlohmann::json;

bool stoppedFromOutside(int status)
{
    return WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGHUP);
}

} // namespace

/** The points still to run, by group, in point order within each: one index a point and two a
 *  group (a million points in as many groups stay tens of megabytes). Groups are told apart by
 *  a hash of their name; two that collide are only run as one group. */
class WorkerPool::Waiting
{
public:
    static constexpr std::size_t kNone = SIZE_MAX;

    Waiting(const std::vector<std::size_t>& points, const Group& group)
    {
        std::vector<std::pair<std::size_t, std::size_t>> byGroup; // (group hash, point)
        byGroup.reserve(points.size());
        for (std::size_t p : points)
            byGroup.push_back({std::hash<std::string>{}(group(p)), p});
        std::sort(byGroup.begin(), byGroup.end());
        for (std::size_t i = 0; i < byGroup.size(); ++i) {
            if (i == 0 || byGroup[i].first != byGroup[i - 1].first) {
                m_heads.insert({byGroup[i].second, m_groups.size()});
                m_groups.push_back({i, i});
            }
            ++m_groups.back().end;
            m_points.push_back(byGroup[i].second);
        }
    }
    [[nodiscard]] bool empty() const { return m_heads.empty(); }
    /** The next point and its group for a worker that last ran group `mine` (or kNone), while
     *  the others last ran `others`. */
    std::pair<std::size_t, std::size_t> next(std::size_t mine, const std::set<std::size_t>& others)
    {
        std::size_t g = mine;
        if (g == kNone || m_groups[g].next == m_groups[g].end) {
            auto head = std::find_if(m_heads.begin(), m_heads.end(), [&](const auto& h) { return !others.count(h.second); });
            g = (head != m_heads.end() ? head : m_heads.begin())->second;
        }
        Range& r = m_groups[g];
        const std::size_t point = m_points[r.next++];
        m_heads.erase({point, g});
        if (r.next < r.end)
            m_heads.insert({m_points[r.next], g});
        return {point, g};
    }
    /** Gives back the point next() gave last for group `g` (its worker was gone). */
    void putBack(std::size_t g)
    {
        Range& r = m_groups[g];
        if (r.next < r.end)
            m_heads.erase({m_points[r.next], g});
        m_heads.insert({m_points[--r.next], g});
    }

private:
    struct Range
    {
        std::size_t next, end; // into m_points
    };
    std::vector<std::size_t> m_points; // by group, then point
    std::vector<Range> m_groups;
    std::set<std::pair<std::size_t, std::size_t>> m_heads; // (each group's first waiting point, group)
};

WorkerPool::WorkerPool(unsigned workers, Job job) : m_job(std::move(job)), m_workers(std::max(1u, workers)) {}

WorkerPool::~WorkerPool()
{
    // Idle workers end when their command pipe closes; busy ones (an interrupted pool) are killed.
    for (Worker& w : m_workers) {
        if (w.pid > 0 && w.busy)
            ::kill(w.pid, SIGKILL);
        if (w.commands >= 0)
            close(w.commands);
        if (w.results >= 0)
            close(w.results);
        if (w.pid > 0)
            waitpid(w.pid, nullptr, 0);
    }
}

void WorkerPool::kill()
{
    for (Worker& w : m_workers) {
        if (w.pid > 0) {
            ::kill(w.pid, SIGKILL);
            waitpid(w.pid, nullptr, 0);
        }
        for (int* fd : {&w.commands, &w.results})
            if (*fd >= 0) {
                close(*fd);
                *fd = -1;
            }
        w = Worker{};
    }
}

void WorkerPool::spawn(Worker& w)
{
    int commands[2], results[2];
    if (pipe(commands) != 0)
        throw std::runtime_error("pipe failed");
    if (pipe(results) != 0) {
        close(commands[0]);
        close(commands[1]);
        throw std::runtime_error("pipe failed");
    }
    std::fflush(nullptr); // the worker must not print the coordinator's buffered output again
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        for (int fd : {commands[0], commands[1], results[0], results[1]})
            close(fd);
        throw std::runtime_error("fork failed");
    }
    if (pid == 0) {
        // The worker dies with its coordinator (no orphans after a SIGKILL) and takes Ctrl-C and
        // SIGTERM as a process normally does (SIGHUP as the coordinator does: ignored under
        // nohup); it holds no other worker's pipes, so a worker's end shows as the end of its own.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        for (int s : {SIGINT, SIGTERM, SIGPIPE})
            std::signal(s, SIG_DFL);
        for (const Worker& other : m_workers)
            for (int fd : {other.commands, other.results})
                if (fd >= 0)
                    close(fd);
        close(commands[1]);
        close(results[0]);
        serve(commands[0], results[1]);
    }
    close(commands[0]);
    close(results[1]);
    w = Worker{};
    w.pid = pid;
    w.commands = commands[1];
    w.results = results[0];
}

void WorkerPool::serve(int commands, int results)
{
    // One point index a line in; one result line out.
    std::string line;
    char c = 0;
    for (ssize_t n; (n = ::read(commands, &c, 1)) != 0;) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (c != '\n') {
            line += c;
            continue;
        }
        std::string result;
        try {
            result = m_job(std::stoull(line));
        } catch (const std::exception& e) {
            result = json{{"status", "failed"}, {"error", e.what()}}.dump();
        }
        line.clear();
        std::fflush(nullptr);
        if (!writeAll(results, result + "\n"))
            _exit(1);
    }
    std::fflush(nullptr);
    _exit(0);
}

void WorkerPool::receive(Worker& w, const Done& done)
{
    char buffer[65536];
    const ssize_t n = ::read(w.results, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        reap(w, done);
        return;
    }
    w.received.append(buffer, std::size_t(n));
    const std::size_t end = w.received.find('\n');
    if (end == std::string::npos)
        return;
    json result = json::parse(w.received.substr(0, end), nullptr, false);
    w.received.erase(0, end + 1);
    w.busy = false;
    if (result.is_object() && result.value("status", std::string()) == "interrupted") {
        m_interrupted = true; // stopped from outside, not failed: no result, so --resume runs it again
        return;
    }
    if (!result.is_object() || !result.contains("status"))
        result = {{"status", "failed"}, {"error", "the point's worker sent no readable result"}};
    done(w.point, std::move(result));
}

void WorkerPool::reap(Worker& w, const Done& done)
{
    int status = 0;
    waitpid(w.pid, &status, 0);
    close(w.commands);
    close(w.results);
    const bool busy = w.busy;
    const std::size_t point = w.point;
    w = Worker{};
    if (stoppedFromOutside(status)) {
        m_interrupted = true;
        return;
    }
    if (busy)
        done(point, {{"status", "failed"},
                     {"error", WIFSIGNALED(status) ? fmt::format("the point's process died of signal {}", WTERMSIG(status))
                                                   : std::string("the point's process ended without a result")}});
}

void WorkerPool::run(const std::vector<std::size_t>& points, const Group& group, const Started& started, const Done& done)
{
    // A worker that died is seen as a failed write to its pipe, not as a SIGPIPE.
    struct sigaction ignore = {}, previous = {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ignore, &previous);
    struct Restore
    {
        struct sigaction& previous;
        ~Restore() { sigaction(SIGPIPE, &previous, nullptr); }
    } restore{previous};

    m_interrupted = false; // each run starts afresh (an MPI rank runs one point a run)
    for (Worker& w : m_workers)
        w.group = Waiting::kNone; // group numbers are this run's
    Waiting waiting(points, group);
    auto anyBusy = [&] { return std::any_of(m_workers.begin(), m_workers.end(), [](const Worker& w) { return w.busy; }); };
    // Once a point was stopped from outside no other starts; those in flight still finish.
    while ((!m_interrupted && !waiting.empty()) || anyBusy()) {
        if (InterruptGuard::requested()) {
            kill();
            m_interrupted = true;
            return;
        }
        for (Worker& w : m_workers)
            if (!w.busy && !m_interrupted && !waiting.empty())
                handOut(w, waiting, started, done);
        std::vector<pollfd> fds;
        std::vector<Worker*> polled;
        for (Worker& w : m_workers)
            if (w.busy) {
                fds.push_back({w.results, POLLIN, 0});
                polled.push_back(&w);
            }
        // Polls, so that a Ctrl-C or SIGTERM sent to this process alone stops the points in
        // flight at once (they leave no result) instead of after they finish.
        if (poll(fds.data(), fds.size(), 20) <= 0)
            continue;
        for (std::size_t i = 0; i < fds.size(); ++i)
            if (fds[i].revents != 0)
                receive(*polled[i], done);
    }
}

void WorkerPool::handOut(Worker& w, Waiting& waiting, const Started& started, const Done& done)
{
    // A worker that died between points (the OOM killer, say) is replaced, and no point is
    // charged with it; one that dies as it is handed a point gives the point back.
    siginfo_t info = {};
    if (w.pid > 0 && waitid(P_PID, id_t(w.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == w.pid)
        reap(w, done);
    if (m_interrupted)
        return;
    if (w.pid < 0)
        spawn(w);
    std::set<std::size_t> others;
    for (const Worker& o : m_workers)
        if (&o != &w && o.pid > 0)
            others.insert(o.group);
    const auto [point, g] = waiting.next(w.group, others);
    if (!writeAll(w.commands, std::to_string(point) + "\n")) {
        waiting.putBack(g);
        reap(w, done);
        return;
    }
    w.busy = true;
    w.point = point;
    w.group = g;
    started(point);
}

} // namespace ipusim
