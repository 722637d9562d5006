// SPDX-License-Identifier: MIT
#include "sim/config/BundledModels.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <filesystem>

namespace ipusim::config {
namespace {

namespace fs = std::filesystem;
constexpr std::string_view kPrefix = "bundled:";

} // namespace

bool isBundledModel(const std::string& file) { return file.rfind(kPrefix, 0) == 0; }

std::vector<std::string> bundledModelFolders()
{
    std::vector<std::string> folders;
    if (const char* dir = std::getenv("IPUSIM_MODELS_DIR"); dir && *dir)
        folders.emplace_back(dir);
    std::error_code ec;
    const fs::path program = fs::read_symlink("/proc/self/exe", ec); // Linux: the running program
    if (!ec) {
        folders.push_back((program.parent_path() / "models").string());
        folders.push_back((program.parent_path().parent_path() / "share" / "ipusim" / "models").string());
    }
#ifdef IPUSIM_BUILD_MODELS_DIR
    folders.emplace_back(IPUSIM_BUILD_MODELS_DIR);
#endif
    return folders;
}

std::optional<std::string> findWorkloadModel(const LoadedConfig& cfg)
{
    const std::string named = cfg.doc.at("workload").at("file");
    if (!isBundledModel(named))
        return resolveRelative(cfg.fileOf("/workload/file"), named); // as "base" resolves
    const std::string name = named.substr(kPrefix.size());
    if (name.empty() || name.find('/') != std::string::npos) // a name, not a path out of the models' folder
        return std::nullopt;
    for (const std::string& folder : bundledModelFolders()) {
        const fs::path candidate = fs::path(folder) / name;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec))
            return candidate.lexically_normal().string();
    }
    return std::nullopt;
}

std::string workloadModelFile(const LoadedConfig& cfg)
{
    if (const auto found = findWorkloadModel(cfg))
        return *found;
    const std::string named = cfg.doc.at("workload").at("file");
    const std::string name = named.substr(kPrefix.size());
    if (name.empty() || name.find('/') != std::string::npos)
        cfg.fail("/workload/file", fmt::format("expected \"bundled:\" and the name of a model the build exports (such as "
                                               "\"bundled:resnet50.onnx\"), found \"{}\"", named));
    cfg.fail("/workload/file",
             fmt::format("the bundled model \"{}\" is in none of {}: the build exports it when python3-torch and "
                         "python3-torchvision are installed (tools/setup.sh installs them); IPUSIM_MODELS_DIR names another folder",
                         name, fmt::join(bundledModelFolders(), ", ")));
}

} // namespace ipusim::config
