// SPDX-License-Identifier: Apache-2.0
// Priority policy: ordered rules saying in which order automatic selection tries backends.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/descriptor.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/field_list.hpp>
#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/measurement.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/shape.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// One position in a priority order. It may be conditioned on platform components ("ROCM_AITER_FA
/// only when `aiter_mha` is present") or on query features. A condition only decides whether the
/// entry is tried; it never grants capability.
struct policy_entry {
  std::string backend;              ///< canonical name or alias; resolved by the registry
  std::vector<std::string> when;    ///< every one of these components must be present
  std::vector<std::string> unless;  ///< none of these components may be present
  feature_set unless_features;      ///< skipped when the query requires any of these
  phase_set phases{};               ///< format 2: tried only in these (stated) phases; empty = any
  shape_limits shape{};             ///< format 2: tried only when these (stated) shape fields are in range

  /// True when the entry's conditions hold for `p` and `q`.
  [[nodiscard]] bool enabled(const platform& p, const query& q) const noexcept;
  /// The platform half of `enabled`: the component conditions.
  [[nodiscard]] bool enabled_on(const platform& p) const noexcept;
  /// The query half of `enabled`: features, phase and shape. A phase or range on a field the query
  /// leaves unstated does not hold.
  [[nodiscard]] bool enabled_for(const query& q) const noexcept;
  /// False when the entry states no query condition: `enabled_for` then holds for every query.
  [[nodiscard]] bool reads_query() const noexcept;

  friend bool operator==(const policy_entry& a, const policy_entry& b) { return detail::fields_equal(a, b); }
};

/// The field list of `policy_entry` (see field_list.hpp); `shape` is written as its fields' own keys.
template <>
struct field_list<policy_entry> {
  template <class Visit, class... Entry>
  static constexpr void apply(Visit&& visit, Entry&&... e) {
    visit("backend", e.backend...);
    visit("when", e.when...);
    visit("unless", e.unless...);
    visit("unless_features", e.unless_features...);
    visit("phases", e.phases...);
    visit("shape", e.shape...);
  }
};
static_assert(detail::has_field_list<policy_entry>::value, "field_list<policy_entry> is specialised before any use");

/// A rule: when it matches the query and platform, its `order` is the automatic order.
/// Every narrowing field left empty matches anything. The arch fields (min_capability,
/// max_capability, archs, families) come from `arch_filter`, the same filter platform constraints use.
struct policy_rule : arch_filter {
  attention_domain domain = attention_domain::decoder;
  device_vendor vendor = device_vendor::cuda;
  attention_mode_set modes;  ///< empty = any mode
  /// Format 2: the query's attention type is one of these; empty = any. A measured order holds for the
  /// kind of call measured (a causal prefill and an encoder call of the same shape differ).
  attention_type_set attn_types{};
  std::uint32_t min_num_heads = 0;  ///< with max_num_heads: the query must set num_heads in range
  std::uint32_t max_num_heads = 0;  ///< 0 = unbounded
  cache_dtype_set kv_cache_dtypes;  ///< empty = any
  data_type_set dtypes;             ///< empty = any
  /// Format 2: the query's head size is one of these (sorted, distinct); empty = any. A measured
  /// order holds for the head size it was measured at.
  std::vector<std::uint32_t> head_sizes;
  feature_set features;          ///< the query must require all of these
  feature_set without_features;  ///< the query must require none of these
  phase_set phases{};            ///< format 2: the query's stated phase is one of these; empty = any
  shape_limits shape{};          ///< format 2: the stated shape fields are in these ranges
  std::string note;              ///< why this order (shown by explain and in docs)
  /// What the engine does with a forced backend when this rule matches: `honoured` (the default), or
  /// the engine substitutes the rule's automatic order for one that cannot run (`fallback`) or for any
  /// (`ignored`). The selection then reports the forced backends it passed over (`selection::fallback`).
  forced_handling forced = forced_handling::honoured;
  std::vector<policy_entry> order;
  /// Format 2: the order was measured (`attnsel tune`). The rule then matches only the platform the
  /// timings were taken on (`measurement::holds_on`), and explain shows each candidate's time.
  std::optional<measurement> measured{};

  [[nodiscard]] bool matches(const query& q, const platform& p) const noexcept;
  /// The platform half of `matches`: vendor, arch and, for a measured rule, the measured device and
  /// component versions. A platform-bound selector tests it once.
  [[nodiscard]] bool matches_platform(const platform& p) const noexcept;
  /// The query half of `matches` except the domain: modes, attention types, head count, dtypes,
  /// features, phase, shape.
  /// A phase or range on a field the query leaves unstated does not hold.
  [[nodiscard]] bool matches_query(const query& q) const noexcept;
  /// `matches_query` without the features: modes, attention types, head count, kv-cache dtypes, dtypes,
  /// head sizes, phase, shape.
  [[nodiscard]] bool matches_fields(const query& q) const noexcept;
  /// False when the rule states no query condition: `matches_query` then holds for every query.
  [[nodiscard]] bool reads_query() const noexcept;
  /// Deprecated: `to_string(rule)`.
  [[deprecated("use to_string(rule)")]] [[nodiscard]] std::string describe() const;

  friend bool operator==(const policy_rule& a, const policy_rule& b) { return detail::fields_equal(a, b); }
};

