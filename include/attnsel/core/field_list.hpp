// SPDX-License-Identifier: Apache-2.0
// The field-list convention shared by the value types (query, platform, capabilities, advisories, policy
// rules and entries).
#pragma once

#include <attnsel/config.hpp>

#include <string_view>
#include <type_traits>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

// Each value type T that code treats field by field declares, next to T, its one field list: a
// specialisation of field_list<T> whose
//
//   template <class Visit, class... T> static constexpr void apply(Visit&& visit, T&&... t)
//
// calls visit(name, t.member...) for every field, in declaration order. for_each_field (below) is the
// way in, for one value or two side by side.
//
// `name` is the field's key in JSON. Equality is defined by the list (`detail::fields_equal`), the
// JSON readers take their known keys from it, and tests/test_fields.cpp fails when a member is missing
// from a list or a consumer (equality, JSON both ways, the code generator, diff, Python) leaves a listed
// field out. CONTRIBUTING.md has the recipe for a new field.
template <class T>
struct field_list;

/// A member pointer as a type, so that a list's `members(visit)` hands a visitor the member as a constant
/// (`decltype(m)::value`) beside the field's description (query, capabilities).
template <auto M>
using field_member = std::integral_constant<decltype(M), M>;

namespace detail {
template <class T>
using bare_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class T, class = void>
struct has_field_list : std::false_type {};
template <class T>
struct has_field_list<T, std::void_t<decltype(sizeof(field_list<T>))>> : std::true_type {};

/// `int` when every U is the same value type and it has a field list: the guard of for_each_field.
template <class T, class... U>
using if_listed =
    std::enable_if_t<has_field_list<bare_t<T>>::value && (std::is_same_v<bare_t<U>, bare_t<T>> && ...), int>;
}  // namespace detail

/// `visit(name, t.member)` for every field of `t`, in declaration order.
template <class T, class Visit, detail::if_listed<T> = 0>
constexpr void for_each_field(T&& t, Visit&& visit) {
  field_list<detail::bare_t<T>>::apply(visit, std::forward<T>(t));
}

/// Two values side by side: `visit(name, a.member, b.member)`.
template <class A, class B, class Visit, detail::if_listed<A, B> = 0>
constexpr void for_each_field(A&& a, B&& b, Visit&& visit) {
  field_list<detail::bare_t<A>>::apply(visit, std::forward<A>(a), std::forward<B>(b));
}

namespace detail {

/// True when every field of the list compares equal (no field is compared after the first that differs).
template <class T>
[[nodiscard]] bool fields_equal(const T& a, const T& b) {
  bool same = true;
  for_each_field(a, b, [&same](std::string_view, const auto& x, const auto& y) { same = same && x == y; });
  return same;
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
