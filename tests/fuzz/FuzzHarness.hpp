// SPDX-License-Identifier: MIT
#pragma once
// What every fuzz target shares: bad input must end in config::ConfigError, the error the
// command line prints with the file and pointer; anything else is a finding.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace ipusim::fuzz {

/** The fuzzer's bytes as JSON, or nothing when they are not JSON a loader would be given (the
 *  file reader reports those; its own tests cover its messages). */
bool parseInput(const uint8_t* data, std::size_t size, nlohmann::json& out);

/** A document as if read from `configs/<folder>/fuzz-input.json`, so that its relative bases
 *  resolve against the shipped hardware files. */
std::string virtualConfigFile(const std::string& folder);

/** Loads, decodes and compiles `doc` as an experiment, and the inference phase that follows
 *  it; a ConfigError is the expected end of bad input, any other exception aborts. */
void buildAccepting(nlohmann::json doc, const std::string& file);

/** How many inputs so far were not JSON or ended in a ConfigError. */
std::size_t rejectedInputs();

} // namespace ipusim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size);
