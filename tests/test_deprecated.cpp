// SPDX-License-Identifier: Apache-2.0
// The names deprecated in 0.2 still work for one minor release and say what their replacements say.
#include "catch.hpp"

#include <attnsel/all.hpp>

#include <type_traits>

// This file is the one place that calls the deprecated names on purpose.
#if defined(__GNUC__) || defined(__clang__)
#  pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

using namespace attnsel;

TEST_CASE("attn_domain is attention_domain under its 0.1 name", "[deprecated]") {
  STATIC_REQUIRE(std::is_same_v<attn_domain, attention_domain>);
  CHECK(to_string(attn_domain::encoder) == "encoder");
}

TEST_CASE("the deprecated describe(), str() and summary() forward to to_string", "[deprecated]") {
  const auto p = platform::cuda(9, 0);
  CHECK(to_string(p) == "cuda 9.0");
  CHECK(p.describe() == to_string(p));

  query q;
  q.head_size = 128;
  CHECK(summary(q) == to_string(q));
  CHECK(to_string(q).rfind("decoder attention (head_size=128", 0) == 0);

  policy_rule rule;
  rule.vendor = device_vendor::rocm;
  rule.families = {gfx_family::gfx9};
  CHECK(to_string(rule) == "decoder rocm gfx9");
  CHECK(rule.describe() == to_string(rule));
  CHECK(to_string(static_cast<const arch_filter&>(rule)) == "gfx9");
  CHECK(rule.arch_filter::describe() == "gfx9");

  platform_constraint pc;
  pc.min_capability = cuda_capability{8, 0};
  CHECK(to_string(pc) == "cuda [8.0, any]");
  CHECK(pc.describe() == to_string(pc));

  const auto sizes = head_size_spec::set({64, 128});
  CHECK(to_string(sizes) == "{64, 128}");
  CHECK(sizes.describe() == to_string(sizes));

  const auto version = parse_component_version("9.19.0");
  REQUIRE(version);
  CHECK(to_string(*version) == "9.19.0");
  CHECK(version->str() == to_string(*version));
}
