// SPDX-License-Identifier: MIT
#include "sim/sweep/WorkerPool.hpp"

#include "sim/engine/Interrupt.hpp"

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

bool writeAll(int fd, const std::string& text)
{
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += std::size_t(n);
    }
    return true;
}

bool stoppedFromOutside(int status)
{
    return WIFSIGNALED(status) && (WTERMSIG(status) == SIGINT || WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGHUP);
}

/** The points still to run, by group, in point order within each. */
class Waiting
{
public:
    Waiting(const std::vector<std::size_t>& points, const WorkerPool::Group& group)
    {
        for (std::size_t p : points)
            m_byGroup[group(p)].push_back(p);
        for (const auto& [g, list] : m_byGroup)
            m_heads.insert({list.front(), g});
    }
    [[nodiscard]] bool empty() const { return m_heads.empty(); }
    /** The next point for a worker that last ran `mine`, while the others run `others`. */
    std::pair<std::size_t, std::string> next(const std::string& mine, const std::set<std::string>& others)
    {
        auto it = m_byGroup.find(mine);
        std::string g = mine;
        if (it == m_byGroup.end()) {
            auto head = std::find_if(m_heads.begin(), m_heads.end(), [&](const auto& h) { return !others.count(h.second); });
            g = (head != m_heads.end() ? head : m_heads.begin())->second;
            it = m_byGroup.find(g);
        }
        std::deque<std::size_t>& list = it->second;
        const std::size_t point = list.front();
        m_heads.erase({point, g});
        list.pop_front();
        if (list.empty())
            m_byGroup.erase(it);
        else
            m_heads.insert({list.front(), g});
        return {point, g};
    }

private:
    std::map<std::string, std::deque<std::size_t>> m_byGroup;
    std::set<std::pair<std::size_t, std::string>> m_heads; // each group's first point
};

} // namespace

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
    if (pid < 0)
        throw std::runtime_error("fork failed");
    if (pid == 0) {
        // The worker dies with its coordinator (no orphans after a SIGKILL) and takes Ctrl-C and
        // SIGTERM as a process normally does; it holds no other worker's pipes, so a worker's
        // end shows as the end of its own.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);
        for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE})
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

    Waiting waiting(points, group);
    auto anyBusy = [&] { return std::any_of(m_workers.begin(), m_workers.end(), [](const Worker& w) { return w.busy; }); };
    while (!m_interrupted && (!waiting.empty() || anyBusy())) {
        if (InterruptGuard::requested()) {
            kill();
            m_interrupted = true;
            return;
        }
        for (Worker& w : m_workers) {
            if (w.busy || waiting.empty())
                continue;
            if (w.pid < 0)
                spawn(w);
            std::set<std::string> others;
            for (const Worker& o : m_workers)
                if (&o != &w && o.pid > 0)
                    others.insert(o.group);
            auto [point, g] = waiting.next(w.group, others);
            w.busy = true;
            w.point = point;
            w.group = g;
            started(point);
            if (!writeAll(w.commands, std::to_string(point) + "\n"))
                reap(w, done); // it died a moment ago: this point fails with it
        }
        // Idle workers too: one that died between points is reaped (and replaced) before it
        // is handed one.
        std::vector<pollfd> fds;
        std::vector<Worker*> polled;
        for (Worker& w : m_workers)
            if (w.pid > 0) {
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

} // namespace ipusim
