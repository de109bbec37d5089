# SPDX-License-Identifier: Apache-2.0
# ATTNSEL_CLANG_TIDY: run clang-tidy (findings are errors) on the code attnsel ships while it compiles.
#
# Only the targets whose sources are the library, the CLI, the catalog codegen and the Python bindings
# get CXX_CLANG_TIDY; the tests do not (they would triple the cost and check nothing shipped). The
# compiled library's one translation unit, src/attnsel.cpp, includes every impl file, so the headers are
# checked once there (.clang-tidy's HeaderFilterRegex limits reports to include/attnsel, tools/attnsel and
# python/src). CI turns this on in the clang-asan preset's build, which compiles these targets anyway.
option(ATTNSEL_CLANG_TIDY "Run clang-tidy with findings as errors on the library, CLI, generators and Python sources"
       OFF)
if(ATTNSEL_CLANG_TIDY)
  find_program(ATTNSEL_CLANG_TIDY_EXE NAMES clang-tidy clang-tidy-14 REQUIRED)
  set(attnsel_tidy_command "${ATTNSEL_CLANG_TIDY_EXE}" "--warnings-as-errors=*")
  # The library once: the first compiled copy this build makes anyway (attnsel in compiled mode, the
  # suites' other-mode copy, the Python module's copy), else a copy of its own.
  set(attnsel_tidy_library "")
  foreach(target IN ITEMS attnsel attnsel_other_mode attnsel_python_core)
    if(TARGET ${target} AND NOT attnsel_tidy_library)
      get_target_property(type ${target} TYPE)
      if(NOT type STREQUAL "INTERFACE_LIBRARY")
        set(attnsel_tidy_library ${target})
      endif()
    endif()
  endforeach()
  if(NOT attnsel_tidy_library)
    attnsel_define_library(attnsel_tidy_core COMPILED)
    set(attnsel_tidy_library attnsel_tidy_core)
  endif()
  set(attnsel_tidy_checked "")
  foreach(target IN ITEMS ${attnsel_tidy_library} attnsel_cli attnsel_catalog_codegen attnsel_reasons_doc_gen attnsel_python)
    if(TARGET ${target})
      set_property(TARGET ${target} PROPERTY CXX_CLANG_TIDY ${attnsel_tidy_command})
      list(APPEND attnsel_tidy_checked ${target})
    endif()
  endforeach()
  # clang-tidy's cost is the whole library's syntax tree, once per translation unit it reads: the CLI and
  # the Python module, a dozen or more files each, are read as one unity file apiece (their sources are
  # written to be; HeaderFilterRegex names their folders, so findings in them still count). The unity
  # file's own `#include "x.cpp"` lines are what bugprone-suspicious-include is about: off for these two.
  foreach(target IN ITEMS attnsel_cli attnsel_python)
    if(TARGET ${target})
      set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0 CXX_CLANG_TIDY
                                                 "${attnsel_tidy_command};--checks=-bugprone-suspicious-include")
    endif()
  endforeach()
  message(STATUS "attnsel: clang-tidy checks ${attnsel_tidy_checked}")
endif()
