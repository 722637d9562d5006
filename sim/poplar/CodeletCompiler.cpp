// SPDX-License-Identifier: MIT
#include "sim/poplar/CodeletCompiler.hpp"

#include <poplar/detail/CodeletAbi.hpp>

#include <clang-c/Index.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace fs = std::filesystem;

namespace poplar::detail {

namespace {

std::string text(CXString s)
{
    std::string out = clang_getCString(s) ? clang_getCString(s) : "";
    clang_disposeString(s);
    return out;
}

/** "ns::Foo" for a class in namespace ns (anonymous namespaces and the global one add nothing). */
std::string qualifiedName(CXCursor c)
{
    std::string name = text(clang_getCursorSpelling(c));
    for (CXCursor p = clang_getCursorSemanticParent(c); !clang_Cursor_isNull(p) && p.kind != CXCursor_TranslationUnit;
         p = clang_getCursorSemanticParent(p)) {
        const std::string outer = text(clang_getCursorSpelling(p));
        if (!outer.empty())
            name = outer + "::" + name;
    }
    return name;
}

bool isPoplarVertexBase(CXCursor base)
{
    const CXCursor decl = clang_getTypeDeclaration(clang_getCursorType(base));
    const std::string name = qualifiedName(decl);
    return name == "poplar::Vertex" || name == "poplar::MultiVertex" || name == "poplar::SupervisorVertex";
}

struct Scan
{
    std::vector<VertexClassDecl> classes;
};

CXChildVisitResult visitClass(CXCursor c, CXCursor, CXClientData data)
{
    auto& decl = *static_cast<VertexClassDecl*>(data);
    if (c.kind == CXCursor_CXXBaseSpecifier && isPoplarVertexBase(c))
        decl.name = "<vertex>"; // marked: the real name is set by the caller
    else if (c.kind == CXCursor_FieldDecl)
        decl.fields.push_back(text(clang_getCursorSpelling(c)));
    return CXChildVisit_Continue;
}

/** "Foo<float, true>" as poputil::templateVertex names it: "Foo<float,true>". */
std::string templateName(const std::string& spelled)
{
    std::string out;
    for (std::size_t i = 0; i < spelled.size(); ++i)
        if (!(spelled[i] == ' ' && i > 0 && spelled[i - 1] == ','))
            out += spelled[i];
    return out;
}

CXChildVisitResult visitTop(CXCursor c, CXCursor, CXClientData data)
{
    auto& scan = *static_cast<Scan*>(data);
    if (!clang_Location_isFromMainFile(clang_getCursorLocation(c)))
        return CXChildVisit_Continue;
    if (c.kind == CXCursor_Namespace)
        return CXChildVisit_Recurse;
    if (c.kind != CXCursor_ClassDecl && c.kind != CXCursor_StructDecl)
        return CXChildVisit_Continue;
    // A class; a specialisation of a class template ("template <> class Foo<int> ..."); or an
    // explicit instantiation ("template class Foo<float>;"), whose fields and bases are the
    // template's.
    const CXCursor templ = clang_getSpecializedCursorTemplate(c);
    const bool instantiation = !clang_Cursor_isNull(templ) && templ.kind == CXCursor_ClassTemplate;
    if (!instantiation && !clang_isCursorDefinition(c))
        return CXChildVisit_Continue;
    VertexClassDecl decl;
    clang_visitChildren(c, visitClass, &decl);
    if (decl.name.empty() && instantiation) {
        decl.fields.clear();
        clang_visitChildren(templ, visitClass, &decl);
    }
    if (decl.name.empty())
        return CXChildVisit_Continue;
    if (instantiation) {
        const std::string spelled = text(clang_getTypeSpelling(clang_getCursorType(c)));
        const std::size_t args = spelled.find('<');
        decl.name = qualifiedName(templ) + templateName(args == std::string::npos ? "" : spelled.substr(args));
    } else {
        decl.name = qualifiedName(c);
    }
    scan.classes.push_back(std::move(decl));
    return CXChildVisit_Continue;
}

/** Runs a command, its output (stdout and stderr) appended to `output`; returns its exit status. */
int runCommand(const std::vector<std::string>& argv, std::string& output)
{
    std::string line;
    for (const auto& a : argv) {
        line += line.empty() ? "" : " ";
        line += "'";
        for (char ch : a)
            line += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
        line += "'";
    }
    line += " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(line.c_str(), "r"), pclose);
    if (!pipe)
        throw CodeletCompileError("cannot run the host compiler: " + argv.front());
    std::array<char, 4096> buffer{};
    std::size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0)
        output.append(buffer.data(), n);
    const int status = pclose(pipe.release());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/** The host compiler's command: CXX (a launcher and flags allowed, "ccache g++"), else the
 *  compiler ipusim was built with. */
std::vector<std::string> hostCompiler()
{
    if (const char* cxx = std::getenv("CXX"); cxx && *cxx)
        if (auto words = splitFlags(cxx); !words.empty())
            return words;
    return {IPUSIM_HOST_CXX};
}

/** The command line of the host compiler with these arguments. */
std::vector<std::string> compilerCommand(std::vector<std::string> args)
{
    std::vector<std::string> cmd = hostCompiler();
    cmd.insert(cmd.end(), args.begin(), args.end());
    return cmd;
}

} // namespace

std::string poplarIncludeDir()
{
    // Installed: <prefix>/include/poplar/ above <prefix>/lib[/<arch>]/libipusim_poplar.so and
    // <prefix>/bin/ipusim-popc.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&poplarIncludeDir), &info) && info.dli_fname) {
        fs::path dir = fs::absolute(info.dli_fname).parent_path();
        for (int up = 0; up < 3 && dir.has_parent_path(); ++up) {
            dir = dir.parent_path();
            if (fs::exists(dir / "include" / "poplar" / "detail" / "CodeletAbi.hpp"))
                return (dir / "include").string();
        }
    }
    return IPUSIM_POPLAR_SOURCE_INCLUDE;
}

