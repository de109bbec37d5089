// SPDX-License-Identifier: Apache-2.0
// Registry rules: names, duplicates, replacement, removal, policy resolution, strong guarantee.
#include "catch.hpp"
#include "fixtures.hpp"

using namespace attnsel;

TEST_CASE("look-up is case-insensitive and accepts aliases", "[registry]") {
  const auto reg = fixtures::small_registry();
  REQUIRE(reg.find("fast"));
  CHECK(reg.find("fast")->name == "FAST");
  CHECK(reg.find("Fast_Attn")->name == "FAST");
  CHECK(reg.index_of("SLOW") == 2);
  CHECK_FALSE(reg.find("FASTER"));
  CHECK_FALSE(reg.find(""));
  CHECK_FALSE(reg.find(std::string(100, 'A')));
}

TEST_CASE("duplicate names and aliases are refused and leave the registry unchanged", "[registry]") {
  auto reg = fixtures::small_registry();
  const auto before = reg;
  backend_descriptor dup;
  dup.name = "FAST";
  CHECK_THROWS_AS(reg.add(dup), registry_error);
  backend_descriptor alias_clash;
  alias_clash.name = "OTHER";
  alias_clash.aliases = {"FAST_ATTN"};
  CHECK_THROWS_WITH(reg.add(alias_clash), ATTNSEL_CONTAINS("FAST_ATTN"));
  CHECK(reg == before);
}

TEST_CASE("malformed descriptors are refused with the reason", "[registry]") {
  registry reg;
  backend_descriptor b;
  b.name = "lower_case";
  CHECK_THROWS_WITH(reg.add(b), ATTNSEL_CONTAINS("UPPER_SNAKE"));
  b.name = "NO_DOMAIN";
  b.domains = {};
  CHECK_THROWS_WITH(reg.add(b), ATTNSEL_CONTAINS("serves no domain"));
  b.domains = {attention_domain::decoder};
  b.caps.block_size_multiples = {0};
  CHECK_THROWS_WITH(reg.add(b), ATTNSEL_CONTAINS("block_size_multiples holds 0, outside [1, "));
  b.caps.block_size_multiples = {};
  // Each capability field is checked through the list: a count against its row's bound, per-dtype and
  // call-rule head sizes like the variant's own, a call rule's component by its name.
  b.caps.preferred_block_size = limits::block_size + 1;
  CHECK_THROWS_WITH(reg.add(b), ATTNSEL_CONTAINS("preferred_block_size " + std::to_string(limits::block_size + 1) +
                                                 " is above " + std::to_string(limits::block_size)));
  b.caps.preferred_block_size = 0;
  b.caps.head_sizes_by_dtype = {dtype_head_sizes{data_type::float16, head_size_spec::range(0, 64)}};
  CHECK_THROWS_WITH(reg.add(b), ATTNSEL_CONTAINS("head_sizes_by_dtype float16 range"));
  b.caps.head_sizes_by_dtype = {};
  call_rule rule;
  head_size_spec inverted;  // range() refuses min > max itself; a descriptor built field by field can hold it
  inverted.form = head_size_spec::kind::range;
  inverted.min = 64;
  inverted.max = 32;
  rule.require.head_sizes = inverted;
  b.caps.call_rules = {rule};
  CHECK_THROWS_WITH(reg.add(b), ATTNSEL_CONTAINS("call_rules require head_sizes range is empty"));
  rule.require.head_sizes.reset();
  rule.when.components = {component_condition{}};
  b.caps.call_rules = {rule};
  CHECK_THROWS_WITH(reg.add(b), ATTNSEL_CONTAINS("call_rules when names a component with an empty name"));
  b.caps.call_rules = {};
  b.caps.features.insert("Bad Feature");
  CHECK_THROWS_AS(reg.add(b), registry_error);
  CHECK(reg.empty());
}

TEST_CASE("registration order is the automatic order when no rule matches", "[registry]") {
  auto reg = fixtures::small_registry();
  query q;
  // No rule for XPU: registration order, FAST and MEDIUM do not run there, SLOW does.
  const auto r = select(reg, q, platform::xpu());
  REQUIRE(r);
  CHECK(r->name() == "SLOW");
  CHECK(r->rank == 3);
}

