// SPDX-License-Identifier: Apache-2.0
// The call's shape as data (catalog format 2): ranges over a query's sequence lengths, batch and GQA
// group, and the conditions descriptors and policies state over the call.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/field_list.hpp>
#include <attnsel/core/head_sizes.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// The shape fields a range may read. `gqa_group` is `num_heads / num_kv_heads`, stated when both are.
enum class shape_field : std::uint8_t { seq_len_q, seq_len_kv, batch_size, gqa_group };

/// Every shape field, in the order catalogs, reports and shape classes use.
inline constexpr std::array<shape_field, 4> shape_fields{
    {shape_field::seq_len_q, shape_field::seq_len_kv, shape_field::batch_size, shape_field::gqa_group}};

namespace detail {
/// The field's name in catalogs, queries and messages (`seq_len_q`, ...): to_string(shape_field).
template <>
struct enum_table<shape_field> {
  static constexpr std::string_view type_name = "shape field";
  static constexpr std::array<enum_row<shape_field>, 4> rows{{
      {shape_field::seq_len_q, "seq_len_q", "", "query tokens of the call"},
      {shape_field::seq_len_kv, "seq_len_kv", "", "key/value tokens of the call"},
      {shape_field::batch_size, "batch_size", "", "sequences in the call"},
      {shape_field::gqa_group, "gqa_group", "", "query heads per KV head (num_heads / num_kv_heads)"},
  }};
};
}  // namespace detail

/// The query's value of `f`, or std::nullopt when the query leaves it unstated (0).
[[nodiscard]] constexpr std::optional<std::uint32_t> shape_value(const query& q, shape_field f) noexcept {
  std::uint32_t v = 0;
  switch (f) {
    case shape_field::seq_len_q:
      v = q.seq_len_q;
      break;
    case shape_field::seq_len_kv:
      v = q.seq_len_kv;
      break;
    case shape_field::batch_size:
      v = q.batch_size;
      break;
    case shape_field::gqa_group:
      v = (q.num_heads != 0 && q.num_kv_heads != 0) ? q.num_heads / q.num_kv_heads : 0;
      break;
  }
  return v != 0 ? std::optional<std::uint32_t>(v) : std::nullopt;
}

/// An inclusive range of counts. The defaults bound nothing.
struct count_range {
  std::uint32_t min = 1;
  std::uint32_t max = std::numeric_limits<std::uint32_t>::max();

  [[nodiscard]] constexpr bool contains(std::uint32_t v) const noexcept { return v >= min && v <= max; }
  [[nodiscard]] constexpr bool bounded_above() const noexcept {
    return max != std::numeric_limits<std::uint32_t>::max();
  }
  friend constexpr bool operator==(const count_range& a, const count_range& b) noexcept {
    return a.min == b.min && a.max == b.max;
  }
  friend constexpr bool operator!=(const count_range& a, const count_range& b) noexcept { return !(a == b); }
};

/// `[1, 65535]`, `[2, inf]`.
[[nodiscard]] std::string to_string(const count_range& r);

/// Optional ranges over the shape fields (indexed by `shape_field`). An unset range bounds nothing.
struct shape_limits {
  std::array<std::optional<count_range>, shape_fields.size()> ranges{};

  [[nodiscard]] const std::optional<count_range>& operator[](shape_field f) const noexcept {
    return ranges[static_cast<std::size_t>(f)];
  }
  [[nodiscard]] std::optional<count_range>& operator[](shape_field f) noexcept {
    return ranges[static_cast<std::size_t>(f)];
  }
  [[nodiscard]] bool empty() const noexcept {
    return std::none_of(ranges.begin(), ranges.end(), [](const auto& r) { return r.has_value(); });
  }
  friend bool operator==(const shape_limits& a, const shape_limits& b) noexcept { return a.ranges == b.ranges; }
  friend bool operator!=(const shape_limits& a, const shape_limits& b) noexcept { return !(a == b); }
};

/// `seq_len_q [1, 1], batch_size [1, 65535]`; empty when no range is set.
[[nodiscard]] std::string to_string(const shape_limits& limits);

/// A component a condition looks at: present, with a version in [min_version, below_version).
struct component_condition {
  std::string name;
  std::optional<component_version> min_version;      ///< inclusive
  std::optional<component_version> below_version{};  ///< exclusive (format 2)

  /// Whether a component at version `v` (none: it states no version) is within the range. A condition
  /// without bounds takes any version; one with a bound needs a version.
  [[nodiscard]] bool admits(const std::optional<component_version>& v) const noexcept {
    if (!min_version && !below_version) return true;
    return v && !(min_version && *v < *min_version) && !(below_version && !(*v < *below_version));
  }

  friend bool operator==(const component_condition& a, const component_condition& b) {
    return a.name == b.name && a.min_version == b.min_version && a.below_version == b.below_version;
  }
};

