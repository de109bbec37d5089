// SPDX-License-Identifier: Apache-2.0
// Includes Catch2 v2 (Debian 12) or v3, whichever the build found.
#pragma once
#ifdef ATTNSEL_CATCH2_V3
#  include <catch2/catch_all.hpp>
#else
#  include <catch2/catch.hpp>
#endif

// Substring matcher under one name for both Catch2 majors.
#ifdef ATTNSEL_CATCH2_V3
#  define ATTNSEL_CONTAINS(text) Catch::Matchers::ContainsSubstring(text)
#else
#  define ATTNSEL_CONTAINS(text) Catch::Matchers::Contains(text)
#endif
