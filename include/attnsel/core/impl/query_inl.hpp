// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for query.hpp: the text form of a query and why one is invalid, both from
// the query's field list.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/query.hpp>
#endif

#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/impl/value_text.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE std::string validation_message(const query& q) {
  // The counts, each against its field's bound (a field without an unstated meaning starts at 1).
  std::string out;
  field_list<query>::members([&](const query_field& field, auto m) {
    constexpr auto member = decltype(m)::value;
    if constexpr (std::is_same_v<detail::bare_t<decltype(q.*member)>, std::uint32_t>) {
      const std::uint32_t value = q.*member;
      const std::uint32_t low = field.unstated.empty() ? 1 : 0;
      if (out.empty() && field.max != 0 && (value < low || value > field.max))
        out = std::string(field.name) + " " + std::to_string(value) + " is outside [" + std::to_string(low) + ", " +
              std::to_string(field.max) + "]";
    }
  });
  if (!out.empty()) return out;
  if (static_cast<std::size_t>(q.domain) >= enum_values<attention_domain>().size())
    return "domain " + std::to_string(static_cast<unsigned>(q.domain)) + " is not one of " +
           enum_names<attention_domain>();
  if (static_cast<std::size_t>(q.phase) >= enum_values<attention_phase>().size())
    return "phase " + std::to_string(static_cast<unsigned>(q.phase)) + " is not one of " +
           enum_names<attention_phase>();
  if (q.num_heads != 0 && q.num_kv_heads != 0 && q.num_heads % q.num_kv_heads != 0)
    return "num_heads " + std::to_string(q.num_heads) + " is not a multiple of num_kv_heads " +
           std::to_string(q.num_kv_heads);
  for (const auto& f : q.required)
    if (!is_valid_feature_name(f))
      // Escaped and cut by detail::escape_text(): the message is ASCII, so JSON and terminals take it whole.
      return "feature name '" + detail::escape_text(f, limits::name_length) +
             "' is not lower_snake ([a-z][a-z0-9_]*, at most 64 characters)";
  return {};
}

ATTNSEL_INLINE std::string to_string(const query& q) {
  return std::string(to_string(q.domain)) + " attention (" + detail::query_fields_text(q, ", ", true) + ")";
}

ATTNSEL_END_NAMESPACE
