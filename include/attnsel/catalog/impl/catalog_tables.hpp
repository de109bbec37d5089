// SPDX-License-Identifier: Apache-2.0
// The shape of a compiled-in catalog (constant tables written by tools/codegen) and the registry built from it.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/descriptor.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/policy.hpp>
#include <attnsel/core/registry.hpp>

#include <attnsel/core/impl/hot.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail::tables {

// A constant array and its length; {nullptr, 0} when empty.
template <class T>
struct list {
  const T* data = nullptr;
  std::size_t size = 0;
  [[nodiscard]] constexpr const T* begin() const noexcept { return data; }
  [[nodiscard]] constexpr const T* end() const noexcept { return data + size; }
};

// The arch filter shared by platform constraints and policy rules.
struct arch_filter {
  std::optional<cuda_capability> min;
  std::optional<cuda_capability> max;
  list<gfx_arch> archs;
  list<gfx_family> families;
};

struct constraint {
  device_vendor vendor = device_vendor::cuda;
  arch_filter arch;
};

struct head_sizes {
  head_size_spec::kind form = head_size_spec::kind::any;
  list<std::uint32_t> values;
  std::uint32_t min = 1;
  std::uint32_t max = 0;
  std::uint32_t multiple_of = 1;
};

struct requirement {
  std::string_view name;
  std::optional<component_version> min;
  std::optional<component_version> below;
};

struct dtype_heads {
  data_type dtype = data_type::float16;
  head_sizes heads;
};

// A feature list and its number among the catalog's distinct feature lists (`catalog::feature_lists`):
// the generator defines equal lists once and numbers them, so the builder makes one feature_set of each.
struct feature_list {
  list<std::string_view> names;
  std::uint32_t id = 0;
};

struct condition {
  phase_set phases;
  data_type_set dtypes;
  attention_type_set attn_types;
  feature_list features;
  feature_list without_features;
  shape_limits ranges;
  bool equal_seq_lens = false;
  bool has_heads = false;
  head_sizes heads;
  bool has_value_heads = false;
  head_sizes value_heads;
  list<requirement> components;
  bool never = false;
};

struct call_rule {
  condition when;
  condition require;
  std::string_view note;
};

// Enum sets, optionals and shape limits are the values themselves (constant-initialized), so the
// builder copies them.
struct caps {
  std::string_view variant;
  domain_set domains;
  data_type_set dtypes;
  cache_dtype_set kv_cache_dtypes;
  head_sizes heads;
  bool has_value_heads = false;
  head_sizes value_heads;
  list<std::uint32_t> block_size_multiples;
  std::uint32_t preferred_block_size = 0;
  attention_type_set attn_types;
  attention_mode mode = attention_mode::standard;
  feature_list features;
  list<constraint> platforms;
  list<requirement> requires_components;
  list<dtype_heads> heads_by_dtype;
  shape_limits ranges;
  list<call_rule> call_rules;
};

struct advisory {
  std::string_view id;
  std::string_view variant;
  list<constraint> platforms;
  cache_dtype_set kv_cache_dtypes;
  condition when;
  advisory_action action = advisory_action::warn;
  std::string_view message;
  list<std::string_view> upstream;
};

struct backend {
  std::string_view name;
  list<std::string_view> aliases;
  std::string_view description;
  domain_set domains;
  bool forced_only = false;
  caps base;
  list<caps> variants;
  list<advisory> advisories;
};

struct entry {
  std::string_view backend;
  list<std::string_view> when;
  list<std::string_view> unless;
  feature_list unless_features;
  phase_set phases;
  shape_limits ranges;
};

struct rule {
  attention_domain domain = attention_domain::decoder;
  device_vendor vendor = device_vendor::cuda;
  arch_filter arch;
  attention_mode_set modes;
  attention_type_set attn_types;
  std::uint32_t min_num_heads = 0;
  std::uint32_t max_num_heads = 0;
  cache_dtype_set kv_cache_dtypes;
  data_type_set dtypes;
  list<std::uint32_t> head_sizes;
  feature_list features;
  feature_list without_features;
  phase_set phases;
  shape_limits ranges;
  std::string_view note;
  forced_handling forced = forced_handling::honoured;
  list<entry> order;
};

struct implication {
  std::string_view component;
  list<std::string_view> implies;
};

// One element of the name index: a canonical name or alias and its backend's position.
struct name_entry {
  std::string_view name;
  std::size_t backend = 0;
};