/// The field list of `policy_rule` (see field_list.hpp), its `arch_filter` fields included. Names are
/// the catalog's JSON keys; `shape` is written as its fields' own keys.
template <>
struct field_list<policy_rule> {
  template <class Visit, class... Rule>
  static constexpr void apply(Visit&& visit, Rule&&... r) {
    visit("domain", r.domain...);
    visit("vendor", r.vendor...);
    visit("min_capability", r.min_capability...);
    visit("max_capability", r.max_capability...);
    visit("archs", r.archs...);
    visit("families", r.families...);
    visit("modes", r.modes...);
    visit("attn_types", r.attn_types...);
    visit("min_num_heads", r.min_num_heads...);
    visit("max_num_heads", r.max_num_heads...);
    visit("kv_cache_dtypes", r.kv_cache_dtypes...);
    visit("dtypes", r.dtypes...);
    visit("head_sizes", r.head_sizes...);
    visit("features", r.features...);
    visit("without_features", r.without_features...);
    visit("phases", r.phases...);
    visit("shape", r.shape...);
    visit("note", r.note...);
    visit("forced", r.forced...);
    visit("order", r.order...);
    visit("measured", r.measured...);
  }
};
static_assert(detail::has_field_list<policy_rule>::value, "field_list<policy_rule> is specialised before any use");

namespace detail {
/// True when the query states `phases` (empty: any) and every range of `shape` holds for a stated field.
[[nodiscard]] bool call_matches(const phase_set& phases, const shape_limits& shape, const query& q) noexcept;

/// What a rule screen reads of one call, computed once per walk.
struct call_facts {
  attention_domain domain = attention_domain::decoder;
  device_vendor vendor = device_vendor::cpu;
  std::uint32_t mode = 0;   ///< the query's mode as a bit of attention_mode_set
  std::uint32_t phase = 0;  ///< its phase as a bit of phase_set; 0 when unstated (no phase rule holds)
  std::uint32_t dtype = 0;  ///< bits of data_type_set and cache_dtype_set
  std::uint32_t kv_dtype = 0;
  int capability = -1;       ///< cuda_capability::value(); -1 when the platform has none
  std::size_t features = 0;  ///< how many features the query requires

  ATTNSEL_INTERNAL_ALWAYS_INLINE static call_facts of(const query& q, const platform& p) noexcept {
    call_facts c;
    c.domain = q.domain;
    c.vendor = p.vendor();
    c.mode = attention_mode_set{q.mode}.bits();
    c.phase = q.phase == attention_phase::unstated ? 0 : phase_set{q.phase}.bits();
    c.dtype = data_type_set{q.dtype}.bits();
    c.kv_dtype = cache_dtype_set{q.kv_cache_dtype}.bits();
    c.capability = p.capability() ? p.capability()->value() : -1;
    c.features = q.required.size();
    return c;
  }
};

/// A policy rule's cheapest tests, packed: domain, vendor, modes, phases, dtypes, capability range and
/// the number of required features. It rejects only calls that policy_rule::matches rejects (never a
/// decision on its own), so a walk that runs matches on the rules it passes finds the same first rule
/// with a few instructions for each rule it passes over. A registry keeps one per rule.
struct rule_screen {
  /// The fewest rules a policy must hold for screening to pay (registry::match_rule).
  static constexpr std::size_t worth_from = 8;
  attention_domain domain = attention_domain::decoder;
  device_vendor vendor = device_vendor::cuda;
  std::uint32_t modes = 0;      ///< 0: any
  std::uint32_t phases = 0;     ///< 0: any
  std::uint32_t dtypes = 0;     ///< 0: any
  std::uint32_t kv_dtypes = 0;  ///< 0: any
  int min_capability = -1;      ///< -1: unbounded
  int max_capability = -1;      ///< -1: unbounded
  std::size_t features = 0;     ///< the rule's required features: a query with fewer cannot hold them all

  static rule_screen of(const policy_rule& r) noexcept;
  [[nodiscard]] ATTNSEL_INTERNAL_ALWAYS_INLINE bool passes(const call_facts& c) const noexcept {
    if (domain != c.domain || vendor != c.vendor || c.features < features) return false;
    if ((modes != 0 && (modes & c.mode) == 0) || (phases != 0 && (phases & c.phase) == 0)) return false;
    if ((dtypes != 0 && (dtypes & c.dtype) == 0) || (kv_dtypes != 0 && (kv_dtypes & c.kv_dtype) == 0)) return false;
    if (min_capability < 0 && max_capability < 0) return true;
    return c.capability >= 0 && c.capability >= min_capability &&
           (max_capability < 0 || c.capability <= max_capability);
  }
};
}  // namespace detail

inline detail::rule_screen detail::rule_screen::of(const policy_rule& r) noexcept {
  rule_screen s;
  s.domain = r.domain;
  s.vendor = r.vendor;
  s.modes = r.modes.bits();
  s.phases = r.phases.bits();
  s.dtypes = r.dtypes.bits();
  s.kv_dtypes = r.kv_cache_dtypes.bits();
  s.min_capability = r.min_capability ? r.min_capability->value() : -1;
  s.max_capability = r.max_capability ? r.max_capability->value() : -1;
  s.features = r.features.size();
  return s;
}

/// `decoder cuda [10.0, 10.9] mode mla`: a one-line summary of a rule for docs and traces.
[[nodiscard]] std::string to_string(const policy_rule& rule);

/// Ordered rules; the first that matches wins. When none matches, the registry's registration
/// order (of the backends serving the domain) is the automatic order.
struct priority_policy {
  std::vector<policy_rule> rules;

  /// The first matching rule, or nullptr.
  [[nodiscard]] const policy_rule* match(const query& q, const platform& p) const noexcept;

  friend bool operator==(const priority_policy& a, const priority_policy& b) { return a.rules == b.rules; }
};

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/policy_inl.hpp>
#endif
