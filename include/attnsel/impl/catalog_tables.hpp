// SPDX-License-Identifier: Apache-2.0
// The shape of a compiled-in catalog (constant tables written by tools/codegen) and the registry built from it.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/descriptor.hpp>
#include <attnsel/enums.hpp>
#include <attnsel/platform.hpp>
#include <attnsel/policy.hpp>
#include <attnsel/registry.hpp>

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

// An optional compute capability: `has` false = unset.
struct capability {
  bool has = false;
  cuda_capability value;
};

// The arch filter shared by platform constraints and policy rules.
struct arch_filter {
  capability min;
  capability max;
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

// An optional component version: `has` false = unset.
struct version {
  bool has = false;
  component_version value;
};

struct requirement {
  std::string_view name;
  version min;
  version below;
};

// An optional count range: `has` false = unset.
struct range {
  bool has = false;
  std::uint32_t min = 1;
  std::uint32_t max = 0;
};

// Ranges by shape_field.
struct shape {
  range ranges[4];
};

struct dtype_heads {
  data_type dtype = data_type::float16;
  head_sizes heads;
};

struct condition {
  std::uint32_t phases = 0;
  std::uint32_t dtypes = 0;
  std::uint32_t attn_types = 0;
  list<std::string_view> features;
  list<std::string_view> without_features;
  shape ranges;
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

// Enum sets are stored as their bit masks (`enum_set::bits()`).
struct caps {
  std::string_view variant;
  std::uint32_t domains = 0;
  std::uint32_t dtypes = 0;
  std::uint32_t kv_cache_dtypes = 0;
  head_sizes heads;
  bool has_value_heads = false;
  head_sizes value_heads;
  list<std::uint32_t> block_size_multiples;
  std::uint32_t preferred_block_size = 0;
  std::uint32_t attn_types = 0;
  attention_mode mode = attention_mode::standard;
  list<std::string_view> features;
  list<constraint> platforms;
  list<requirement> requires_components;
  list<dtype_heads> heads_by_dtype;
  shape ranges;
  list<call_rule> call_rules;
};

struct advisory {
  std::string_view id;
  std::string_view variant;
  list<constraint> platforms;
  std::uint32_t kv_cache_dtypes = 0;
  condition when;
  advisory_action action = advisory_action::warn;
  std::string_view message;
  list<std::string_view> upstream;
};

struct backend {
  std::string_view name;
  list<std::string_view> aliases;
  std::string_view description;
  std::uint32_t domains = 0;
  bool forced_only = false;
  caps base;
  list<caps> variants;
  list<advisory> advisories;
};

struct entry {
  std::string_view backend;
  list<std::string_view> when;
  list<std::string_view> unless;
  list<std::string_view> unless_features;
  std::uint32_t phases = 0;
  shape ranges;
};

struct rule {
  attention_domain domain = attention_domain::decoder;
  device_vendor vendor = device_vendor::cuda;
  arch_filter arch;
  std::uint32_t modes = 0;
  std::uint32_t min_num_heads = 0;
  std::uint32_t max_num_heads = 0;
  std::uint32_t kv_cache_dtypes = 0;
  std::uint32_t dtypes = 0;
  list<std::uint32_t> head_sizes;
  list<std::string_view> features;
  list<std::string_view> without_features;
  std::uint32_t phases = 0;
  shape ranges;
  std::string_view note;
  forced_handling forced = forced_handling::honoured;
  list<entry> order;
};

struct implication {
  std::string_view component;
  list<std::string_view> implies;
};

struct catalog {
  std::string_view name;
  list<backend> backends;
  list<rule> rules;
  list<implication> implications;
};

template <class E>
enum_set<E> to_set(std::uint32_t bits) {
  enum_set<E> out;
  for (E v : enum_values<E>())
    if ((bits >> static_cast<unsigned>(v)) & 1U) out.insert(v);
  return out;
}

inline std::vector<std::string> to_strings(list<std::string_view> names) {
  std::vector<std::string> out;
  out.reserve(names.size);
  for (auto n : names) out.emplace_back(n);
  return out;
}

// Feature sets built so far, so that equal lists (the catalogs repeat a few across many variants and
// entries) share one stored list, as the JSON loader shares an inherited one: fewer allocations. The
// generator defines equal lists once, so a list is known by its address.
class feature_interner {
 public:
  feature_set get(list<std::string_view> names) {
    if (names.size == 0) return {};
    for (const auto& [seen, set] : built_)
      if (seen == names.data) return set;
    std::vector<std::string> out(names.begin(), names.end());  // generated lists are sorted and unique
    built_.emplace_back(names.data, feature_set(std::move(out)));
    return built_.back().second;
  }

