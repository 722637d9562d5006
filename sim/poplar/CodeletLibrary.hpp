// SPDX-License-Identifier: MIT
#pragma once
// The vertex classes a graph's codelets define, from the shared objects they were compiled into.
#include <poplar/CodeletFileType.hpp>
#include <poplar/detail/CodeletAbi.hpp>

#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace poplar::detail {

class CodeletLibrary
{
public:
    /** Compiles a source (cached by its preprocessed text and flags) or loads an object written
     *  by ipusim-popc, and adds its vertex classes. Throws graph_program_compilation_error,
     *  having written the compiler's messages to `log` (when given). */
    void add(const std::string& path, CodeletFileType type, const std::string& flags, std::ostream* log);
    /** A vertex class by name, or null. */
    [[nodiscard]] const VertexClassInfo* find(const std::string& name) const;
    [[nodiscard]] std::vector<std::string> names() const;

private:
    void load(const std::string& object, const std::string& origin);
    std::vector<std::shared_ptr<void>> m_objects; // dlopen handles, closed with the graph
    std::map<std::string, const VertexClassInfo*> m_classes;
};

} // namespace poplar::detail
