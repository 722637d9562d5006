// SPDX-License-Identifier: MIT
#pragma once
#include "sim/config/ConfigLoader.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <sys/types.h>

namespace ipusim {

/** Runs one config (and its inference phase) in the calling process: {"status": "ok",
 *  "summary": {...}}, or {"status": "invalid" | "out_of_memory" | "failed", "error": message}.
 *  Never throws. */
nlohmann::json simulatePoint(config::LoadedConfig cfg);
/** Loads `config` with `sets` (errors in them name `setsOrigin`, the file that gave them) and
 *  simulates it; a config error becomes an "invalid" result. */
nlohmann::json simulatePoint(const std::string& config, const std::vector<std::string>& sets, const std::string& setsOrigin);

/** Runs jobs in child processes (SystemC elaborates once per process; a crash stays in its
 *  child), at most `jobs` at a time. A job's result travels through a file in `scratch`. */
class PointRunner
{
public:
    PointRunner(std::filesystem::path scratch, unsigned jobs);
    ~PointRunner();

    /** Starts `job` for `index` once a slot is free (waiting for one if needed); finished jobs
     *  met while waiting are handed to `done`. */
    void start(std::size_t index, const std::function<nlohmann::json()>& job,
               const std::function<void(std::size_t, nlohmann::json)>& done);
    /** Waits for every running job. */
    void finish(const std::function<void(std::size_t, nlohmann::json)>& done);
    /** Kills the running children (interrupted sweep). */
    void kill();
    /** True once a job was stopped by SIGINT, SIGTERM or SIGHUP: it has no result. */
    [[nodiscard]] bool interrupted() const { return m_interrupted; }

private:
    void reapOne(const std::function<void(std::size_t, nlohmann::json)>& done);
    std::filesystem::path m_scratch;
    unsigned m_jobs;
    std::map<pid_t, std::size_t> m_running;
    bool m_interrupted = false;
};

} // namespace ipusim
