#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A loop of N Python-level calls for callgrind: instructions per call, independent of the machine's load.
"""Usage: PYTHONPATH=<build>/python python3 bench/python_instructions.py N CASE
(CASE: select, selector, selector_fresh, query, sdpa, name, empty)

Instructions per call = (Ir(N2) - Ir(N1)) / (N2 - N1), each Ir from
`valgrind --tool=callgrind --callgrind-out-file=/dev/null python3 bench/python_instructions.py N CASE`
(docs/performance.md, "Python bindings"). `sdpa` is what attnsel.torch.select_sdpa does after reading the
tensors: a keyword Query, then select() on the torch_sdpa registry and a cached Platform.
`selector_fresh` builds an equal Query afresh for every Selector.select (an engine asking per layer), and
prints the cache's hit ratio on stderr; `name` reads the winner's name from a Selection; `empty` is an
empty pybind11 method call (len of a Registry), the unit the others are compared with.
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
elif case == "selector_fresh":
    selector = attnsel.Selector(reg, hopper)
    bound = selector.select
    for _ in range(n):
        bound(Query(head_size=64, dtype="bfloat16", num_heads=16, num_kv_heads=4, features={"sinks"}))
    stats = selector.stats
    print(f"hits {stats['hits']} of {n} ({100 * stats['hits'] / max(n, 1):.2f} %)", file=sys.stderr)
elif case == "name":
    chosen = select(reg, q, hopper)
    for _ in range(n):
        chosen.backend
elif case == "empty":
    for _ in range(n):
        len(reg)
elif case == "query":
    for _ in range(n):
        Query(head_size=64, head_size_v=64, dtype="float16", num_heads=16, features=grad)
elif case == "sdpa":
    for _ in range(n):
        select(sdpa, Query(head_size=64, head_size_v=64, dtype="float16", num_heads=16, features=grad), hopper)
else:
    sys.exit(f"unknown case {case!r}")
