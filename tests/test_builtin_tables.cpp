// SPDX-License-Identifier: Apache-2.0
// The compiled-in catalog tables build exactly the registries their JSON describes.
#include "catch.hpp"

#include <attnsel/all.hpp>
#include <attnsel/generated/catalog_tables.hpp>  // the tables themselves (also in compiled mode)

#include <stdexcept>
#include <string>
#include <vector>

using namespace attnsel;

TEST_CASE("every compiled-in catalog equals the one parsed from its JSON", "[reference][tables]") {
  for (const auto name : builtin_catalog_names) {
    INFO(name);
    const auto parsed = builtin_catalog(name).registry;
    const auto compiled = builtin_registry(name);
    CHECK(compiled.size() == parsed.size());
    CHECK(compiled.policy().rules.size() == parsed.policy().rules.size());
    CHECK(compiled == parsed);
    // Equal data selects equally, down to the resolved policy indices.
    for (std::size_t r = 0; r < parsed.policy().rules.size(); ++r)
      for (std::size_t k = 0; k < parsed.policy().rules[r].order.size(); ++k)
        CHECK(compiled.resolved(r, k) == parsed.resolved(r, k));
  }
  CHECK(reference_registry() == builtin_catalog("vllm").registry);
  CHECK(torch_sdpa_registry() == builtin_catalog("torch_sdpa").registry);
}

TEST_CASE("the name index and resolved policy the generator computed equal what reindex builds",
          "[reference][tables]") {
  for (const auto name : builtin_catalog_names) {
    INFO(name);
    const auto compiled = builtin_registry(name);
    // The same parts indexed by reindex, and the registry parsed from the JSON (reindexed as it loads).
    const auto reindexed = registry::from_validated(detail::validated_catalog{}, compiled.backends(), compiled.policy(),
                                                    compiled.implications());
    const auto parsed = builtin_catalog(name).registry;
    for (const registry* other : {&reindexed, &parsed}) {
      const auto names = compiled.all_names();
      CHECK(names == other->all_names());
      for (const auto& n : names) {
        INFO(n);
        REQUIRE(compiled.index_of(n).has_value());
        CHECK(compiled.index_of(n) == other->index_of(n));
        CHECK(compiled.find(n) - compiled.backends().data() == other->find(n) - other->backends().data());
      }
      for (const auto& b : compiled.backends()) {
        for (const auto& n : b.aliases) CHECK(compiled.find(n) == &b);
        CHECK(compiled.find(b.name) == &b);
      }
      for (std::size_t r = 0; r < compiled.policy().rules.size(); ++r)
        for (std::size_t k = 0; k < compiled.policy().rules[r].order.size(); ++k)
          CHECK(compiled.resolved(r, k) == other->resolved(r, k));
      for (const auto d : enum_values<attention_domain>()) CHECK(compiled.serves(d) == other->serves(d));
    }
  }
}

TEST_CASE("equal feature lists of a compiled-in catalog share one stored list", "[reference][tables]") {
  // The generator defines equal lists once and numbers them, and the builder interns them: one allocation per
  // distinct list, as the JSON loader shares inherited ones.
  for (const auto name : builtin_catalog_names) {
    INFO(name);
    const auto reg = builtin_registry(name);
    std::vector<const feature_set*> sets;
    for (const auto& b : reg.backends()) {
      sets.push_back(&b.caps.features);
      for (const auto& v : b.variants) sets.push_back(&v.features);
    }
    for (const auto& r : reg.policy().rules) {
      sets.push_back(&r.features);
      sets.push_back(&r.without_features);
      for (const auto& e : r.order) sets.push_back(&e.unless_features);
    }
    std::size_t shared_pairs = 0;
    for (std::size_t i = 0; i < sets.size(); ++i) {
      for (std::size_t j = i + 1; j < sets.size(); ++j) {
        if (sets[i]->empty() || *sets[i] != *sets[j]) continue;
        CHECK(sets[i]->shares_storage_with(*sets[j]));
        ++shared_pairs;
      }
    }
    if (name == "vllm@0.33.0") CHECK(shared_pairs > 0);
  }
}

TEST_CASE("builtin_catalog_names lists the compiled-in catalogs in build order, and the aliases",
          "[reference][tables]") {
  std::vector<std::string_view> files;  // the names that are not aliases: one compiled-in table each
  for (auto name : builtin_catalog_names) {
    CHECK_FALSE(builtin_catalog_json(name).empty());
    if (builtin_catalog_target(name) == name) files.push_back(name);
  }
  REQUIRE(detail::tables::builtin.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) CHECK(detail::tables::builtin[i]->name == files[i]);
  // An alias stands for a versioned catalog: the same text, the same registry, the target's name.
  for (const auto& a : builtin_catalog_aliases) {
    INFO(a.name);
    CHECK(is_builtin_catalog(a.target));
    CHECK(builtin_catalog_target(a.target) == a.target);
    CHECK(builtin_catalog_json(a.name) == builtin_catalog_json(a.target));
    CHECK(builtin_catalog(a.name).info.name == a.target);
    CHECK(builtin_registry(a.name).backends() == builtin_registry(a.target).backends());
  }
  CHECK(reference_registry().backends() == builtin_registry("vllm@0.33.0").backends());
  CHECK(builtin_catalog_json("no_such_catalog").empty());
  CHECK_THROWS_AS(builtin_registry("no_such_catalog"), std::invalid_argument);
}
