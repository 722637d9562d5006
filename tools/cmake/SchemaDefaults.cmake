# Writes a C++ header of the schema's defaults under /system, so the hardware description's
# C++ defaults derive from the one declaration of each parameter (the JSON Schema):
#   /system/ipu/exchange/send_bytes_per_cycle -> ipusim::schema::kIpuExchangeSendBytesPerCycle
function(ipusim_schema_defaults schema_file out_file)
  file(READ "${schema_file}" schema)
  set(lines "")
  _ipusim_schema_walk("${schema}" "" lines properties system)
  # Lines are list elements, so their semicolons are added here.
  list(JOIN lines ";\n" body)
  string(APPEND body ";")
  file(CONFIGURE OUTPUT "${out_file}" CONTENT "// Generated from configs/schema/experiment.schema.json by tools/cmake/SchemaDefaults.cmake: do not edit.
#pragma once
#include <cstdint>

namespace ipusim::schema {

${body}

} // namespace ipusim::schema
" @ONLY)
endfunction()

# Appends a constant for every scalar default below the schema node at the given path.
function(_ipusim_schema_walk schema prefix out_var)
  set(path ${ARGN})
  string(JSON props ERROR_VARIABLE no_props GET "${schema}" ${path} properties)
  if(no_props STREQUAL "NOTFOUND") # an object: walk its properties
    set(result ${${out_var}})
    string(JSON count LENGTH "${schema}" ${path} properties)
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON key MEMBER "${schema}" ${path} properties ${i})
      string(REPLACE "_" ";" parts "${key}")
      set(camel "")
      foreach(part IN LISTS parts)
        if(part STREQUAL "")
          continue()
        endif()
        string(SUBSTRING "${part}" 0 1 head)
        string(SUBSTRING "${part}" 1 -1 tail)
        string(TOUPPER "${head}" head)
        string(APPEND camel "${head}${tail}")
      endforeach()
      set(sub "")
      _ipusim_schema_walk("${schema}" "${prefix}${camel}" sub ${path} properties ${key})
      list(APPEND result ${sub})
    endforeach()
    set(${out_var} ${result} PARENT_SCOPE)
    return()
  endif()
  string(JSON value ERROR_VARIABLE no_default GET "${schema}" ${path} default)
  string(JSON type ERROR_VARIABLE no_type GET "${schema}" ${path} type)
  if(no_default STREQUAL "NOTFOUND" AND no_type STREQUAL "NOTFOUND")
    if(type STREQUAL "integer")
      list(APPEND ${out_var} "inline constexpr uint64_t k${prefix} = ${value}ull")
    elseif(type STREQUAL "number")
      list(APPEND ${out_var} "inline constexpr double k${prefix} = ${value}")
    elseif(type STREQUAL "boolean")
      if(value)
        list(APPEND ${out_var} "inline constexpr bool k${prefix} = true")
      else()
        list(APPEND ${out_var} "inline constexpr bool k${prefix} = false")
      endif()
    endif()
  endif()
  set(${out_var} ${${out_var}} PARENT_SCOPE)
endfunction()
