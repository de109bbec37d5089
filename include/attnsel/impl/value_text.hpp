// SPDX-License-Identifier: Apache-2.0
// How values read in messages and tables: enum sets, number lists and name sets (one spelling each).
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/enums.hpp>
#include <attnsel/impl/text.hpp>
#include <attnsel/query.hpp>

#include <cstdint>
#include <string>
#include <string_view>
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

}  // namespace detail

ATTNSEL_END_NAMESPACE