std::vector<std::string> splitFlags(const std::string& flags)
{
    std::istringstream in(flags);
    std::vector<std::string> out;
    for (std::string f; in >> f;)
        out.push_back(f);
    return out;
}

std::vector<std::string> hostCompilerFlags(const std::vector<std::string>& popcFlags)
{
    std::vector<std::string> out;
    for (std::size_t i = 0; i < popcFlags.size(); ++i) {
        const std::string& f = popcFlags[i];
        auto value = [&](const char* flag) {
            if (i + 1 >= popcFlags.size())
                throw CodeletCompileError(fmt::format("codelet flag {} needs a value", flag));
            return popcFlags[++i];
        };
        if (f == "-target" || f == "--target") {
            const std::string arch = value("-target");
            if (arch != "ipu2" && arch != "ipu21" && arch != "ipu2,ipu21" && arch != "ipu21,ipu2")
                throw CodeletCompileError(fmt::format("codelet flag -target {}: expected ipu2 or ipu21 (ipusim simulates a Mk2)", arch));
        } else if (f == "-I" || f == "-D") {
            out.push_back(f + value(f.c_str()));
        } else if (f.rfind("-O", 0) == 0 || f.rfind("-I", 0) == 0 || f.rfind("-D", 0) == 0 || f.rfind("-U", 0) == 0 || f == "-g" ||
                   f == "-Werror" || f == "-Wall" || f == "-Wextra" || f.rfind("-std=", 0) == 0 || f.rfind("-W", 0) == 0) {
            out.push_back(f);
        } else {
            throw CodeletCompileError(fmt::format("codelet flag '{}' is not supported: expected -O<n>, -I<dir>, -D<macro>, -U<macro>, -g, "
                                                  "-W<warning>, -std=<standard> or -target <ipu2|ipu21>", f));
        }
    }
    return out;
}

std::vector<VertexClassDecl> findVertexClasses(const std::string& source, const std::vector<std::string>& flags)
{
    std::vector<std::string> args = {"-x", "c++", "-std=c++17", "-I" + poplarIncludeDir()};
    for (const auto& f : flags)
        if (f.rfind("-O", 0) != 0)
            args.push_back(f);
    std::vector<const char*> argv;
    for (const auto& a : args)
        argv.push_back(a.c_str());
    std::unique_ptr<void, void (*)(CXIndex)> index(clang_createIndex(0, 0), clang_disposeIndex);
    CXTranslationUnit unit = nullptr;
    const CXErrorCode code = clang_parseTranslationUnit2(index.get(), source.c_str(), argv.data(), int(argv.size()), nullptr, 0,
                                                         CXTranslationUnit_SkipFunctionBodies, &unit);
    if (code != CXError_Success || !unit)
        throw CodeletCompileError(fmt::format("{}: cannot parse the codelet (libclang error {})", source, int(code)));
    std::unique_ptr<CXTranslationUnitImpl, void (*)(CXTranslationUnit)> owner(unit, clang_disposeTranslationUnit);
    std::string errors;
    for (unsigned i = 0, n = clang_getNumDiagnostics(unit); i < n; ++i) {
        CXDiagnostic d = clang_getDiagnostic(unit, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error)
            errors += text(clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions())) + "\n";
        clang_disposeDiagnostic(d);
    }
    if (!errors.empty())
        throw CodeletCompileError(errors);
    Scan scan;
    clang_visitChildren(clang_getTranslationUnitCursor(unit), visitTop, &scan);
    return scan.classes;
}

