# SPDX-License-Identifier: Apache-2.0
# Finds the Python interpreter (Debian's /usr/bin/python3 first) and pybind11 for the `attnsel` module.

# attnsel_find_python(<found_var> [REQUIRED]): sets <found_var> to ON when an interpreter with its
# development headers and pybind11's CMake package are present. Another interpreter is chosen with
# -DPython3_EXECUTABLE=/path/to/python3.
macro(attnsel_find_python found_var)
  # On these machines `python3` on PATH may be another build without Debian's packages (pytest,
  # setuptools): pin the system interpreter unless the user named one.
  if(NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
    set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "Python interpreter the attnsel module is built for")
  endif()
  set(_attnsel_py_mode QUIET)
  if("${ARGN}" STREQUAL "REQUIRED")
    set(_attnsel_py_mode REQUIRED)
  endif()
  if(NOT Python3_FOUND)
    find_package(Python3 3.8 COMPONENTS Interpreter Development.Module ${_attnsel_py_mode})
  endif()
  if(Python3_FOUND AND NOT pybind11_FOUND)
    # Python3_FOUND set first makes pybind11's config use FindPython (its "new" mode) with this interpreter.
    find_package(pybind11 CONFIG ${_attnsel_py_mode})  # no version: 2.x and 3.x both work
  endif()
  if(Python3_FOUND AND pybind11_FOUND)
    set(${found_var} ON)
  else()
    set(${found_var} OFF)
  endif()
endmacro()
