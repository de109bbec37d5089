# SPDX-License-Identifier: Apache-2.0
# The library alone, as an engine vendoring it would install it: no tests, tools or Python; configure,
# build (which makes only the generated catalog headers), install, then a pkg-config consumer of the
# result. In: SOURCE_DIR, WORK, GENERATOR, CXX, and MODE (HEADER_ONLY or COMPILED).
cmake_minimum_required(VERSION 3.16)  # quoted if() arguments are strings (CMP0054)
set(build "${WORK}/build-${MODE}")
set(prefix "${WORK}/prefix-${MODE}")
file(REMOVE_RECURSE "${build}" "${prefix}")
set(compiled OFF)
if(MODE STREQUAL "COMPILED")
  set(compiled ON)
endif()
foreach(step configure build install)
  if(step STREQUAL "configure")
    set(cmd "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${build}" -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX}"
            -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g0 -DATTNSEL_BUILD_TESTS=OFF -DATTNSEL_BUILD_TOOLS=OFF
            -DATTNSEL_BUILD_PYTHON=OFF "-DATTNSEL_COMPILED=${compiled}")
  elseif(step STREQUAL "build")
    set(cmd "${CMAKE_COMMAND}" --build "${build}")
  else()
    set(cmd "${CMAKE_COMMAND}" --install "${build}" --prefix "${prefix}")
  endif()
  execute_process(COMMAND ${cmd} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "library-only ${MODE} ${step} failed (${status}):\n${out}\n${err}")
  endif()
endforeach()
foreach(file include/attnsel/attnsel.hpp include/attnsel/all.hpp include/attnsel/core/select.hpp
             include/attnsel/selector.hpp include/attnsel/generated/catalog_tables.hpp)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "library-only ${MODE} install lacks ${file}")
  endif()
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" "-DPREFIX=${prefix}" "-DCXX=${CXX}"
                        "-DSOURCE=${SOURCE_DIR}/tests/consumers/common/main.cpp" "-DWORK=${WORK}/pc-${MODE}"
                        -P "${SOURCE_DIR}/tests/consumers/pkg_config/check.cmake"
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the pkg-config consumer of the library-only ${MODE} install failed")
endif()