 private:
  std::vector<std::pair<const std::string_view*, feature_set>> built_;
};

template <class T>
std::vector<T> to_vector(list<T> values) {
  return std::vector<T>(values.begin(), values.end());
}

inline std::optional<cuda_capability> to_optional(capability c) {
  return c.has ? std::optional<cuda_capability>(c.value) : std::nullopt;
}

inline head_size_spec to_head_sizes(const head_sizes& h) {
  head_size_spec out;
  out.form = h.form;
  out.values = to_vector(h.values);
  out.min = h.min;
  out.max = h.max;
  out.multiple_of = h.multiple_of;
  return out;
}

inline std::optional<component_version> to_optional(version v) {
  return v.has ? std::optional<component_version>(v.value) : std::nullopt;
}

inline shape_limits to_shape(const shape& s) {
  shape_limits out;
  for (shape_field f : shape_fields) {
    const auto& r = s.ranges[static_cast<std::size_t>(f)];
    if (r.has) out[f] = count_range{r.min, r.max};
  }
  return out;
}

inline call_condition to_condition(const condition& c, feature_interner& features) {
  call_condition out;
  out.phases = to_set<attention_phase>(c.phases);
  out.dtypes = to_set<data_type>(c.dtypes);
  out.attn_types = to_set<attention_type>(c.attn_types);
  out.features = features.get(c.features);
  out.without_features = features.get(c.without_features);
  out.shape = to_shape(c.ranges);
  out.equal_seq_lens = c.equal_seq_lens;
  if (c.has_heads) out.head_sizes = to_head_sizes(c.heads);
  if (c.has_value_heads) out.value_head_sizes = to_head_sizes(c.value_heads);
  for (const auto& r : c.components)
    out.components.push_back(component_condition{std::string(r.name), to_optional(r.min), to_optional(r.below)});
  out.never = c.never;
  return out;
}

inline std::vector<platform_constraint> to_constraints(list<constraint> constraints) {
  std::vector<platform_constraint> out;
  out.reserve(constraints.size);
  for (const auto& pc : constraints) {
    platform_constraint p;
    p.vendor = pc.vendor;
    p.min_capability = to_optional(pc.arch.min);
    p.max_capability = to_optional(pc.arch.max);
    p.archs = to_vector(pc.arch.archs);
    p.families = to_vector(pc.arch.families);
    out.push_back(std::move(p));
  }
  return out;
}

inline capabilities to_capabilities(const caps& c, feature_interner& features) {
  capabilities out;
  out.variant = std::string(c.variant);
  out.domains = to_set<attention_domain>(c.domains);
  out.dtypes = to_set<data_type>(c.dtypes);
  out.kv_cache_dtypes = to_set<cache_dtype>(c.kv_cache_dtypes);
  out.head_sizes = to_head_sizes(c.heads);
  if (c.has_value_heads) out.value_head_sizes = to_head_sizes(c.value_heads);
  out.block_size_multiples = to_vector(c.block_size_multiples);
  out.preferred_block_size = c.preferred_block_size;
  out.attn_types = to_set<attention_type>(c.attn_types);
  out.mode = c.mode;
  out.features = features.get(c.features);
  out.platforms = to_constraints(c.platforms);
  for (const auto& r : c.requires_components)
    out.requires_components.push_back(
        component_requirement{std::string(r.name), to_optional(r.min), to_optional(r.below)});
  for (const auto& d : c.heads_by_dtype) out.head_sizes_by_dtype.push_back({d.dtype, to_head_sizes(d.heads)});
  out.shape = to_shape(c.ranges);
  for (const auto& r : c.call_rules)
    out.call_rules.push_back(
        attnsel::call_rule{to_condition(r.when, features), to_condition(r.require, features), std::string(r.note)});
  return out;
}

/// The registry a compiled-in catalog describes: the same value `parse_catalog` builds from its JSON.
/// The generator loaded that JSON through the checking loader, so the parts are indexed, not
/// validated again (tests/test_builtin_tables.cpp compares the two registries).
inline registry build_registry(const catalog& cat) {
  feature_interner features;
  std::vector<backend_descriptor> backends;
  backends.reserve(cat.backends.size);
  for (const auto& b : cat.backends) {
    backend_descriptor d;
    d.name = std::string(b.name);
    d.aliases = to_strings(b.aliases);
    d.description = std::string(b.description);
    d.domains = to_set<attention_domain>(b.domains);
    d.forced_only = b.forced_only;
    d.caps = to_capabilities(b.base, features);
    d.variants.reserve(b.variants.size);
    for (const auto& v : b.variants) d.variants.push_back(to_capabilities(v, features));
    d.advisories.reserve(b.advisories.size);
    for (const auto& a : b.advisories)
      d.advisories.push_back(attnsel::advisory{std::string(a.id), std::string(a.variant), to_constraints(a.platforms),
                                               to_set<cache_dtype>(a.kv_cache_dtypes), to_condition(a.when, features),
                                               a.action, std::string(a.message), to_strings(a.upstream)});
    backends.push_back(std::move(d));
  }
  priority_policy policy;
  policy.rules.reserve(cat.rules.size);
  for (const auto& r : cat.rules) {
    policy_rule out;
    out.domain = r.domain;
    out.vendor = r.vendor;
    out.min_capability = to_optional(r.arch.min);
    out.max_capability = to_optional(r.arch.max);
    out.archs = to_vector(r.arch.archs);
    out.families = to_vector(r.arch.families);
    out.modes = to_set<attention_mode>(r.modes);
    out.min_num_heads = r.min_num_heads;
    out.max_num_heads = r.max_num_heads;
    out.kv_cache_dtypes = to_set<cache_dtype>(r.kv_cache_dtypes);
    out.dtypes = to_set<data_type>(r.dtypes);
    out.head_sizes = to_vector(r.head_sizes);
    out.features = features.get(r.features);
    out.without_features = features.get(r.without_features);
    out.phases = to_set<attention_phase>(r.phases);
    out.shape = to_shape(r.ranges);
    out.note = std::string(r.note);
    out.forced = r.forced;
    out.order.reserve(r.order.size);
    for (const auto& e : r.order) {
      out.order.push_back(policy_entry{std::string(e.backend), to_strings(e.when), to_strings(e.unless),
                                       features.get(e.unless_features), to_set<attention_phase>(e.phases),
                                       to_shape(e.ranges)});
    }
    policy.rules.push_back(std::move(out));
  }
  std::vector<component_implication> implications;
  implications.reserve(cat.implications.size);
  for (const auto& i : cat.implications)
    implications.push_back(component_implication{std::string(i.component), to_strings(i.implies)});
  return registry::from_validated(detail::validated_catalog{}, std::move(backends), std::move(policy),
                                  std::move(implications));
}

}  // namespace detail::tables

ATTNSEL_END_NAMESPACE
