// SPDX-License-Identifier: MIT
// The schedule and graph loaders: the fuzzer's bytes are an experiment's /workload and /run on
// an IPU-M2000 (four IPUs), so that mutations land in the hand-written Schedule (steps, tiles,
// vertices, loops, calls) or the model graph (inputs, ops, shapes; then shape inference and
// lowering) and the run options they are checked against. Seeds: configs/schedules/ and
// configs/graph/.
#include "FuzzHarness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    nlohmann::json doc;
    if (!ipusim::fuzz::parseInput(data, size, doc))
        return 0;
    if (doc.is_object()) { // anything else is the loader's to reject
        doc["name"] = "fuzz";
        doc["system"] = {{"base", "../hardware/m2000.json"}};
    }
    ipusim::fuzz::buildAccepting(std::move(doc), ipusim::fuzz::virtualConfigFile("schedules"));
    return 0;
}
