// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for policy.hpp: rule and entry matching.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/policy.hpp>
#endif

#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/impl/value_text.hpp>

#include <algorithm>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE bool policy_entry::enabled_on(const platform& p) const noexcept {
  const auto present = [&p](const std::string& c) { return p.has_component(c); };
  return std::all_of(when.begin(), when.end(), present) && std::none_of(unless.begin(), unless.end(), present);
}

ATTNSEL_INLINE bool detail::call_matches(const phase_set& phases, const shape_limits& shape, const query& q) noexcept {
  if (!phases.empty() && (q.phase == attention_phase::unstated || !phases.contains(q.phase))) return false;
  return std::all_of(shape_fields.begin(), shape_fields.end(), [&](shape_field f) {
    const auto& range = shape[f];
    if (!range) return true;
    const auto v = shape_value(q, f);
    return v && range->contains(*v);
  });
}

ATTNSEL_INLINE bool policy_entry::enabled_for(const query& q) const noexcept {
  return !q.required.intersects(unless_features) && detail::call_matches(phases, shape, q);
}

ATTNSEL_INLINE bool policy_entry::reads_query() const noexcept {
  return !unless_features.empty() || !phases.empty() || !shape.empty();
}

ATTNSEL_INLINE bool policy_entry::enabled(const platform& p, const query& q) const noexcept {
  return enabled_on(p) && enabled_for(q);
}

namespace detail {
// matches_platform past the vendor: the arch (the same test a backend's platform constraint does) and, for
// a measured rule, the device and versions it was measured on.
inline bool arch_and_measurement_hold(const policy_rule& r, const platform& p) noexcept {
  return r.arch_filter::accepts(p) && (!r.measured || r.measured->holds_on(p));
}
}  // namespace detail

ATTNSEL_INLINE bool policy_rule::matches(const query& q, const platform& p) const noexcept {
  // Cheapest tests first: most rules a walk passes over differ from the call in domain, vendor, mode, phase
  // or a required feature, and the arch test costs more than those.
  return q.domain == domain && p.vendor() == vendor && matches_query(q) && detail::arch_and_measurement_hold(*this, p);
}

ATTNSEL_INLINE bool policy_rule::matches_platform(const platform& p) const noexcept {
  return p.vendor() == vendor && detail::arch_and_measurement_hold(*this, p);
}

ATTNSEL_INLINE bool policy_rule::matches_query(const query& q) const noexcept {
  return matches_fields(q) && q.required.includes(features) && !q.required.intersects(without_features);
}

ATTNSEL_INLINE bool policy_rule::reads_query() const noexcept {
  return !modes.empty() || !attn_types.empty() || min_num_heads != 0 || max_num_heads != 0 ||
         !kv_cache_dtypes.empty() || !dtypes.empty() || !head_sizes.empty() || !features.empty() ||
         !without_features.empty() || !phases.empty() || !shape.empty();
}

ATTNSEL_INLINE bool policy_rule::matches_fields(const query& q) const noexcept {
  if (!modes.empty() && !modes.contains(q.mode)) return false;
  if (!attn_types.empty() && !attn_types.contains(q.attn_type)) return false;
  if (min_num_heads || max_num_heads) {
    if (q.num_heads == 0 || q.num_heads < min_num_heads) return false;
    if (max_num_heads && q.num_heads > max_num_heads) return false;
  }
  if (!kv_cache_dtypes.empty() && !kv_cache_dtypes.contains(q.kv_cache_dtype)) return false;
  if (!dtypes.empty() && !dtypes.contains(q.dtype)) return false;
  if (!head_sizes.empty() && !std::binary_search(head_sizes.begin(), head_sizes.end(), q.head_size)) return false;
  return detail::call_matches(phases, shape, q);
}

ATTNSEL_INLINE std::string to_string(const policy_rule& rule) {
  const auto narrowing = to_string(static_cast<const arch_filter&>(rule));
  std::string out = std::string(to_string(rule.domain)) + " " + std::string(to_string(rule.vendor)) +
                    (narrowing.empty() ? "" : " " + narrowing);
  if (!rule.modes.empty()) {
    out += " mode";
    rule.modes.for_each([&](attention_mode m) { out += " " + std::string(to_string(m)); });
  }
  if (!rule.attn_types.empty()) {
    out += " attn";
    rule.attn_types.for_each([&](attention_type t) { out += " " + std::string(to_string(t)); });
  }
  if (rule.min_num_heads || rule.max_num_heads)
    out += " heads [" + std::to_string(rule.min_num_heads) + ", " +
           (rule.max_num_heads ? std::to_string(rule.max_num_heads) : std::string("inf")) + "]";
  if (!rule.kv_cache_dtypes.empty()) {
    out += " kv";
    rule.kv_cache_dtypes.for_each([&](cache_dtype d) { out += " " + std::string(to_string(d)); });
  }
  if (!rule.dtypes.empty()) {
    out += " dtype";
    rule.dtypes.for_each([&](data_type d) { out += " " + std::string(to_string(d)); });
  }
  if (!rule.head_sizes.empty())
    out += " head " + detail::join(rule.head_sizes, "|", [](std::uint32_t h) { return std::to_string(h); });
  for (const auto& f : rule.features) out += " +" + f;
  for (const auto& f : rule.without_features) out += " -" + f;
  if (!rule.phases.empty()) out += " phase " + detail::format_enum_list(rule.phases, "|");
  if (!rule.shape.empty()) out += " " + to_string(rule.shape);
  if (rule.forced != forced_handling::honoured) out += " forced " + std::string(to_string(rule.forced));
  return out;
}

ATTNSEL_INLINE std::string policy_rule::describe() const { return to_string(*this); }

ATTNSEL_INLINE ATTNSEL_INTERNAL_FLATTEN const policy_rule* priority_policy::match(const query& q,
                                                                                  const platform& p) const noexcept {
  for (const auto& r : rules)
    if (r.matches(q, p)) return &r;
  return nullptr;
}

ATTNSEL_END_NAMESPACE
