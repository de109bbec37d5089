# SPDX-License-Identifier: Apache-2.0
# Fails when a translation unit including HEADER preprocesses to more than BUDGET lines or pulls in a
# banned header. Run as: cmake -DCXX=... -DHEADER=attnsel/core.hpp -DBUDGET=40000 -DINCLUDES="a|b"
#   -DBANNED="nlohmann/json.hpp|fmt/format.h|filesystem|fstream" -DWORK=dir -P check_header_budget.cmake
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
string(REPLACE "|" ";" BANNED "${BANNED}")
set(flags "")
foreach(dir IN LISTS INCLUDES)
  list(APPEND flags "-I${dir}")
endforeach()
file(MAKE_DIRECTORY "${WORK}")
string(MAKE_C_IDENTIFIER "${HEADER}" unit)
file(WRITE "${WORK}/${unit}.cpp" "#include <${HEADER}>\n")
# -P drops line markers and blank lines: the count is lines of code the compiler reads.
execute_process(COMMAND "${CXX}" -std=c++17 ${flags} -E -P "${WORK}/${unit}.cpp"
                OUTPUT_FILE "${WORK}/${unit}.ii" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "preprocessing <${HEADER}> failed:\n${err}")
endif()
file(READ "${WORK}/${unit}.ii" text)
string(REGEX MATCHALL "\n" newlines "${text}")
list(LENGTH newlines count)
message(STATUS "<${HEADER}> preprocesses to ${count} lines (budget ${BUDGET})")
# A second pass keeps the line markers, which name every file the preprocessor entered.
execute_process(COMMAND "${CXX}" -std=c++17 ${flags} -E "${WORK}/${unit}.cpp"
                OUTPUT_FILE "${WORK}/${unit}.marked.ii" RESULT_VARIABLE rc)
foreach(banned IN LISTS BANNED)
  file(STRINGS "${WORK}/${unit}.marked.ii" markers REGEX "^# [0-9]+ \"[^\"]*/${banned}\"")
  if(markers)
    message(FATAL_ERROR "<${HEADER}> includes ${banned}, which it must not")
  endif()
endforeach()
if(count GREATER BUDGET)
  message(FATAL_ERROR "<${HEADER}> preprocesses to ${count} lines, over its budget of ${BUDGET}")
endif()
