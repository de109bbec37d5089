# SPDX-License-Identifier: Apache-2.0
# The C++ suite's table cases (vLLM's and PyTorch's own tests), read from tests/data and run from Python.
import pytest

from cases import load_cases, run_case
from conftest import SOURCE_DIR

VLLM = load_cases(SOURCE_DIR, "vllm_cases.json")
TORCH_SDPA = load_cases(SOURCE_DIR, "torch_sdpa_cases.json")


def test_the_case_files_are_not_empty():
    assert len(VLLM) > 10 and len(TORCH_SDPA) > 10


@pytest.mark.parametrize("case", VLLM, ids=[c["name"] for c in VLLM])
def test_vllm_case(case):
    run_case(case)


@pytest.mark.parametrize("case", TORCH_SDPA, ids=[c["name"] for c in TORCH_SDPA])
def test_torch_sdpa_case(case):
    run_case(case)


SGLANG = load_cases(SOURCE_DIR, "sglang_cases.json")


@pytest.mark.parametrize("case", SGLANG, ids=[c["name"] for c in SGLANG])
def test_sglang_case(case):
    run_case(case)
