// SPDX-License-Identifier: Apache-2.0
// Inlining hints for the few functions every selection runs (GCC and Clang; no-ops elsewhere).
// IWYU pragma: private
#pragma once

// ATTNSEL_INTERNAL_FLATTEN: inline every call made inside this function, so a walk over small checks compiles
// to one straight body. ATTNSEL_INTERNAL_ALWAYS_INLINE: an inline function that is always inlined into its caller.
// ATTNSEL_INTERNAL_COLD: a slow path kept out of line, so the hot caller saves no registers for it.
// ATTNSEL_INTERNAL_NOINLINE: kept out of line (a path that is not cold but would cost the hot caller registers).
#if defined(__GNUC__) || defined(__clang__)
#  define ATTNSEL_INTERNAL_FLATTEN __attribute__((flatten))
#  define ATTNSEL_INTERNAL_ALWAYS_INLINE inline __attribute__((always_inline))
#  define ATTNSEL_INTERNAL_COLD __attribute__((noinline, cold))
#  define ATTNSEL_INTERNAL_NOINLINE __attribute__((noinline))
#else
#  define ATTNSEL_INTERNAL_FLATTEN
#  define ATTNSEL_INTERNAL_ALWAYS_INLINE inline
#  define ATTNSEL_INTERNAL_COLD
#  define ATTNSEL_INTERNAL_NOINLINE
#endif
