// SPDX-License-Identifier: Apache-2.0
// CLI11 validators for typed options: ranges from limits.hpp and enum maps from enums.hpp's tables.
#pragma once

#include <attnsel/core/enums.hpp>
#include <attnsel/core/override.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace attnsel_cli {

/// `validator` with its failure text replaced by `message(input)` and no description in --help.
/// CLI11's own texts ("Value 0 not in range 1 to 65536", "Check x value in {...} FAILED") neither
/// quote the value nor read like the tool's other errors; CLI11 prefixes the flag name.
[[nodiscard]] CLI::Validator reworded(const CLI::Validator& validator,
                                      const std::function<std::string(const std::string&)>& message);

/// `text` quoted and made printable for a usage error: `'fp9'`.
[[nodiscard]] std::string quoted_value(const std::string& text);

/// `MIN..MAX`, as help texts and messages write a range.
[[nodiscard]] std::string range_text(std::uint32_t min, std::uint32_t max);

/// A decimal integer in [min, max]: ASCII digits only (no sign, no `0x`; leading zeros are decimal, so
/// `0100` is 100, never octal). Anything else fails with "'X' is not a decimal integer in MIN..MAX" or
/// "'X' is outside MIN..MAX". Every integer option of the tool uses it.
[[nodiscard]] CLI::Validator count_in(std::uint32_t min, std::uint32_t max);

/// Exactly one of `words` (CLI::IsMember); anything else fails with "'X' is not one of A, B".
[[nodiscard]] CLI::Validator one_of(const std::vector<std::string>& words);

/// Refuses an empty value with `message` (`--arch ""` is an unset shell variable, not "no arch").
[[nodiscard]] CLI::Validator non_empty(const std::string& message);

/// Refuses an empty path value (`--catalog-only ""`, usually an unset shell variable).
[[nodiscard]] const CLI::Validator& non_empty_path();

/// The canonical names of `E` in table order, without `left_out`, joined by ", ": `cuda, rocm, xpu, cpu`.
template <class E>
[[nodiscard]] std::string enum_choices(std::initializer_list<E> left_out = {}) {
  std::string out;
  for (const E value : attnsel::enum_values<E>()) {
    if (std::find(left_out.begin(), left_out.end(), value) != left_out.end()) continue;
    out += (out.empty() ? "" : ", ") + std::string(attnsel::to_string(value));
  }
  return out;
}

/// A transforming validator for an option bound to `E` itself: a CLI::CheckedTransformer over the
/// canonical names of `E` (enums.hpp's table, without `left_out`) whose filter is attnsel::parse_enum,
/// so aliases and any case are accepted exactly as the library parses them. Anything else, the
/// enumerator's number included, fails with "'X' is not one of NAMES".
template <class E>
[[nodiscard]] CLI::Validator enum_choice(std::initializer_list<E> left_out = {}) {
  std::vector<std::pair<std::string, E>> names;
  std::vector<std::string> spelled;  // the same names, for the did-you-mean
  for (const E value : attnsel::enum_values<E>())
    if (std::find(left_out.begin(), left_out.end(), value) == left_out.end()) {
      names.emplace_back(attnsel::to_string(value), value);
      spelled.push_back(names.back().first);
    }
  const CLI::CheckedTransformer mapped(std::move(names), [](std::string text) {
    const auto value = attnsel::parse_enum<E>(text);
    return value ? std::string(attnsel::to_string(*value)) : text;
  });
  const std::string accepted = enum_choices<E>(left_out);
  // CheckedTransformer also passes the mapped value's text (the enumerator's number) unchanged; a
  // name always comes out rewritten, so an unchanged input is refused: only names and aliases count.
  auto strict = CLI::Validator(
      [mapped](std::string& input) {
        const std::string typed = input;
        auto error = mapped(input);
        if (error.empty() && input == typed) error = "not a name";
        return error;
      },
      "");
  return reworded(strict, [accepted, spelled](const std::string& input) {
    const auto hint = attnsel::closest_name(input, spelled);
    return quoted_value(input) + " is not one of " + accepted + (hint.empty() ? "" : "; did you mean " + hint + "?");
  });
}

/// Adds option `name` to `app`, writing an `E` into `target` (an `E` or a `std::optional<E>`) through
/// enum_choice<E>(left_out). Bound through a function: CLI11's add_option(name, variable) renders the
/// default with an unqualified to_string, which ADL makes ambiguous with attnsel::to_string.
template <class E, class Target>
CLI::Option* add_enum_option(CLI::App& app, const std::string& name, Target& target, const std::string& description,
                             std::initializer_list<E> left_out = {}) {
  return app
      .add_option_function<E>(
          name, [&target](const E& value) { target = value; }, description)
      ->transform(enum_choice<E>(left_out));
}

}  // namespace attnsel_cli
