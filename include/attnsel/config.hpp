// SPDX-License-Identifier: Apache-2.0
// Build-mode switches, the library version and the versioned inline namespace.
#pragma once

#define ATTNSEL_VERSION_MAJOR 0
#define ATTNSEL_VERSION_MINOR 1
#define ATTNSEL_VERSION_PATCH 0
#define ATTNSEL_VERSION_STRING "0.1.0"

// Header-only mode (the default) defines every function in the headers; compiled mode
// (ATTNSEL_COMPILED_LIB) compiles the impl/*_inl.hpp files once in src/, like spdlog.
#if defined(ATTNSEL_COMPILED_LIB)
#  undef ATTNSEL_HEADER_ONLY
#  define ATTNSEL_INLINE
#else
#  ifndef ATTNSEL_HEADER_ONLY
#    define ATTNSEL_HEADER_ONLY
#  endif
#  define ATTNSEL_INLINE inline
#endif

// Two plugins built against different attnsel versions can live in one process: each version's
// symbols sit in their own inline namespace (the fmt / nlohmann_json practice).
#define ATTNSEL_ABI_NAMESPACE v0_1
#define ATTNSEL_BEGIN_NAMESPACE \
  namespace attnsel {           \
  inline namespace ATTNSEL_ABI_NAMESPACE {
#define ATTNSEL_END_NAMESPACE \
  }                           \
  }
