# SPDX-License-Identifier: Apache-2.0
# A consumer built without CMake: `c++ -std=c++17 main.cpp $(pkg-config --cflags --libs attnsel)` against
# an installed prefix, then run. In: PREFIX (the install prefix), CXX, SOURCE (the program), WORK.
cmake_minimum_required(VERSION 3.16)  # quoted if() arguments are strings (CMP0054)
foreach(var PREFIX CXX SOURCE WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "pkg_config/check.cmake needs -D${var}=...")
  endif()
endforeach()
file(GLOB pc_dirs "${PREFIX}/lib*/pkgconfig" "${PREFIX}/lib/*/pkgconfig")
if(NOT pc_dirs)
  message(FATAL_ERROR "no pkgconfig folder under ${PREFIX}: was attnsel.pc installed?")
endif()
list(JOIN pc_dirs ":" pc_path)
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "PKG_CONFIG_PATH=${pc_path}" pkg-config --cflags --libs attnsel
                OUTPUT_VARIABLE flags ERROR_VARIABLE pc_error RESULT_VARIABLE pc_status OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT pc_status EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs attnsel failed: ${pc_error}")
endif()
message(STATUS "pkg-config --cflags --libs attnsel: ${flags}")
separate_arguments(flag_list UNIX_COMMAND "${flags}")
file(MAKE_DIRECTORY "${WORK}")
# The flags go after the source, as a Makefile's $(LDLIBS) would: static libraries must follow their users.
execute_process(COMMAND "${CXX}" -std=c++17 -g0 "${SOURCE}" ${flag_list} -o "${WORK}/consumer"
                RESULT_VARIABLE cc_status ERROR_VARIABLE cc_error)
if(NOT cc_status EQUAL 0)
  message(FATAL_ERROR "compiling with pkg-config's flags failed:\n${cc_error}")
endif()
execute_process(COMMAND "${WORK}/consumer" OUTPUT_VARIABLE out RESULT_VARIABLE run_status)
if(NOT run_status EQUAL 0 OR NOT out STREQUAL "ROCM_ATTN\n")
  message(FATAL_ERROR "the pkg-config consumer printed '${out}' (status ${run_status}), expected ROCM_ATTN")
endif()
message(STATUS "pkg-config consumer: ${out}")
