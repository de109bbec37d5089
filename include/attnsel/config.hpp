// SPDX-License-Identifier: Apache-2.0
// Build-mode switches, the library version and the versioned inline namespace.
#pragma once

// The version is written here and nowhere else: CMake's project() reads these three lines, and the
// version string and the ABI namespace below are derived from them.
#define ATTNSEL_VERSION_MAJOR 0
#define ATTNSEL_VERSION_MINOR 1
#define ATTNSEL_VERSION_PATCH 0

#define ATTNSEL_STRINGIFY_(x) #x
#define ATTNSEL_STRINGIFY(x) ATTNSEL_STRINGIFY_(x)
#define ATTNSEL_VERSION_STRING             \
  ATTNSEL_STRINGIFY(ATTNSEL_VERSION_MAJOR) \
  "." ATTNSEL_STRINGIFY(ATTNSEL_VERSION_MINOR) "." ATTNSEL_STRINGIFY(ATTNSEL_VERSION_PATCH)

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
// `v<major>_<minor>`: a patch release keeps the ABI, a minor release (0.x) may break it.
#define ATTNSEL_ABI_NAME_(major, minor) v##major##_##minor
#define ATTNSEL_ABI_NAME(major, minor) ATTNSEL_ABI_NAME_(major, minor)
#define ATTNSEL_ABI_NAMESPACE ATTNSEL_ABI_NAME(ATTNSEL_VERSION_MAJOR, ATTNSEL_VERSION_MINOR)
// Shared-library builds of the compiled mode hide every symbol (-fvisibility=hidden) except attnsel's
// own: the versioned namespace carries default visibility, so no declaration needs a per-symbol macro.
// (MSVC has no namespace-level export: build a DLL with WINDOWS_EXPORT_ALL_SYMBOLS.)
#if defined(__GNUC__) || defined(__clang__)
#  define ATTNSEL_VISIBLE __attribute__((visibility("default")))
#else
#  define ATTNSEL_VISIBLE
#endif

#define ATTNSEL_BEGIN_NAMESPACE \
  namespace attnsel {           \
  inline namespace ATTNSEL_ABI_NAMESPACE ATTNSEL_VISIBLE {
#define ATTNSEL_END_NAMESPACE \
  }                           \
  }
