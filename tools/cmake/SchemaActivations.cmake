# Writes the table of activations from the schema, so that an activation (an element-wise op of
# one input: relu, gelu, ...) is declared once, in the schema's graph_ops, and the compiler's op
# kinds, the graph and ONNX names and the gradient rule are generated from that entry.
#
# An entry of definitions/graph_ops that refers to definitions/activation is one, and its
# "x-activation" gives
#   cpp             the C++ name of its LayerKind and OpKind (the gradient's OpKind: cpp + "Grad")
#   onnx            the ONNX op it imports ("": none)
#   gradient_reads  "input" or "output": what its gradient reads besides the incoming gradient
#   in_place        whether its output takes its input's memory (PopART's inplace variant)
# The header defines
#   #define IPUSIM_ACTIVATIONS(X) X(Relu, "relu", "Relu", Output, true) ...
# in the order of the keys (CMake reads them sorted). The recipe of each, its vertex calls, is a
# case of activationCalls (workloads/lowering/ActivationCalls.cpp); a test walks every row.
function(ipusim_schema_activations schema_file out_file)
  file(READ "${schema_file}" schema)
  string(JSON ops GET "${schema}" definitions graph_ops)
  string(JSON count LENGTH "${ops}")
  math(EXPR last "${count} - 1")
  set(rows "")
  foreach(index RANGE ${last})
    string(JSON key MEMBER "${ops}" ${index})
    string(JSON ref ERROR_VARIABLE ref_error GET "${ops}" ${key} "$ref")
    if(NOT ref_error STREQUAL "NOTFOUND" OR NOT ref STREQUAL "#/definitions/activation")
      continue()
    endif()
    set(where "/definitions/graph_ops/${key}/x-activation")
    string(JSON row ERROR_VARIABLE row_error GET "${ops}" ${key} x-activation)
    if(NOT row_error STREQUAL "NOTFOUND")
      message(FATAL_ERROR "${where} is missing: an activation names its C++ kind, ONNX op, gradient and placement")
    endif()
    foreach(field cpp onnx gradient_reads in_place)
      string(JSON ${field} ERROR_VARIABLE field_error GET "${row}" ${field})
      if(NOT field_error STREQUAL "NOTFOUND")
        message(FATAL_ERROR "${where}/${field} is missing")
      endif()
    endforeach()
    if(NOT cpp MATCHES "^[A-Z][A-Za-z0-9]*$")
      message(FATAL_ERROR "${where}/cpp is \"${cpp}\": expected a C++ name in CamelCase")
    endif()
    if(gradient_reads STREQUAL "input")
      set(reads Input)
    elseif(gradient_reads STREQUAL "output")
      set(reads Output)
    else()
      message(FATAL_ERROR "${where}/gradient_reads is \"${gradient_reads}\": expected \"input\" or \"output\"")
    endif()
    if(in_place)
      set(in_place true)
    else()
      set(in_place false)
    endif()
    list(APPEND rows "X(${cpp}, \"${key}\", \"${onnx}\", ${reads}, ${in_place})")
  endforeach()
  list(JOIN rows " \\\n    " body)
  file(CONFIGURE OUTPUT "${out_file}" CONTENT "// Generated from configs/schema/experiment.schema.json by tools/cmake/SchemaActivations.cmake: do not edit.
// The activations, X(C++ kind, graph op, ONNX op or \"\", what the gradient reads, in place), from
// the x-activation of each graph op that refers to definitions/activation.
#pragma once

#define IPUSIM_ACTIVATIONS(X) \\
    ${body}
" @ONLY)
endfunction()
