// SPDX-License-Identifier: Apache-2.0
// Link test, unit a: includes every public header so duplicate definitions fail to link.
#include <attnsel/all.hpp>
#include <attnsel/core/shared_registry.hpp>
#include <attnsel/detect/detect.hpp>  // opt-in: not in the umbrella

#include "catch.hpp"

namespace {
int link_unit_a() { return static_cast<int>(attnsel::reference_registry().size()); }
}  // namespace

TEST_CASE("link unit a sees the reference registry", "[link]") { CHECK(link_unit_a() > 0); }
