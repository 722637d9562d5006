// SPDX-License-Identifier: MIT
#include "FuzzHarness.hpp"

#include "sim/config/ConfigError.hpp"
#include "sim/engine/Experiment.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

namespace ipusim::fuzz {
namespace {
std::size_t g_rejected = 0;
}

std::size_t rejectedInputs()
{
    return g_rejected;
}

bool parseInput(const uint8_t* data, std::size_t size, nlohmann::json& out)
{
    out = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    g_rejected += out.is_discarded();
    return !out.is_discarded();
}

std::string virtualConfigFile(const std::string& folder)
{
    return std::string(IPUSIM_SOURCE_DIR) + "/configs/" + folder + "/fuzz-input.json";
}

void buildAccepting(nlohmann::json doc, const std::string& file)
{
    try {
        config::LoadedConfig cfg = config::loadConfig(std::move(doc), file);
        const auto inference = inferencePhase(cfg);
        buildExperiment(std::move(cfg));
        if (inference)
            buildExperiment(*inference);
    } catch (const config::ConfigError& e) {
        // the clear error the command line prints
        ++g_rejected;
        if (std::getenv("IPUSIM_FUZZ_VERBOSE"))
            std::fprintf(stderr, "  clear error: %s\n", e.what());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "fuzz: bad input ended in an exception other than ConfigError: %s\n", e.what());
        std::abort();
    }
}

} // namespace ipusim::fuzz

// libsystemc's own main() calls sc_main (declared extern "C" by SystemC); the fuzz drivers
// bring their own main and never elaborate, but the symbol must resolve.
extern "C" int sc_main(int, char*[])
{
    return 0;
}
