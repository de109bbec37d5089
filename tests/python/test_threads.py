# SPDX-License-Identifier: Apache-2.0
# Concurrency: 8 Python threads selecting at once (the GIL is released in select) get identical answers.
import threading

import attnsel

QUERIES = [
    attnsel.Query(),
    attnsel.Query(head_size=64, features={"sinks"}),
    attnsel.Query(head_size=72),
    attnsel.Query(domain="encoder", attn_type="encoder_only", head_size=80),
    attnsel.Query(mode="mla", head_size=576, head_size_v=512, kv_cache_dtype="fp8"),
]
PLATFORMS = [
    attnsel.Platform.cuda(9, 0),
    attnsel.Platform.cuda(10, 0, components=["flashinfer"]),
    attnsel.Platform.rocm("gfx942", components=["aiter", "aiter_enabled"]),
    attnsel.Platform.cpu(),
]
OVERRIDES = [None, "TRITON_ATTN,auto", attnsel.OverrideSet(encoder="TORCH_SDPA")]


def answer(result):
    if isinstance(result, attnsel.SelectionError):
        return ("error", result.code, result.message)
    return (result.backend, result.variant, result.rank, result.overridden)


def one_pass(reg):
    return [answer(attnsel.select(reg, q, p, o, raise_on_error=False))
            for q in QUERIES for p in PLATFORMS for o in OVERRIDES]


def test_eight_threads_get_the_single_threaded_answers():
    reg = attnsel.reference_registry()
    expected = one_pass(reg)
    assert len({a[0] for a in expected}) > 3   # the table exercises several backends and errors
    results = [None] * 8
    start = threading.Barrier(8)

    def worker(i):
        start.wait()
        mine = []
        for _ in range(200):
            mine.append(one_pass(reg))
        results[i] = mine

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for per_thread in results:
        assert per_thread is not None and all(r == expected for r in per_thread)


def test_merging_while_other_threads_select_keeps_every_answer_valid():
    reg = attnsel.reference_registry()
    q, p = attnsel.Query(), attnsel.Platform.cuda(9, 0)
    expected = attnsel.select(reg, q, p).backend
    layer = attnsel.reference_registry()
    stop = threading.Event()
    seen = set()

    def selector():
        while not stop.is_set():
            seen.add(attnsel.select(reg, q, p).backend)

    threads = [threading.Thread(target=selector) for _ in range(4)]
    for t in threads:
        t.start()
    for _ in range(20):
        reg.merge(layer)   # the same backends and rules again: every swap keeps the answer
    stop.set()
    for t in threads:
        t.join()
    assert seen == {expected}
