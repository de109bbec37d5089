#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A loop of N Python-level calls for callgrind: instructions per call, independent of the machine's load.
"""Usage: PYTHONPATH=<build>/python python3 bench/python_instructions.py N CASE
(CASE: select, selector, query, sdpa)

Instructions per call = (Ir(N2) - Ir(N1)) / (N2 - N1), each Ir from
`valgrind --tool=callgrind --callgrind-out-file=/dev/null python3 bench/python_instructions.py N CASE`
(docs/performance.md, "Python bindings"). `sdpa` is what attnsel.torch.select_sdpa does after reading the
tensors: a keyword Query, then select() on the torch_sdpa registry and a cached Platform.
"""
import sys

import attnsel

n, case = int(sys.argv[1]), sys.argv[2]
reg, sdpa = attnsel.reference_registry(), attnsel.torch_sdpa_registry()
hopper, q, grad = attnsel.Platform.cuda(9, 0), attnsel.Query(), {"requires_grad"}
select, Query = attnsel.select, attnsel.Query
if case == "select":
    for _ in range(n):
        select(reg, q, hopper)
elif case == "selector":  # the bound selector, a cache hit after the first call
    bound = attnsel.Selector(reg, hopper).select
    for _ in range(n):
        bound(q)
elif case == "query":
    for _ in range(n):
        Query(head_size=64, head_size_v=64, dtype="float16", num_heads=16, features=grad)
elif case == "sdpa":
    for _ in range(n):
        select(sdpa, Query(head_size=64, head_size_v=64, dtype="float16", num_heads=16, features=grad), hopper)
else:
    sys.exit(f"unknown case {case!r}")
