// SPDX-License-Identifier: Apache-2.0
// Link test, unit b: includes every public header so duplicate definitions fail to link.
#include <attnsel/all.hpp>
#include <attnsel/core/shared_registry.hpp>
#include <attnsel/detect/detect.hpp>  // opt-in: not in the umbrella

#include "catch.hpp"

namespace {
int link_unit_b() { return static_cast<int>(attnsel::reference_registry().size()); }
}  // namespace

TEST_CASE("link unit b sees the reference registry", "[link]") { CHECK(link_unit_b() > 0); }
