// SPDX-License-Identifier: MIT
#pragma once
// Codelets compiled for the host, as Poplar's IPUModel runs them: the vertex classes of a source
// are found with libclang (a class deriving from poplar::Vertex, MultiVertex or SupervisorVertex,
// and its data members), a table of them is generated beside the source, and both are compiled
// with the host's C++ compiler into a shared object (what ipusim-popc writes as a ".gp" file).
#include <stdexcept>
#include <string>
#include <vector>

namespace poplar::detail {

/** A compile that failed: the compiler's messages (file:line: ...). */
struct CodeletCompileError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

struct VertexClassDecl
{
    std::string name;                // qualified as addVertex names it: "SumVertex", "ns::Foo"
    std::vector<std::string> fields; // data members, in declaration order
};

/** The vertex classes a codelet source defines (not those of the headers it includes). */
std::vector<VertexClassDecl> findVertexClasses(const std::string& source, const std::vector<std::string>& flags);

/** Compiles the C++ codelet `source` with the host compiler's `flags` (hostCompilerFlags) into the
 *  shared object `output`. Throws CodeletCompileError. */
void compileCodelet(const std::string& source, const std::vector<std::string>& flags, const std::string& output);

/** What a compiled codelet depends on, as a key for a cache of them: the source as the host
 *  compiler sees it (its includes expanded, so an edited header recompiles), the flags, the
 *  compiler and the codelet ABI. */
std::string codeletCacheKey(const std::string& source, const std::vector<std::string>& flags);

/** The folder holding <poplar/Vertex.hpp>: the installed include/ beside this library, or the
 *  source tree's (a build not installed). */
std::string poplarIncludeDir();

/** popc's flags as the host compiler takes them: -O<n>, -I<dir> (or -I dir), -D<macro>, -g and
 *  -Werror pass; -target <arch> is checked (ipu2, ipu21) and dropped. Throws on others. */
std::vector<std::string> hostCompilerFlags(const std::vector<std::string>& popcFlags);
/** The same from one string of flags (Graph::addCodelets' compileFlags), split at spaces. */
std::vector<std::string> splitFlags(const std::string& flags);

} // namespace poplar::detail
