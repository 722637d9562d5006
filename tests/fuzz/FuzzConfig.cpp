// SPDX-License-Identifier: MIT
// The config loader: a whole experiment document (bases, schema, defaults, decoding) and the
// compile it leads to. Seeds: every shipped config.
#include "FuzzHarness.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size)
{
    nlohmann::json doc;
    if (ipusim::fuzz::parseInput(data, size, doc))
        ipusim::fuzz::buildAccepting(std::move(doc), ipusim::fuzz::virtualConfigFile("mnist"));
    return 0;
}
