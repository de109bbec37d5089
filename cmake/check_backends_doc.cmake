# SPDX-License-Identifier: Apache-2.0
# Fails when docs/backends.md differs from what `attnsel matrix` generates (run by ctest).
execute_process(COMMAND "${CLI}" matrix --catalog vllm --format markdown OUTPUT_VARIABLE vllm RESULT_VARIABLE rc1)
execute_process(COMMAND "${CLI}" matrix --catalog torch_sdpa --format markdown OUTPUT_VARIABLE sdpa RESULT_VARIABLE rc2)
if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
  message(FATAL_ERROR "attnsel matrix failed (${rc1}, ${rc2})")
endif()
set(expected "${vllm}\n${sdpa}")
file(READ "${DOC}" actual)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "docs/backends.md is stale: regenerate it with `cmake --build <build> --target attnsel_docs`")
endif()
