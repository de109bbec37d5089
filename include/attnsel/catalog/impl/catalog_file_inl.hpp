// SPDX-License-Identifier: Apache-2.0
// Catalog text and files: strict JSON text parsing under limits, file reading, layering a file.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/catalog.hpp>
#endif

#include <attnsel/catalog/impl/catalog_read_inl.hpp>
#include <attnsel/catalog/impl/file_read.hpp>
#include <attnsel/catalog/impl/json_keys.hpp>
#include <attnsel/catalog/impl/json_reader.hpp>

#include <string>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Refuses text that cannot be JSON at all (binary files, NUL bytes) before any other check, so the
// error says what the file is rather than what a later check tripped on.
inline void check_json_text(std::string_view text, const std::string& origin) {
  std::size_t first = 0;
  while (first < text.size() &&
         (text[first] == ' ' || text[first] == '\t' || text[first] == '\n' || text[first] == '\r'))
    ++first;
  if (first == text.size()) throw catalog_error(origin, "", "malformed JSON: not JSON text, the input is empty");
  const char c = text[first];
  const bool starts_value =
      c == '{' || c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n';
  if (!starts_value)
    throw catalog_error(origin, "",
                        "malformed JSON: not JSON text, byte " + std::to_string(first) + " is " +
                            printable(text.substr(first, 1)) + ", which cannot start a JSON value");
  for (std::size_t i = first; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    // Raw control characters are invalid everywhere in JSON, inside strings too.
    if (b < 0x20 && b != '\t' && b != '\n' && b != '\r')
      throw catalog_error(origin, "",
                          "malformed JSON: not JSON text, control byte " + printable(text.substr(i, 1)) + " at byte " +
                              std::to_string(i));
  }
}

// Refuses nesting deeper than `limit` before the recursive parts of a JSON library see it.
inline void check_depth(std::string_view text, std::size_t limit, const std::string& origin) {
  if (limit >= text.size()) return;  // no text this short can nest deeper than its length
  std::size_t depth = 0;
  json_string_tracker strings;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!strings.outside_string(c)) continue;
    if (c == '[' || c == '{') {
      if (++depth > limit)
        throw catalog_error(origin, "",
                            "nesting deeper than " + std::to_string(limit) + " levels at byte " + std::to_string(i));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

inline nlohmann::json parse_json_text(std::string_view text, const std::string& where, const catalog_limits& limits) {
  if (text.size() > limits.max_bytes)
    throw catalog_error(
        where, "",
        "file is " + std::to_string(text.size()) + " bytes; the limit is " + std::to_string(limits.max_bytes));
  check_json_text(text, where);
  check_depth(text, limits.max_depth, where);
  try {
    // nlohmann keeps the last of repeated keys silently ("backends": [...], "backends": [] would load
    // nothing): a linear SAX pass finds the first repeated key first.
    if (const auto repeated = find_repeated_key(text))
      throw catalog_error(
          where, repeated->pointer,
          "repeated key \"" + printable(repeated->key, 40) + "\"; every key may appear once per object");
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {
    // parse_error, but also out_of_range for numbers no double holds ("1e999"): every failure of the
    // JSON parser is malformed input. nlohmann's text reads "[json.exception.parse_error.101] ...".
    // Its "last read: '...'" echoes the input (a newline as <U+000A>, eight characters): cut it, so that
    // the message stays bounded whatever the input (the config fuzzer found a 1 KiB+ one).
    std::string msg = e.what();
    const auto pos = msg.find("] ");
    throw catalog_error(where, "",
                        "malformed JSON: " + printable(pos == std::string::npos ? msg : msg.substr(pos + 2), 240));
  }
}

inline std::string read_file_text(const std::string& path, const catalog_limits& limits) {
  // The OS reads a path up to its first NUL: "a.json\0.bak" would silently load a.json.
  if (path.find('\0') != std::string::npos)
    throw catalog_error(printable(path, 1000), "", "the path contains a NUL byte; no file has such a name");
  auto got = read_regular_file(path, limits.max_bytes);
  if (!got.problem.empty()) throw catalog_error(path, "", got.problem);
  return std::move(got.text);
}

}  // namespace detail

ATTNSEL_INLINE stocked_platform with_stock(const catalog_info& info, platform p) {
  stocked_platform out{std::move(p), {}, {}};
  for (const auto& s : info.stock) {
    if (s.vendor != out.platform.vendor()) continue;
    for (const auto& c : s.components)
      if (!out.platform.has_component(c.name)) {
        out.platform.add_component(c.name, c.version);
        out.added.push_back(c);
      }
    if (!out.added.empty()) out.because = s.because;
  }
  return out;
}

ATTNSEL_INLINE std::string json_text(const nlohmann::json& doc, int indent) {
  return doc.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

ATTNSEL_INLINE nlohmann::json parse_json_document(std::string_view text, std::string_view origin,
                                                  const catalog_limits& limits) {
  return detail::parse_json_text(text, std::string(origin), limits);
}

ATTNSEL_INLINE catalog parse_catalog_text(std::string_view text, std::string_view origin,
                                          const catalog_limits& limits) {
  const std::string where(origin);
  return detail::catalog_reader(where, limits).document(detail::parse_json_text(text, where, limits));
}

ATTNSEL_INLINE catalog read_catalog_file(const std::string& path, const catalog_limits& limits) {
  return parse_catalog_text(detail::read_file_text(path, limits), path, limits);
}

ATTNSEL_INLINE void merge_catalog_file(registry& reg, const std::string& path, const catalog_limits& limits) {
  const auto doc = detail::parse_json_text(detail::read_file_text(path, limits), path, limits);
  // The merged registry is built aside and swapped in only when complete.
  auto merged = detail::catalog_reader(path, limits).document(doc, &reg);
  reg = std::move(merged.registry);
}

ATTNSEL_END_NAMESPACE
