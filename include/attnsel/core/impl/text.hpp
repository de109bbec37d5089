// SPDX-License-Identifier: Apache-2.0
// Small text helpers the impl files share: concatenate pieces, join a range, join at most N items of it.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/limits.hpp>

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

/// Untrusted text made safe to echo: control and non-ASCII bytes become `\xNN`, so the result is
/// plain ASCII (valid UTF-8, no terminal escapes, no line breaks) and never ends inside a character;
/// after `limit` output characters it is cut and the input's size is appended. `printable()` is this.
inline std::string escape_text(std::string_view text, std::size_t limit = limits::echoed_text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= limit) {
      out += "... (" + std::to_string(text.size()) + " bytes)";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    }
  }
  return out;
}

/// The pieces one after another, built with one allocation (`a + b + c` makes a temporary per `+`).
inline std::string concat(std::initializer_list<std::string_view> pieces) {
  std::size_t size = 0;
  for (const auto piece : pieces) size += piece.size();
  std::string out;
  out.reserve(size);
  for (const auto piece : pieces) out += piece;
  return out;
}

/// The items of `range` as text, separated by `sep`; `text(item)` turns an item into a string.
template <class Range, class Text>
std::string join(const Range& range, std::string_view sep, Text text) {
  std::string out;
  bool first = true;
  for (const auto& item : range) {
    if (!first) out += sep;
    out += text(item);
    first = false;
  }
  return out;
}

/// `join` for ranges of strings (or anything a std::string can be appended with).
template <class Range>
std::string join(const Range& range, std::string_view sep) {
  return join(
      range, sep, [](const auto& item) -> const auto& { return item; });
}

/// Like `join`, but lists at most `limit` items and then says how many more there are
/// ("A, B, C and 9,997 more"): error messages stay short and linear however large the input.
template <class Range, class Text>
std::string join_limited(const Range& range, std::string_view sep, Text text,
                         std::size_t limit = limits::listed_alternatives) {
  std::string out;
  std::size_t count = 0;
  for (const auto& item : range) {
    if (count < limit) {
      if (count) out += sep;
      out += text(item);
    }
    ++count;
  }
  if (count > limit) out += " and " + std::to_string(count - limit) + " more";
  return out;
}

template <class Range>
std::string join_limited(const Range& range, std::string_view sep, std::size_t limit = limits::listed_alternatives) {
  return join_limited(
      range, sep, [](const auto& item) -> const auto& { return item; }, limit);
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
