# The fuzz targets' seeds, from the shipped experiment configs, one file each:
#   MODE=config    the whole config, its "base" paths made absolute (the fuzzer's input has no
#                  folder of its own to resolve them against); an ONNX workload's "bundled:"
#                  model is found in this build's export (ONNX_DIR); without ONNX_DIR (no torch
#                  to export them), ONNX configs are left out
#   MODE=workload  its /workload and /run
# cmake -DMODE=config -DCONFIGS="a.json;b.json" -DOUT=dir [-DONNX_DIR=dir] -P FuzzSeeds.cmake
cmake_minimum_required(VERSION 3.25) # policies: a quoted "workload" is a string, not a variable

# The object `json` with its "base" member, if any, resolved against `folder`.
function(absolute_base json folder out)
  string(JSON base ERROR_VARIABLE missing GET "${json}" base)
  if(NOT missing AND NOT IS_ABSOLUTE "${base}")
    get_filename_component(base "${folder}/${base}" ABSOLUTE)
    string(JSON json SET "${json}" base "\"${base}\"")
  endif()
  set(${out} "${json}" PARENT_SCOPE)
endfunction()

file(MAKE_DIRECTORY ${OUT})
foreach(config IN LISTS CONFIGS)
  file(READ ${config} text)
  get_filename_component(folder ${config} DIRECTORY)
  get_filename_component(stem ${config} NAME_WE)
  get_filename_component(parent ${folder} NAME)
  if(MODE STREQUAL "workload")
    string(JSON workload GET "${text}" workload)
    string(JSON run ERROR_VARIABLE no_run GET "${text}" run)
    if(no_run)
      set(run "{}")
    endif()
    set(seed "{\"workload\": ${workload}, \"run\": ${run}}")
  else()
    string(JSON kind ERROR_VARIABLE no_kind GET "${text}" workload kind)
    if(kind STREQUAL "onnx")
      if(NOT ONNX_DIR) # the configs name "bundled:" models, which this build did not export
        continue()
      endif()
    endif()
    absolute_base("${text}" ${folder} seed)
    string(JSON members LENGTH "${seed}")
    math(EXPR last "${members} - 1")
    foreach(i RANGE ${last}) # bases one level down (/system/base)
      string(JSON key MEMBER "${seed}" ${i})
      string(JSON type TYPE "${seed}" ${key})
      if(type STREQUAL "OBJECT")
        string(JSON member GET "${seed}" ${key})
        absolute_base("${member}" ${folder} member)
        string(JSON seed SET "${seed}" ${key} "${member}")
      endif()
    endforeach()
  endif()
  file(WRITE ${OUT}/${parent}_${stem}.json "${seed}\n")
endforeach()
