// SPDX-License-Identifier: MIT
#pragma once
// Helpers of the Poplar API's tests: they use the API as a Poplar program does, nothing more.
#include <poplar/DeviceManager.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Graph.hpp>

#include <cstdlib>
#include <string>

namespace poplar_test {

/** A codelet source of tests/poplar/codelets. */
inline std::string codelet(const std::string& name) { return std::string(IPUSIM_POPLAR_CODELETS) + "/" + name; }

/** The codelet source of an example program (tools/examples/poplar/NAME/codelets.cpp). */
inline std::string exampleCodelets(const std::string& name)
{
    return std::string(IPUSIM_SOURCE_DIR) + "/tools/examples/poplar/" + name + "/codelets.cpp";
}

/** The first device of `ipus` IPUs of the simulated system, attached. */
inline poplar::Device device(unsigned ipus = 1)
{
    auto devices = poplar::DeviceManager::createDeviceManager().getDevices(poplar::TargetType::IPU, ipus);
    poplar::Device d = devices.at(0);
    d.attach();
    return d;
}

/** A figure of the last run's summary (summary.json of `ipusim run`), by JSON pointer. */
std::uint64_t summaryFigure(const poplar::Engine& engine, const std::string& pointer);

/** Sets an environment variable for one scope. */
class ScopedEnv
{
public:
    ScopedEnv(const char* name, const std::string& value) : m_name(name)
    {
        if (const char* old = std::getenv(name))
            m_old = old, m_had = true;
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv()
    {
        if (m_had)
            setenv(m_name, m_old.c_str(), 1);
        else
            unsetenv(m_name);
    }

private:
    const char* m_name;
    std::string m_old;
    bool m_had = false;
};

} // namespace poplar_test