TEST_CASE("replace keeps position and policy; add_or_replace adds when absent", "[registry]") {
  auto reg = fixtures::small_registry();
  backend_descriptor fast = *reg.find("FAST");
  fast.caps.head_sizes = head_size_spec::set({72});
  reg.replace(fast);
  CHECK(reg.index_of("FAST") == 0);
  query q;
  q.head_size = 72;
  const auto r = select(reg, q, fixtures::hopper_with_flashinfer());
  REQUIRE(r);
  CHECK(r->name() == "FAST");
  backend_descriptor fresh;
  fresh.name = "FRESH";
  CHECK_THROWS_AS(reg.replace(fresh), registry_error);
  reg.add_or_replace(fresh);
  CHECK(reg.index_of("FRESH") == 5);
}

TEST_CASE("a backend named by the policy cannot be removed; others can", "[registry]") {
  auto reg = fixtures::small_registry();
  CHECK_THROWS_WITH(reg.remove("FAST"), ATTNSEL_CONTAINS("unknown backend FAST"));
  CHECK(reg.find("FAST"));
  backend_descriptor extra;
  extra.name = "EXTRA";
  reg.add(extra);
  reg.remove("extra");
  CHECK_FALSE(reg.find("EXTRA"));
  CHECK_THROWS_AS(reg.remove("NOPE"), registry_error);
}

TEST_CASE("a policy naming an unknown backend or one twice is refused", "[registry]") {
  auto reg = fixtures::small_registry();
  const auto before = reg;
  priority_policy bad;
  policy_rule r;
  r.order = {{"GHOST", {}, {}, {}}};
  bad.rules = {r};
  CHECK_THROWS_WITH(reg.set_policy(bad), ATTNSEL_CONTAINS("unknown backend GHOST"));
  r.order = {{"FAST", {}, {}, {}}, {"fast_attn", {}, {}, {}}};
  bad.rules = {r};
  CHECK_THROWS_WITH(reg.set_policy(bad), ATTNSEL_CONTAINS("twice"));
  CHECK(reg == before);
}

TEST_CASE("from_validated indexes without re-validating but keeps the index invariants", "[registry]") {
  const auto small = fixtures::small_registry();
  const auto built =
      registry::from_validated(detail::validated_catalog{}, small.backends(), small.policy(), small.implications());
  CHECK(built == small);
  CHECK(built.find("fast_attn") == &built.backends()[0]);
  for (std::size_t r = 0; r < small.policy().rules.size(); ++r)
    for (std::size_t k = 0; k < small.policy().rules[r].order.size(); ++k)
      CHECK(built.resolved(r, k) == small.resolved(r, k));
  // Names and policy entries are still resolved, so a broken table cannot build a broken registry.
  auto twice = small.backends();
  twice.push_back(twice.front());
  CHECK_THROWS_WITH(registry::from_validated(detail::validated_catalog{}, twice, small.policy(), {}),
                    ATTNSEL_CONTAINS("is used by both FAST and FAST"));
  priority_policy ghost;
  policy_rule r;
  r.order = {{"GHOST", {}, {}, {}}};
  ghost.rules = {r};
  CHECK_THROWS_WITH(registry::from_validated(detail::validated_catalog{}, small.backends(), ghost, {}),
                    ATTNSEL_CONTAINS("unknown backend GHOST"));
}

TEST_CASE("merge adds and replaces backends and puts overlay rules first", "[registry]") {
  auto reg = fixtures::small_registry();
  registry overlay;
  backend_descriptor mine;
  mine.name = "MINE";
  mine.caps.platforms = {fixtures::cuda_from(9, 0)};
  overlay.add(mine);
  backend_descriptor slow = *reg.find("SLOW");
  slow.description = "replaced";
  overlay.add(slow);
  policy_rule first;
  first.domain = attention_domain::decoder;
  first.vendor = device_vendor::cuda;
  first.order = {{"MINE", {}, {}, {}}, {"SLOW", {}, {}, {}}};
  priority_policy pol;
  pol.rules = {first};
  overlay.set_policy(pol);
  reg.merge(overlay);
  CHECK(reg.find("SLOW")->description == "replaced");
  CHECK(reg.index_of("SLOW") == 2);
  const auto r = select(reg, query{}, fixtures::hopper_with_flashinfer());
  REQUIRE(r);
  CHECK(r->name() == "MINE");
  CHECK(reg.policy().rules.size() == 5);
}
