# SPDX-License-Identifier: Apache-2.0
# Run by `cmake --install` (component python), not at configure time: sets ATTNSEL_PYTHON_DIR, the folder
# relative to the install prefix where the target interpreter imports packages from, for the prefix
# given now (`--prefix` included). In: ATTNSEL_PYTHON_EXECUTABLE (the interpreter the module was built
# for), ATTNSEL_PYTHON_INSTALL_DIR (a fixed folder relative to the prefix, or empty).
#
# The interpreter asked is the prefix's own when the prefix is a venv (<prefix>/pyvenv.cfg), else the
# build's. It answers with the import folder under the prefix that has the fewest path components
# (sysconfig's platlib, then site.getsitepackages(), on ties: Debian's /usr/local gives
# lib/python3.X/dist-packages, /usr gives lib/python3/dist-packages), and for a prefix it does not
# import from, its venv (or posix_prefix) scheme with base = platbase = the prefix:
# lib/python3.X/site-packages, to be put on PYTHONPATH.
if(ATTNSEL_PYTHON_INSTALL_DIR)
  if(IS_ABSOLUTE "${ATTNSEL_PYTHON_INSTALL_DIR}")
    message(FATAL_ERROR "ATTNSEL_PYTHON_INSTALL_DIR must be relative to the install prefix, not ${ATTNSEL_PYTHON_INSTALL_DIR}")
  endif()
  set(ATTNSEL_PYTHON_DIR "${ATTNSEL_PYTHON_INSTALL_DIR}")
  return()
endif()
set(_attnsel_py "${ATTNSEL_PYTHON_EXECUTABLE}")
foreach(_attnsel_candidate bin/python3 bin/python Scripts/python.exe)
  if(EXISTS "${CMAKE_INSTALL_PREFIX}/pyvenv.cfg" AND EXISTS "${CMAKE_INSTALL_PREFIX}/${_attnsel_candidate}")
    set(_attnsel_py "${CMAKE_INSTALL_PREFIX}/${_attnsel_candidate}")
    break()
  endif()
endforeach()
set(_attnsel_code [=[
import os, site, sys, sysconfig
prefix = os.path.realpath(sys.argv[1])
def under(path):
    rel = os.path.relpath(os.path.realpath(path), prefix)
    return None if rel == os.pardir or rel.startswith(os.pardir + os.sep) or os.path.isabs(rel) else rel
found = [sysconfig.get_path("platlib")] + list(getattr(site, "getsitepackages", lambda: [])())
found = sorted(filter(None, map(under, found)), key=lambda r: r.count(os.sep))  # stable: platlib wins ties
if found:
    print(found[0])
else:
    scheme = "venv" if "venv" in sysconfig.get_scheme_names() else ("nt" if os.name == "nt" else "posix_prefix")
    print(os.path.relpath(sysconfig.get_path("platlib", scheme, vars={"base": prefix, "platbase": prefix}), prefix))
print("%d.%d" % sys.version_info[:2])
]=])
execute_process(COMMAND "${_attnsel_py}" -c "${_attnsel_code}" "${CMAKE_INSTALL_PREFIX}"
                OUTPUT_VARIABLE _attnsel_out RESULT_VARIABLE _attnsel_rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _attnsel_rc EQUAL 0)
  message(FATAL_ERROR "attnsel: ${_attnsel_py} could not say where packages go under ${CMAKE_INSTALL_PREFIX}; "
                      "set -DATTNSEL_PYTHON_INSTALL_DIR=<folder relative to the prefix>")
endif()
string(REPLACE "\n" ";" _attnsel_out "${_attnsel_out}")
list(GET _attnsel_out 0 ATTNSEL_PYTHON_DIR)
list(GET _attnsel_out 1 _attnsel_version)
file(TO_CMAKE_PATH "${ATTNSEL_PYTHON_DIR}" ATTNSEL_PYTHON_DIR)
if(NOT _attnsel_version STREQUAL ATTNSEL_PYTHON_VERSION)
  message(WARNING "attnsel: the module is built for Python ${ATTNSEL_PYTHON_VERSION}; ${_attnsel_py} is "
                  "Python ${_attnsel_version}, which will not import it (configure with -DPython3_EXECUTABLE=${_attnsel_py})")
endif()
message(STATUS "attnsel Python package: ${CMAKE_INSTALL_PREFIX}/${ATTNSEL_PYTHON_DIR} (asked ${_attnsel_py})")
