// SPDX-License-Identifier: Apache-2.0
// Inlining hints for the few functions every selection runs (GCC and Clang; no-ops elsewhere).
#pragma once

// ATTNSEL_FLATTEN: inline every call made inside this function, so a walk over small checks compiles
// to one straight body. ATTNSEL_GATE: an inline function that is always inlined into its caller.
// ATTNSEL_COLD: a slow path kept out of line, so the hot caller saves no registers for it.
// ATTNSEL_NOINLINE: kept out of line (a path that is not cold but would cost the hot caller registers).
#if defined(__GNUC__) || defined(__clang__)
#  define ATTNSEL_FLATTEN __attribute__((flatten))
#  define ATTNSEL_GATE inline __attribute__((always_inline))
#  define ATTNSEL_COLD __attribute__((noinline, cold))
#  define ATTNSEL_NOINLINE __attribute__((noinline))
#else
#  define ATTNSEL_FLATTEN
#  define ATTNSEL_GATE inline
#  define ATTNSEL_COLD
#  define ATTNSEL_NOINLINE
#endif
