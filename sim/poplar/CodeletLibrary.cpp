// SPDX-License-Identifier: MIT
#include "sim/poplar/CodeletLibrary.hpp"

#include "sim/poplar/CodeletCompiler.hpp"

#include <poplar/exceptions.hpp>

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;

namespace poplar {

CodeletFileType getCodeletFileType(const char* path)
{
    const std::string ext = fs::path(path).extension().string();
    if (ext == ".cpp" || ext == ".cc" || ext == ".cxx" || ext == ".C")
        return CodeletFileType::CppSource;
    if (ext == ".c")
        return CodeletFileType::CSource;
    if (ext == ".S")
        return CodeletFileType::PreprocessedAsmSource;
    if (ext == ".s")
        return CodeletFileType::AsmSource;
    if (ext == ".ll")
        return CodeletFileType::IrSource;
    if (ext == ".gp" || ext == ".o")
        return CodeletFileType::Object;
    throw poplar_error(fmt::format("{}: unknown codelet file type: expected .cpp, .cc, .cxx, .c, .S, .s, .ll, .gp or .o", path));
}

std::string getExtensionFromFileType(CodeletFileType type)
{
    switch (type) {
    case CodeletFileType::PreprocessedAsmSource: return ".S";
    case CodeletFileType::AsmSource: return ".s";
    case CodeletFileType::CSource: return ".c";
    case CodeletFileType::CppSource: return ".cpp";
    case CodeletFileType::IrSource: return ".ll";
    case CodeletFileType::Object: return ".gp";
    case CodeletFileType::Auto: break;
    }
    return "";
}

std::string getLanguageOption(CodeletFileType type)
{
    switch (type) {
    case CodeletFileType::PreprocessedAsmSource: return "assembler-with-cpp";
    case CodeletFileType::AsmSource: return "assembler";
    case CodeletFileType::CSource: return "c";
    case CodeletFileType::CppSource: return "c++";
    case CodeletFileType::IrSource: return "ir";
    case CodeletFileType::Object:
    case CodeletFileType::Auto: break;
    }
    return "";
}

namespace detail {

namespace {

/** Where compiled codelets are kept between runs: IPUSIM_CODELET_CACHE, else the user's cache. */
fs::path cacheDir()
{
    if (const char* dir = std::getenv("IPUSIM_CODELET_CACHE"); dir && *dir)
        return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return fs::path(xdg) / "ipusim" / "codelets";
    if (const char* home = std::getenv("HOME"); home && *home)
        return fs::path(home) / ".cache" / "ipusim" / "codelets";
    return fs::temp_directory_path() / "ipusim-codelets";
}

} // namespace

void CodeletLibrary::add(const std::string& path, CodeletFileType type, const std::string& flags, std::ostream* log)
{
    if (type == CodeletFileType::Auto)
        type = getCodeletFileType(path.c_str());
    if (!fs::exists(path))
        throw graph_program_compilation_error(fmt::format("addCodelets: {}: no such file", path));
    switch (type) {
    case CodeletFileType::Object:
        load(path, path);
        return;
    case CodeletFileType::CppSource:
        break;
    default:
        throw graph_program_compilation_error(fmt::format(
            "addCodelets: {}: {} codelets cannot run on the host; ipusim runs C++ codelets (.cpp), compiled for the host as "
            "Poplar's IPUModel runs them, or objects ipusim-popc wrote from them (.gp)",
            path, getLanguageOption(type)));
    }
    try {
        const std::vector<std::string> hostFlags = hostCompilerFlags(splitFlags(flags));
        const fs::path dir = cacheDir();
        fs::create_directories(dir);
        const fs::path object = dir / (codeletCacheKey(path, hostFlags) + ".gp");
        if (!fs::exists(object)) {
            // A name of this compile's own: other processes and threads may compile the same codelet.
            const fs::path partial = fs::path(object).concat(fmt::format(".{}.{}.partial", getpid(), std::random_device{}()));
            compileCodelet(path, hostFlags, partial.string());
            fs::rename(partial, object);
        }
        load(object.string(), path);
    } catch (const CodeletCompileError& e) {
        const std::string what = e.what();
        const char* end = !what.empty() && what.back() == '\n' ? "" : "\n";
        (log ? *log : std::cerr) << what << end;
        throw graph_program_compilation_error(fmt::format("addCodelets: {}: compilation failed:\n{}", path, e.what()));
    }
}

void CodeletLibrary::load(const std::string& object, const std::string& origin)
{
    void* handle = dlopen(fs::absolute(object).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
        throw graph_program_compilation_error(fmt::format("addCodelets: {}: cannot load the compiled codelet: {}", origin, dlerror()));
    m_objects.emplace_back(handle, [](void* h) { dlclose(h); });
    using Entry = const CodeletTable* (*)();
    auto entry = reinterpret_cast<Entry>(dlsym(handle, "ipusim_codelet_table_v1"));
    if (!entry)
        throw graph_program_compilation_error(fmt::format(
            "addCodelets: {}: not a codelet object of ipusim (no vertex table): compile codelets with ipusim-popc", origin));
    const CodeletTable* table = entry();
    if (table->abiVersion != kCodeletAbiVersion)
        throw graph_program_compilation_error(fmt::format("addCodelets: {}: compiled for codelet ABI {}, this library reads {}: "
                                                          "compile it again with this ipusim-popc",
                                                          origin, table->abiVersion, kCodeletAbiVersion));
    for (std::size_t i = 0; i < table->numClasses; ++i) {
        const VertexClassInfo& c = table->classes[i];
        m_classes[c.name] = &c; // a later codelet's class of the same name replaces it
    }
}

const VertexClassInfo* CodeletLibrary::find(const std::string& name) const
{
    const auto it = m_classes.find(name);
    return it == m_classes.end() ? nullptr : it->second;
}

std::vector<std::string> CodeletLibrary::names() const
{
    std::vector<std::string> out;
    for (const auto& [name, info] : m_classes)
        out.push_back(name);
    return out;
}

} // namespace detail
} // namespace poplar