/// Three-valued answer of a condition: a part that reads an unstated field is `unknown`.
enum class truth : std::uint8_t { no, yes, unknown };

/// A condition on one call (format 2). Every part that is set must hold; an empty condition holds.
struct call_condition {
  phase_set phases;                                ///< empty = any phase; else the query's (stated) phase is one
  data_type_set dtypes;                            ///< empty = any
  attention_type_set attn_types;                   ///< empty = any
  feature_set features;                            ///< the query requires all of these
  feature_set without_features;                    ///< and none of these
  shape_limits shape;                              ///< stated shape fields in range
  bool equal_seq_lens = false;                     ///< seq_len_q == seq_len_kv
  std::optional<head_size_spec> head_sizes;        ///< the head size is one of these
  std::optional<head_size_spec> value_head_sizes;  ///< the value head size is one of these
  std::vector<component_condition> components;     ///< present, with a version in range
  bool never = false;                              ///< holds for no call (a `require` that forbids its `when`)

  /// `yes` or `no` from the stated fields; `unknown` when the answer hangs on an unstated one.
  [[nodiscard]] truth evaluate(const query& q, const platform& p) const noexcept;
  /// True when a cheap test alone makes `evaluate` answer `no`: never, the dtype, the attention type, or
  /// more required features than the query has. Inline, so a caller can skip the out-of-line evaluate.
  [[nodiscard]] bool rules_out(const query& q) const noexcept {
    return never || (!dtypes.empty() && !dtypes.contains(q.dtype)) ||
           (!attn_types.empty() && !attn_types.contains(q.attn_type)) || features.size() > q.required.size();
  }
  [[nodiscard]] bool empty() const noexcept {
    return phases.empty() && dtypes.empty() && attn_types.empty() && features.empty() && without_features.empty() &&
           shape.empty() && !equal_seq_lens && !head_sizes && !value_head_sizes && components.empty() && !never;
  }

  friend bool operator==(const call_condition& a, const call_condition& b) { return detail::fields_equal(a, b); }
};

/// The field list of `call_condition` (see field_list.hpp): the catalog's keys, `shape` as its fields' own.
/// The reader's keys, equality and the writer come from it; the diff reads its sets through it.
template <>
struct field_list<call_condition> {
  template <class Visit, class... Condition>
  static constexpr void apply(Visit&& visit, Condition&&... c) {
    visit("phases", c.phases...);
    visit("dtypes", c.dtypes...);
    visit("attn_types", c.attn_types...);
    visit("features", c.features...);
    visit("without_features", c.without_features...);
    visit("shape", c.shape...);
    visit("equal_seq_lens", c.equal_seq_lens...);
    visit("head_sizes", c.head_sizes...);
    visit("value_head_sizes", c.value_head_sizes...);
    visit("components", c.components...);
    visit("never", c.never...);
  }
};
static_assert(detail::has_field_list<call_condition>::value,
              "field_list<call_condition> is specialised before any use");

/// `phase decode, +dropout, seq_len_q [1, 1]`; `never` for a forbidding condition; `any call` when empty.
[[nodiscard]] std::string to_string(const call_condition& c);

/// A conditional limit of a variant: when `when` holds for the call, `require` must hold too.
struct call_rule {
  call_condition when;
  call_condition require;
  std::string note;  ///< why, in a few words (shown in the reason message)

  friend bool operator==(const call_rule& a, const call_rule& b) {
    return a.when == b.when && a.require == b.require && a.note == b.note;
  }
};

namespace detail {
/// `visit(condition, "when")` then `visit(condition, "require")` for each rule, in order: the one walk over
/// a variant's call-rule conditions (the diff's axes, candidates and component sets, registry validation,
/// the bound selector's feature names).
template <class Visit>
void for_each_condition(const std::vector<call_rule>& rules, Visit&& visit) {
  for (const auto& r : rules) {
    visit(r.when, std::string_view("when"));
    visit(r.require, std::string_view("require"));
  }
}

/// `visit(list)` for every feature list of `item` (a call condition, policy rule or entry), through its
/// field list: a new feature-list field is visited with no edit at the callers.
template <class Item, class Visit>
void for_each_feature_list(const Item& item, Visit&& visit) {
  for_each_field(item, [&](std::string_view, const auto& field) {
    if constexpr (std::is_same_v<bare_t<decltype(field)>, feature_set>) visit(field);
  });
}
}  // namespace detail

/// `when attn_type decoder, requires seq_len_q == seq_len_kv`.
[[nodiscard]] std::string to_string(const call_rule& r);

/// The names of the shape fields (and `phase`) `c` reads that `q` leaves unstated, comma-separated;
/// empty when it reads none.
[[nodiscard]] std::string unstated_fields(const call_condition& c, const query& q);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/shape_inl.hpp>
#endif
