// SPDX-License-Identifier: Apache-2.0
// The field-list convention shared by the value types (query, platform, capabilities, policy rules).
#pragma once

#include <attnsel/config.hpp>

#include <string_view>
#include <type_traits>

ATTNSEL_BEGIN_NAMESPACE

// Each value type T that code treats field by field declares, next to T, its one field list:
//
//   for_each_field(t, visit)      calls visit(name, t.member) for every field, in declaration order;
//   for_each_field(a, b, visit)   calls visit(name, a.member, b.member): two values side by side.
//
// `name` is the field's key in JSON. Equality is defined by the list (`detail::fields_equal`), the
// JSON readers take their known keys from it, and tests/test_fields.cpp fails when a member is missing
// from a list or a consumer (equality, JSON both ways, the code generator, diff, Python) leaves a listed
// field out. CONTRIBUTING.md has the recipe for a new field.

namespace detail {

/// `int` when U is T (ignoring cv and references): the guard of each type's `for_each_field`.
template <class T, class... U>
using if_all_are = std::enable_if_t<(std::is_same_v<std::remove_cv_t<std::remove_reference_t<U>>, T> && ...), int>;

/// True when every field of the list compares equal (no field is compared after the first that differs).
template <class T>
[[nodiscard]] bool fields_equal(const T& a, const T& b) {
  bool same = true;
  for_each_field(a, b, [&same](std::string_view, const auto& x, const auto& y) { same = same && x == y; });
  return same;
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
