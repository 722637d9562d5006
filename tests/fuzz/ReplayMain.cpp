// SPDX-License-Identifier: MIT
// Without libFuzzer (a GCC build), a fuzz target replays the inputs it is given, files or
// folders: the suite runs every seed through the loaders this way, and a crash the fuzzer
// found can be rerun under a debugger. With --all-valid, an input that ends in a clear error
// fails the run: every seed is a shipped config, which must keep building.
#include "FuzzHarness.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <iterator>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> inputsUnder(const fs::path& path)
{
    std::vector<fs::path> files;
    if (fs::is_directory(path)) {
        for (const auto& entry : fs::recursive_directory_iterator(path))
            if (entry.is_regular_file())
                files.push_back(entry.path());
    } else {
        files.push_back(path);
    }
    return files;
}

} // namespace

int main(int argc, char* argv[])
{
    const bool allValid = argc > 1 && std::string(argv[1]) == "--all-valid";
    const int first = allValid ? 2 : 1;
    if (argc <= first) {
        std::fprintf(stderr, "usage: %s [--all-valid] INPUT_OR_FOLDER...\n", argv[0]);
        return 2;
    }
    std::size_t count = 0;
    for (int i = first; i < argc; ++i) {
        if (!fs::exists(argv[i])) {
            std::fprintf(stderr, "%s: no such input\n", argv[i]);
            return 2;
        }
        for (const fs::path& file : inputsUnder(argv[i])) {
            std::ifstream in(file, std::ios::binary);
            const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
            std::fprintf(stderr, "%s\n", file.c_str()); // names the input if the next one aborts
            const std::size_t rejectedBefore = ipusim::fuzz::rejectedInputs();
            LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
            if (allValid && ipusim::fuzz::rejectedInputs() > rejectedBefore) {
                std::fprintf(stderr, "%s: a seed ended in an error (IPUSIM_FUZZ_VERBOSE=1 prints it)\n", file.c_str());
                return 1;
            }
            ++count;
        }
    }
    std::printf("%zu inputs replayed, %zu ended in a clear error\n", count, ipusim::fuzz::rejectedInputs());
    return count > 0 ? 0 : 1;
}