namespace {

/** The generated table of the vertex classes: the ABI of CodeletAbi.hpp. */
std::string tableSource(const std::string& source, const std::vector<VertexClassDecl>& classes)
{
    std::string out = fmt::format("#include \"{}\"\n#include <poplar/detail/CodeletAbi.hpp>\nnamespace {{\n", source);
    for (std::size_t c = 0; c < classes.size(); ++c) {
        if (classes[c].fields.empty())
            continue;
        out += fmt::format("const ::poplar::detail::FieldInfo ipusim_fields_{}[] = {{\n", c);
        const std::string v = "::" + classes[c].name;
        for (const auto& f : classes[c].fields)
            out += fmt::format("    ::poplar::detail::field<{0}, decltype({0}::{1}), &{0}::{1}>(\"{1}\"),\n", v, f);
        out += "};\n";
    }
    out += "const ::poplar::detail::VertexClassInfo ipusim_classes[] = {\n";
    for (std::size_t c = 0; c < classes.size(); ++c)
        out += fmt::format("    ::poplar::detail::vertexClass<::{}>(\"{}\", {}, {}),\n", classes[c].name, classes[c].name,
                           classes[c].fields.empty() ? "nullptr" : fmt::format("ipusim_fields_{}", c), classes[c].fields.size());
    if (classes.empty())
        out += "    {},\n";
    out += fmt::format("}};\nconst ::poplar::detail::CodeletTable ipusim_table{{::poplar::detail::kCodeletAbiVersion, ipusim_classes, {}}};\n",
                       classes.size());
    out += "} // namespace\nextern \"C\" __attribute__((visibility(\"default\"))) const ::poplar::detail::CodeletTable* "
           "IPUSIM_CODELET_ENTRY() { return &ipusim_table; }\n";
    return out;
}

} // namespace

void compileCodelet(const std::string& source, const std::vector<std::string>& flags, const std::string& output)
{
    if (!fs::exists(source))
        throw CodeletCompileError(fmt::format("{}: no such codelet file", source));
    const std::string absolute = fs::absolute(source).string();
    if (absolute.find_first_of("\"\\\n") != std::string::npos)
        throw CodeletCompileError(fmt::format("{}: a codelet's path may not hold a quote, a backslash or a line break", absolute));
    std::vector<std::string> cmd = compilerCommand({"-std=c++17", "-fPIC", "-shared", "-I" + poplarIncludeDir()});
    cmd.insert(cmd.end(), flags.begin(), flags.end());
    std::vector<VertexClassDecl> classes;
    try {
        classes = findVertexClasses(absolute, flags);
    } catch (const CodeletCompileError&) {
        // The host compiler's messages say it as users read them; libclang's if it has none.
        std::string log;
        std::vector<std::string> check = cmd;
        check.insert(check.end(), {"-fsyntax-only", "-x", "c++", absolute});
        if (runCommand(check, log) != 0)
            throw CodeletCompileError(log);
        throw;
    }
    const fs::path table = fs::path(output).concat(".table.cpp");
    std::ofstream(table) << tableSource(absolute, classes);
    cmd.insert(cmd.end(), {table.string(), "-o", output});
    std::string log;
    const int status = runCommand(cmd, log);
    fs::remove(table);
    if (status != 0)
        throw CodeletCompileError(log);
}

std::string codeletCacheKey(const std::string& source, const std::vector<std::string>& flags)
{
    std::vector<std::string> cmd = compilerCommand({"-E", "-P", "-std=c++17", "-I" + poplarIncludeDir()});
    cmd.insert(cmd.end(), flags.begin(), flags.end());
    cmd.push_back(source);
    std::string text;
    if (runCommand(cmd, text) != 0) // the compile reports it; the key only has to differ
        text += std::to_string(fs::last_write_time(source).time_since_epoch().count());
    for (const auto& word : hostCompiler())
        text += "\n" + word;
    for (const auto& f : flags)
        text += "\n" + f;
    text += fmt::format("\nabi {}", kCodeletAbiVersion);
    return fmt::format("{:016x}", std::hash<std::string>{}(text));
}

} // namespace poplar::detail
