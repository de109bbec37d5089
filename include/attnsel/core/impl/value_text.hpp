// SPDX-License-Identifier: Apache-2.0
// How values read in messages and tables: enum sets, number lists and name sets (one spelling each).
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/query.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

/// `float16|bfloat16` (the members joined by `sep`), or `any` for an empty set.
template <class E>
std::string format_enum_list(enum_set<E> set, std::string_view sep) {
  if (set.empty()) return "any";
  std::string out;
  set.for_each([&](E v) {
    if (!out.empty()) out += sep;
    out += to_string(v);
  });
  return out;
}

/// `{float16, bfloat16}`, or `any` for an empty (unrestricted) set.
template <class E>
std::string format_enum_set(enum_set<E> set) {
  return set.empty() ? std::string("any") : "{" + format_enum_list(set, ", ") + "}";
}

/// `{16, 32}`.
inline std::string format_uints(const std::vector<std::uint32_t>& values) {
  return "{" + join(values, ", ", [](std::uint32_t v) { return std::to_string(v); }) + "}";
}

/// `sinks, alibi`, or `none` for an empty set.
inline std::string format_names(const feature_set& names) {
  if (names.empty()) return "none";
  return join(names, ", ");
}

/// A query field's value as text (the codecs `query_fields_text` iterates the list with): an enumerator's
/// name, a count, the feature names.
template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
std::string query_value_text(E value) {
  return std::string(to_string(value));
}
inline std::string query_value_text(std::uint32_t value) { return std::to_string(value); }
inline std::string query_value_text(const feature_set& names) { return format_names(names); }

/// `name=value` for the fields of `q` in the query's field list order, joined by `sep`: each field that
/// differs from a default query, and with `every_required` also each field that has no "unstated"
/// meaning (head size, dtypes, attention type, mode). The domain is the caller's to say.
inline std::string query_fields_text(const query& q, std::string_view sep, bool every_required) {
  const query defaults;
  std::string out;
  field_list<query>::members([&](const query_field& field, auto m) {
    constexpr auto member = decltype(m)::value;
    using value_type = bare_t<decltype(q.*member)>;
    if constexpr (!std::is_same_v<value_type, attention_domain>) {
      const bool always = every_required && field.unstated.empty() && !std::is_same_v<value_type, feature_set>;
      if (!always && q.*member == defaults.*member) return;
      if (!out.empty()) out += sep;
      out += std::string(field.name) + "=" + query_value_text(q.*member);
    }
  });
  return out;
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
