// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for shape.hpp: evaluating call conditions, and their text.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/shape.hpp>
#endif

#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/impl/value_text.hpp>

#include <string>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {
// Folds one part's answer into a running one: `no` wins, then `unknown`.
constexpr truth both(truth a, truth b) noexcept {
  if (a == truth::no || b == truth::no) return truth::no;
  if (a == truth::unknown || b == truth::unknown) return truth::unknown;
  return truth::yes;
}

inline bool component_in_range(const component_condition& c, const platform& p) noexcept {
  const component* found = p.find_component(c.name);
  return found != nullptr && c.admits(found->version);
}

inline std::string component_condition_text(const component_condition& c) {
  std::string out = c.name;
  if (c.min_version) out += " >= " + to_string(*c.min_version);
  if (c.below_version) out += std::string(c.min_version ? "," : "") + " < " + to_string(*c.below_version);
  return out;
}
}  // namespace detail

// Out of line even where a caller is flattened: each call rule and advisory evaluates conditions, and
// one copy per call site would multiply the flattened gates' code (and their compile time) for no speed.
ATTNSEL_INLINE ATTNSEL_INTERNAL_NOINLINE truth call_condition::evaluate(const query& q,
                                                                        const platform& p) const noexcept {
  if (rules_out(q)) return truth::no;
  truth t = truth::yes;
  if (!phases.empty())
    t = detail::both(t, q.phase == attention_phase::unstated ? truth::unknown
                        : phases.contains(q.phase)           ? truth::yes
                                                             : truth::no);
  if (!q.required.includes(features) || q.required.intersects(without_features)) return truth::no;
  for (shape_field f : shape_fields) {
    const auto& range = shape[f];
    if (!range) continue;
    const auto v = shape_value(q, f);
    t = detail::both(t, !v ? truth::unknown : range->contains(*v) ? truth::yes : truth::no);
  }
  if (equal_seq_lens)
    t = detail::both(t, (q.seq_len_q == 0 || q.seq_len_kv == 0) ? truth::unknown
                        : q.seq_len_q == q.seq_len_kv           ? truth::yes
                                                                : truth::no);
  if (head_sizes && !head_sizes->accepts(q.head_size)) return truth::no;
  if (value_head_sizes && !value_head_sizes->accepts(q.value_head_size())) return truth::no;
  for (const auto& c : components)
    if (!detail::component_in_range(c, p)) return truth::no;
  return t;
}

ATTNSEL_INLINE std::string to_string(const count_range& r) {
  return "[" + std::to_string(r.min) + ", " + (r.bounded_above() ? std::to_string(r.max) : std::string("inf")) + "]";
}

ATTNSEL_INLINE std::string to_string(const shape_limits& limits) {
  std::string out;
  for (shape_field f : shape_fields)
    if (const auto& r = limits[f]) out += (out.empty() ? "" : ", ") + std::string(to_string(f)) + " " + to_string(*r);
  return out;
}

ATTNSEL_INLINE std::string to_string(const call_condition& c) {
  if (c.never) return "never";
  std::string out;
  const auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (!c.phases.empty()) add("phase " + detail::format_enum_list(c.phases, "|"));
  if (!c.dtypes.empty()) add("dtype " + detail::format_enum_list(c.dtypes, "|"));
  if (!c.attn_types.empty()) add("attn_type " + detail::format_enum_list(c.attn_types, "|"));
  for (const auto& f : c.features) add("+" + f);
  for (const auto& f : c.without_features) add("-" + f);
  if (!c.shape.empty()) add(to_string(c.shape));
  if (c.equal_seq_lens) add("seq_len_q == seq_len_kv");
  if (c.head_sizes) add("head_size " + to_string(*c.head_sizes));
  if (c.value_head_sizes) add("value head_size " + to_string(*c.value_head_sizes));
  for (const auto& comp : c.components) add(detail::component_condition_text(comp));
  return out.empty() ? std::string("any call") : out;
}

ATTNSEL_INLINE std::string to_string(const call_rule& r) {
  return "when " + to_string(r.when) + ", requires " + to_string(r.require);
}

ATTNSEL_INLINE std::string unstated_fields(const call_condition& c, const query& q) {
  std::string out;
  const auto add = [&out](std::string_view name) {
    if (out.find(name) == std::string::npos) out += (out.empty() ? "" : ", ") + std::string(name);
  };
  if (!c.phases.empty() && q.phase == attention_phase::unstated) add("phase");
  for (shape_field f : shape_fields)
    if (c.shape[f] && !shape_value(q, f)) add(to_string(f));
  if (c.equal_seq_lens) {
    if (q.seq_len_q == 0) add("seq_len_q");
    if (q.seq_len_kv == 0) add("seq_len_kv");
  }
  return out;
}

ATTNSEL_END_NAMESPACE