struct catalog {
  std::string_view name;
  list<backend> backends;
  list<rule> rules;
  list<implication> implications;
  std::uint32_t feature_lists = 0;  ///< distinct non-empty feature lists: ids 0 .. feature_lists - 1
  // What registry::reindex computes, computed by the generator (detail::catalog_index).
  list<name_entry> names;         ///< every name and alias, sorted
  list<std::size_t> resolved;     ///< every rule's entries' backend indices, rule after rule
  list<std::size_t> rule_starts;  ///< rule -> its first entry in `resolved`
};

// Built whole and moved in: cheaper than assign() into the empty member (libstdc++ takes the replace path).
inline void assign(std::string& out, std::string_view text) {
  if (!text.empty()) out = std::string(text);
}

// The list helpers return at once on an empty list: reserve(0) is still a call, and most lists are empty.
inline void assign_strings(std::vector<std::string>& out, list<std::string_view> names) {
  if (names.size == 0) return;
  out.reserve(names.size);
  for (auto n : names) out.emplace_back(n);
}

// The feature sets built so far, by list id: equal lists (the catalogs repeat a few across many
// variants and entries) share one stored list, as the JSON loader shares an inherited one.
class feature_interner {
 public:
  explicit feature_interner(std::size_t lists) : built_(lists) {}
  // Sets `out` (still empty) to the list's set; an empty list leaves it alone.
  void assign(feature_set& out, const feature_list& f) {
    if (f.names.size == 0) return;
    auto& set = built_[f.id];
    if (set.empty()) build(set, f.names);
    out = set;
  }

 private:
  // Out of line: once per list, while assign runs for every condition, rule and entry.
  ATTNSEL_INTERNAL_NOINLINE static void build(feature_set& set, list<std::string_view> names) {
    // Generated lists are sorted and unique.
    set = feature_set(detail::sorted_unique, std::vector<std::string>(names.begin(), names.end()));
  }

  std::vector<feature_set> built_;
};

template <class T>
void assign_vector(std::vector<T>& out, list<T> values) {
  if (values.size != 0) out = std::vector<T>(values.begin(), values.end());
}

inline void fill_head_sizes(head_size_spec& out, const head_sizes& h) {
  out.form = h.form;
  assign_vector(out.values, h.values);
  out.min = h.min;
  out.max = h.max;
  out.multiple_of = h.multiple_of;
}

inline void fill_components(std::vector<component_condition>& out, list<requirement> components) {
  if (components.size == 0) return;
  out.reserve(components.size);
  for (const auto& r : components) {
    auto& c = out.emplace_back();
    assign(c.name, r.name);
    c.min_version = r.min;
    c.below_version = r.below;
  }
}

ATTNSEL_INTERNAL_NOINLINE inline void fill_condition(call_condition& out, const condition& c,
                                                     feature_interner& features) {
  out.phases = c.phases;
  out.dtypes = c.dtypes;
  out.attn_types = c.attn_types;
  features.assign(out.features, c.features);
  features.assign(out.without_features, c.without_features);
  out.shape = c.ranges;
  out.equal_seq_lens = c.equal_seq_lens;
  if (c.has_heads) fill_head_sizes(out.head_sizes.emplace(), c.heads);
  if (c.has_value_heads) fill_head_sizes(out.value_head_sizes.emplace(), c.value_heads);
  fill_components(out.components, c.components);
  out.never = c.never;
}

inline void fill_constraints(std::vector<platform_constraint>& out, list<constraint> constraints) {
  if (constraints.size == 0) return;
  out.reserve(constraints.size);
  for (const auto& pc : constraints) {
    auto& p = out.emplace_back();
    p.vendor = pc.vendor;
    p.min_capability = pc.arch.min;
    p.max_capability = pc.arch.max;
    assign_vector(p.archs, pc.arch.archs);
    assign_vector(p.families, pc.arch.families);
  }
}

