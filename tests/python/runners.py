# SPDX-License-Identifier: Apache-2.0
"""Tuner runners for tests: times from a script instead of a GPU."""
from attnsel import tune


class ScriptedRunner(tune.Runner):
    """Times from fn(backend, call number, repetition); every timed backend recorded in order (`calls`);
    `default` is the backend torch would run. Every backend passes its output check."""

    def __init__(self, fn, default="CUDNN_ATTENTION"):
        self.fn, self.default, self.calls = fn, default, []

    def torch_default(self, w, c):
        return self.default

    def check(self, w, c, backend):
        return None

    def time(self, w, c, backend, reps):
        self.calls.append(backend)
        n = len(self.calls)
        return [self.fn(backend, n, i) for i in range(reps)]
