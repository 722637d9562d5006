// SPDX-License-Identifier: MIT
#pragma once
#include "models/hw/SchemaParams.hpp" // generated from the schema at configure time

#include <string>
#include <type_traits>

/** Declares the fields of the hardware parameter struct `S` from the list `LIST` the schema
 *  generates for it (tools/cmake/SchemaParams.cmake: a property with "x-cpp-field" is a field),
 *  each with its type and the schema's default, and `S::eachField(f)`, which calls
 *  f(pointer, name, &S::name) for each, `pointer` being the field's below the struct's object in a
 *  config. A struct's fields are declared only through this, so that the schema is the one
 *  declaration of a parameter: the decoder, equality and the tests walk `eachField` instead of
 *  keeping lists of their own. */
#define IPUSIM_PARAM_FIELDS(S, LIST)                                                               \
    LIST(IPUSIM_PARAM_MEMBER)                                                                      \
    template <class F>                                                                             \
    static void eachField(F&& f)                                                                   \
    {                                                                                              \
        using Self = S;                                                                            \
        LIST(IPUSIM_PARAM_VISIT)                                                                   \
    }
// One entry of a list as a member declaration, and as a call in eachField's body (of its `f`).
#define IPUSIM_PARAM_MEMBER(type, name, pointer, init) type name = init;
#define IPUSIM_PARAM_VISIT(type, name, pointer, init) f(pointer, #name, &Self::name);

namespace ipusim {

/** Calls f(pointer, name, field) for every scalar field of the parameter struct `s` and of the
 *  parameter structs it holds, `pointer` being the field's in a config (`s` is at `base`). */
template <class S, class F>
void forEachParam(S& s, const std::string& base, F&& f)
{
    std::remove_const_t<S>::eachField([&](const char* pointer, const char* name, auto member) {
        auto& field = s.*member;
        if constexpr (std::is_arithmetic_v<std::decay_t<decltype(field)>>)
            f(base + pointer, name, field);
        else
            forEachParam(field, base + pointer, f);
    });
}

/** Whether two parameter structs hold equal values in every field. */
template <class S>
bool sameParams(const S& a, const S& b)
{
    bool same = true;
    S::eachField([&](const char*, const char*, auto member) {
        const auto& x = a.*member;
        if constexpr (std::is_arithmetic_v<std::decay_t<decltype(x)>>)
            same = same && x == b.*member;
        else
            same = same && sameParams(x, b.*member);
    });
    return same;
}

} // namespace ipusim