// Out of line: inlined at its two call sites it only grows the unit (and crowds out inlining elsewhere).
ATTNSEL_INTERNAL_NOINLINE inline void fill_capabilities(capabilities& out, const caps& c, feature_interner& features) {
  assign(out.variant, c.variant);
  out.domains = c.domains;
  out.dtypes = c.dtypes;
  out.kv_cache_dtypes = c.kv_cache_dtypes;
  fill_head_sizes(out.head_sizes, c.heads);
  if (c.has_value_heads) fill_head_sizes(out.value_head_sizes.emplace(), c.value_heads);
  assign_vector(out.block_size_multiples, c.block_size_multiples);
  out.preferred_block_size = c.preferred_block_size;
  out.attn_types = c.attn_types;
  out.mode = c.mode;
  features.assign(out.features, c.features);
  fill_constraints(out.platforms, c.platforms);
  fill_components(out.requires_components, c.requires_components);
  if (c.heads_by_dtype.size != 0) out.head_sizes_by_dtype.reserve(c.heads_by_dtype.size);
  for (const auto& d : c.heads_by_dtype) {
    auto& h = out.head_sizes_by_dtype.emplace_back();
    h.dtype = d.dtype;
    fill_head_sizes(h.head_sizes, d.heads);
  }
  out.shape = c.ranges;
  if (c.call_rules.size != 0) out.call_rules.reserve(c.call_rules.size);
  for (const auto& r : c.call_rules) {
    auto& rule = out.call_rules.emplace_back();
    fill_condition(rule.when, r.when, features);
    fill_condition(rule.require, r.require, features);
    assign(rule.note, r.note);
  }
}

/// The registry a compiled-in catalog describes: the same value `parse_catalog` builds from its JSON.
/// The generator loaded that JSON through the checking loader and wrote down the index reindex built of
/// it, so the parts are neither validated nor indexed again (tests/test_builtin_tables.cpp compares the
/// two registries and their indices). Every part is built in place, in storage reserved to its final size.
inline registry build_registry(const catalog& cat) {
  feature_interner features(cat.feature_lists);
  std::vector<backend_descriptor> backends;
  backends.reserve(cat.backends.size);
  for (const auto& b : cat.backends) {
    auto& d = backends.emplace_back();
    assign(d.name, b.name);
    assign_strings(d.aliases, b.aliases);
    assign(d.description, b.description);
    d.domains = b.domains;
    d.forced_only = b.forced_only;
    fill_capabilities(d.caps, b.base, features);
    if (b.variants.size != 0) d.variants.reserve(b.variants.size);
    for (const auto& v : b.variants) fill_capabilities(d.variants.emplace_back(), v, features);
    if (b.advisories.size != 0) d.advisories.reserve(b.advisories.size);
    for (const auto& a : b.advisories) {
      auto& out = d.advisories.emplace_back();
      assign(out.id, a.id);
      assign(out.variant, a.variant);
      fill_constraints(out.platforms, a.platforms);
      out.kv_cache_dtypes = a.kv_cache_dtypes;
      fill_condition(out.when, a.when, features);
      out.action = a.action;
      assign(out.message, a.message);
      assign_strings(out.upstream, a.upstream);
    }
  }
  priority_policy policy;
  policy.rules.reserve(cat.rules.size);
  for (const auto& r : cat.rules) {
    auto& out = policy.rules.emplace_back();
    out.domain = r.domain;
    out.vendor = r.vendor;
    out.min_capability = r.arch.min;
    out.max_capability = r.arch.max;
    assign_vector(out.archs, r.arch.archs);
    assign_vector(out.families, r.arch.families);
    out.modes = r.modes;
    out.attn_types = r.attn_types;
    out.min_num_heads = r.min_num_heads;
    out.max_num_heads = r.max_num_heads;
    out.kv_cache_dtypes = r.kv_cache_dtypes;
    out.dtypes = r.dtypes;
    assign_vector(out.head_sizes, r.head_sizes);
    features.assign(out.features, r.features);
    features.assign(out.without_features, r.without_features);
    out.phases = r.phases;
    out.shape = r.ranges;
    assign(out.note, r.note);
    out.forced = r.forced;
    out.order.reserve(r.order.size);
    for (const auto& e : r.order) {
      auto& entry = out.order.emplace_back();
      assign(entry.backend, e.backend);
      assign_strings(entry.when, e.when);
      assign_strings(entry.unless, e.unless);
      features.assign(entry.unless_features, e.unless_features);
      entry.phases = e.phases;
      entry.shape = e.ranges;
    }
  }
  std::vector<component_implication> implications;
  if (cat.implications.size != 0) implications.reserve(cat.implications.size);
  for (const auto& i : cat.implications) {
    auto& out = implications.emplace_back();
    assign(out.component, i.component);
    assign_strings(out.implies, i.implies);
  }
  detail::catalog_index index;
  index.names.reserve(cat.names.size);
  for (const auto& n : cat.names) index.names.emplace_back(n.name, n.backend);
  assign_vector(index.resolved, cat.resolved);
  assign_vector(index.rule_starts, cat.rule_starts);
  return registry::from_validated(detail::validated_catalog{}, std::move(backends), std::move(policy),
                                  std::move(implications), std::move(index));
}

}  // namespace detail::tables

ATTNSEL_END_NAMESPACE
