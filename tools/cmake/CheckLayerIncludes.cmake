# Fails when a file of a layer includes what its layer may not (run by the build, see
# ipusim_layer in CMakeLists.txt):
#   cmake -DLAYER=name -DSOURCE_DIR=dir -DFILES=a;b -DMAY_INCLUDE=dir/,dir/ -DMUST_NOT_INCLUDE=regex
#         [-DFOLDER_ORDER=dir/;dir/] -DSTAMP=file -P CheckLayerIncludes.cmake
# A project include must start with one of MAY_INCLUDE, whether written "..." or <...>: the
# compiler finds <sim/x.hpp> through the same include path as "sim/x.hpp", so brackets are no
# way around the rule, and neither is a relative path ("../sim/x.hpp"), which is refused. Any
# other include must not match MUST_NOT_INCLUDE. With FOLDER_ORDER (folders relative to
# SOURCE_DIR), a file in one of those folders includes only the folders before its own, so no two
# folders of the layer include each other.
string(REPLACE "," ";" MAY_INCLUDE "${MAY_INCLUDE}")
string(REPLACE "," ";" FOLDER_ORDER "${FOLDER_ORDER}")

# The index in FOLDER_ORDER of the folder `path` (relative to SOURCE_DIR) starts with, or -1.
function(folder_index path out)
  set(index -1)
  set(i 0)
  foreach(folder IN LISTS FOLDER_ORDER)
    string(FIND "${path}" "${folder}" at)
    if(at EQUAL 0)
      set(index ${i})
    endif()
    math(EXPR i "${i} + 1")
  endforeach()
  set(${out} ${index} PARENT_SCOPE)
endfunction()

# The project's top-level source folders: an include starting with one is a project include.
set(PROJECT_FOLDERS "^(models|workloads|sim|tools|tests)/")
set(errors "")
foreach(file IN LISTS FILES)
  file(RELATIVE_PATH relative "${SOURCE_DIR}" "${file}")
  folder_index("${relative}" own)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      set(header "${CMAKE_MATCH_1}")
      set(shown "\"${header}\"")
    elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
      set(header "${CMAKE_MATCH_1}")
      set(shown "<${header}>")
    else()
      continue()
    endif()
    if(header MATCHES "(^|/)\\.\\.(/|$)")
      string(APPEND errors "  ${file}: includes ${shown}, a relative path: name a project header from the source root (\"sim/...\")\n")
    elseif(header MATCHES "${PROJECT_FOLDERS}")
      set(allowed FALSE)
      foreach(prefix IN LISTS MAY_INCLUDE)
        string(FIND "${header}" "${prefix}" at)
        if(at EQUAL 0)
          set(allowed TRUE)
        endif()
      endforeach()
      if(NOT allowed)
        string(APPEND errors "  ${file}: includes ${shown}, but the ${LAYER} layer may include only ${MAY_INCLUDE}\n")
      endif()
      folder_index("${header}" theirs)
      if(own GREATER_EQUAL 0 AND theirs GREATER own)
        list(GET FOLDER_ORDER ${own} mine)
        list(GET FOLDER_ORDER ${theirs} later)
        string(REPLACE ";" ", " order "${FOLDER_ORDER}")
        string(APPEND errors "  ${file}: includes ${shown}, but ${later} comes after ${mine} in the ${LAYER} layer's order "
                             "(${order}): a folder includes only those before it\n")
      endif()
    elseif(NOT "${MUST_NOT_INCLUDE}" STREQUAL "" AND header MATCHES "${MUST_NOT_INCLUDE}")
      string(APPEND errors "  ${file}: includes ${shown}, which the ${LAYER} layer must not use\n")
    endif()
  endforeach()
endforeach()
if(NOT errors STREQUAL "")
  message(FATAL_ERROR "an include runs the wrong way through the layers (docs/developer-guide.md, Layers):\n${errors}")
endif()
file(WRITE "${STAMP}" "ok\n")
