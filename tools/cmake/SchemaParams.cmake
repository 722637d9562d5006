# Writes the C++ fields of the hardware description from the schema, so that a hardware parameter
# is declared once, in the schema, and its C++ field is generated from it (as gem5 generates a
# SimObject's params struct from its Python declaration).
#
# The schema names them: an object with "x-cpp-type" is the C++ struct of that name (/system is
# SystemParams), and a property below it with "x-cpp-field" is a field of that struct, also
# through objects without "x-cpp-type", which only group keys in the config (/system/ipu/exchange).
# A field's type is the schema's: integer -> uint32_t (or its "x-cpp-type", uint64_t), number ->
# double, boolean -> bool, an object -> its "x-cpp-type". For each struct the header defines a list
#   #define IPUSIM_IPU_PARAMS_FIELDS(X) X(uint32_t, tiles, "/tiles", 1472) ...
# of (type, name, JSON pointer below the struct's object, default); models/hw/ParamFields.hpp
# declares the fields and visits them from it, and sim/config decodes a config by that visit.
#
# CMake reads a JSON object's keys in sorted order, so the fields are in the order of their keys.
# A struct at several pointers (LinkParams) has the fields of each alike (checked here); a
# default-constructed one takes the defaults of the first, the others' defaults are spelled out.
function(ipusim_schema_params schema_file out_file)
  file(READ "${schema_file}" schema)
  string(JSON system GET "${schema}" properties system)
  string(JSON root GET "${system}" x-cpp-type)
  set_property(GLOBAL PROPERTY IPUSIM_PARAM_STRUCTS "")
  _ipusim_params_struct("${system}" "/system" ${root} unused)
  get_property(structs GLOBAL PROPERTY IPUSIM_PARAM_STRUCTS)
  set(body "")
  foreach(struct IN LISTS structs) # each after the structs it holds
    get_property(entries GLOBAL PROPERTY IPUSIM_PARAMS_${struct})
    string(REGEX REPLACE "([a-z0-9])([A-Z])" "\\1_\\2" macro "${struct}")
    string(TOUPPER "IPUSIM_${macro}_FIELDS" macro)
    list(JOIN entries " \\\n    " fields)
    string(APPEND body "#define ${macro}(X) \\\n    ${fields}\n\n")
  endforeach()
  file(CONFIGURE OUTPUT "${out_file}" CONTENT "// Generated from configs/schema/experiment.schema.json by tools/cmake/SchemaParams.cmake: do not edit.
// The fields of each hardware parameter struct, X(type, name, pointer below the struct's object,
// default), from the schema's x-cpp-field and x-cpp-type (models/hw/ParamFields.hpp uses them).
#pragma once
#include <cstdint>

${body}" @ONLY)
endfunction()

# Records the fields of the struct `struct` at the schema object `node` (config pointer `where`),
# and sets `out_default` to the expression of this object's default value.
function(_ipusim_params_struct node where struct out_default)
  set(heads "")
  set(defaults "")
  _ipusim_params_fields("${node}" "${where}" "" heads defaults)
  get_property(first GLOBAL PROPERTY IPUSIM_PARAM_HEADS_${struct})
  get_property(known GLOBAL PROPERTY IPUSIM_PARAM_HEADS_${struct} SET)
  if(known) # another object of a known struct: the same fields, defaults of its own
    if(NOT heads STREQUAL first)
      list(TRANSFORM heads APPEND ")")
      list(TRANSFORM first APPEND ")")
      list(JOIN heads " " these)
      list(JOIN first " " those)
      message(FATAL_ERROR "${where} is a ${struct} (x-cpp-type) but its fields differ from the first ${struct}'s:\n"
                          "  here:  ${these}\n  first: ${those}")
    endif()
    list(JOIN defaults ", " values)
    set(${out_default} "(${struct}{${values}})" PARENT_SCOPE)
    return()
  endif()
  set(entries "")
  foreach(head value IN ZIP_LISTS heads defaults)
    list(APPEND entries "${head}, ${value})")
  endforeach()
  set_property(GLOBAL PROPERTY IPUSIM_PARAM_HEADS_${struct} "${heads}")
  set_property(GLOBAL PROPERTY IPUSIM_PARAMS_${struct} "${entries}")
  set_property(GLOBAL APPEND PROPERTY IPUSIM_PARAM_STRUCTS ${struct})
  set(${out_default} "${struct}{}" PARENT_SCOPE)
endfunction()

# Appends to `heads_var` the start "X(type, name, pointer" of the field of each property of `node`
# with an x-cpp-field, and to `defaults_var` its default, walking into the objects that only group
# keys; `prefix` is `node`'s pointer below its struct's object, `where` its pointer in a config.
function(_ipusim_params_fields node where prefix heads_var defaults_var)
  set(heads ${${heads_var}})
  set(defaults ${${defaults_var}})
  string(JSON count ERROR_VARIABLE error LENGTH "${node}" properties)
  if(NOT error STREQUAL "NOTFOUND" OR count EQUAL 0)
    return() # a scalar or a list: no keys to walk
  endif()
  math(EXPR last "${count} - 1")
  foreach(index RANGE ${last})
    string(JSON key MEMBER "${node}" properties ${index})
    string(JSON sub GET "${node}" properties ${key})
    string(JSON field ERROR_VARIABLE field_error GET "${sub}" x-cpp-field)
    string(JSON type ERROR_VARIABLE type_error GET "${sub}" x-cpp-type)
    string(JSON kind ERROR_VARIABLE kind_error GET "${sub}" type)
    if(NOT field_error STREQUAL "NOTFOUND") # no C++ field of its own
      if(NOT type_error STREQUAL "NOTFOUND")
        # A group of keys (/system/ipu/exchange), or keys decoded by hand (the topology).
        _ipusim_params_fields("${sub}" "${where}/${key}" "${prefix}/${key}" heads defaults)
        continue()
      endif()
      message(FATAL_ERROR "${where}/${key} has an x-cpp-type but no x-cpp-field naming it")
    elseif(kind STREQUAL "object")
      if(NOT type_error STREQUAL "NOTFOUND")
        message(FATAL_ERROR "${where}/${key} has an x-cpp-field but no x-cpp-type naming its struct")
      endif()
      _ipusim_params_struct("${sub}" "${where}/${key}" ${type} value)
    else()
      _ipusim_params_scalar("${sub}" "${where}/${key}" type value)
    endif()
    list(APPEND heads "X(${type}, ${field}, \"${prefix}/${key}\"")
    list(APPEND defaults "${value}")
  endforeach()
  set(${heads_var} ${heads} PARENT_SCOPE)
  set(${defaults_var} ${defaults} PARENT_SCOPE)
endfunction()

# Sets `type_var` and `value_var` to the C++ type and default of the scalar property `sub`.
function(_ipusim_params_scalar sub where type_var value_var)
  string(JSON kind GET "${sub}" type)
  string(JSON type ERROR_VARIABLE type_error GET "${sub}" x-cpp-type)
  string(JSON value ERROR_VARIABLE default_error GET "${sub}" default)
  if(NOT default_error STREQUAL "NOTFOUND")
    message(FATAL_ERROR "${where} has an x-cpp-field but no default")
  endif()
  if(kind STREQUAL "integer")
    if(NOT type_error STREQUAL "NOTFOUND")
      set(type uint32_t)
    endif()
    # (Without a maximum the loader takes 32 bits.) A value the config may hold must fit.
    string(JSON maximum ERROR_VARIABLE maximum_error GET "${sub}" maximum)
    if(type STREQUAL "uint32_t" AND maximum_error STREQUAL "NOTFOUND" AND maximum GREATER 4294967295)
      message(FATAL_ERROR "${where} may be up to ${maximum}: give it \"x-cpp-type\": \"uint64_t\"")
    endif()
  elseif(kind STREQUAL "number")
    set(type double)
    if(value MATCHES "^-?[0-9]+$") # CMake writes a whole number without its point
      string(APPEND value ".0")
    endif()
  elseif(kind STREQUAL "boolean")
    set(type bool)
    if(value)
      set(value true)
    else()
      set(value false)
    endif()
  else()
    message(FATAL_ERROR "${where} has an x-cpp-field but its type (${kind}) has no C++ field type here")
  endif()
  set(${type_var} ${type} PARENT_SCOPE)
  set(${value_var} ${value} PARENT_SCOPE)
endfunction()
