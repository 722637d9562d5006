// SPDX-License-Identifier: MIT
#pragma once
// ipusim's Poplar API: what a codelet file holds. ipusim compiles C and C++ sources for the host
// (as Poplar's IPUModel runs codelets) and loads the objects ipusim-popc writes (".gp").
#include <string>

namespace poplar {

enum class CodeletFileType
{
    PreprocessedAsmSource,
    AsmSource,
    CSource,
    CppSource,
    IrSource,
    Object,
    Auto
};

/** The type a file's extension says: .c, .cpp/.cc/.cxx, .S, .s, .ll, .gp or .o. */
CodeletFileType getCodeletFileType(const char* path);
std::string getExtensionFromFileType(CodeletFileType type);
std::string getLanguageOption(CodeletFileType type);

} // namespace poplar
