// SPDX-License-Identifier: Apache-2.0
// The one strict JSON reader: typed reads that track the JSON pointer, for catalogs, queries, platforms.
#pragma once

#include <attnsel/catalog/catalog_error.hpp>
#include <attnsel/catalog/impl/json_keys.hpp>
#include <attnsel/core/descriptor.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/limits.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// The JSON keys of T's field list after `first`: each field's name, a `shape` as its fields' own keys,
// the names in `skip` left out. The readers (catalogs, queries) take their known keys from here, so a
// field added to a list is a key the reader accepts (tests/test_fields.cpp checks that it reads it).
template <class T>
std::vector<std::string_view> keys_of_fields(std::initializer_list<std::string_view> first,
                                             std::initializer_list<std::string_view> skip = {}) {
  std::vector<std::string_view> out(first);
  for_each_field(T{}, [&](std::string_view name, const auto&) {
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) return;
    if (name != "shape") {
      out.push_back(name);
      return;
    }
    for (const shape_field f : shape_fields) out.push_back(to_string(f));
  });
  return out;
}

using json = nlohmann::json;

inline std::string child(const std::string& ptr, std::string_view key) { return ptr + "/" + pointer_token(key); }
inline std::string child(const std::string& ptr, std::size_t index) { return ptr + "/" + std::to_string(index); }

inline std::string kind_of(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "the string \"" + printable(j.get_ref<const std::string&>(), 40) + "\"";
    case json::value_t::boolean:
      return j.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
      return std::to_string(j.get<std::int64_t>());
    case json::value_t::number_unsigned:
      return std::to_string(j.get<std::uint64_t>());
    case json::value_t::number_float:
      return "the number " + j.dump();
    default:
      return "an unsupported value";
  }
}

/// True when `name` holds no control byte: names reach diagnostics, one per line, and a line break in
/// a catalog's component name could forge a line of its own.
inline bool is_printable_name(std::string_view name) noexcept {
  return std::none_of(name.begin(), name.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b < 0x20 || b == 0x7f;
  });
}

/// How a reader reports a failure: catalogs throw catalog_error(origin, pointer, problem); queries and
/// platforms (whose API promises std::invalid_argument) throw "ORIGIN.a.b: problem"; the switch table
/// (std::invalid_argument too) throws "ORIGIN: /a/b: problem", with the pointer as catalogs write it.
enum class json_error_style : std::uint8_t { catalog, invalid_argument, pointer };

// Reads typed values out of a parsed document. Every failure names the JSON pointer of the value and
// what was expected; enum names are canonical and exact-case (scripts write these files); lists are
// bounded by `catalog_limits::max_list_elements` and the document by `max_total_elements`.
class json_reader {
 public:
  json_reader(std::string origin, json_error_style style, const catalog_limits& limits = {})
      : origin_(std::move(origin)), style_(style), limits_(limits) {}

  [[noreturn]] void fail(const std::string& ptr, const std::string& problem) const {
    if (style_ == json_error_style::catalog) throw catalog_error(origin_, ptr, problem);
    if (style_ == json_error_style::pointer)
      throw std::invalid_argument(origin_ + ": " + (ptr.empty() ? std::string("/") : ptr) + ": " + problem);
    std::string dotted = origin_;
    for (char c : ptr) dotted += c == '/' ? '.' : c;
    throw std::invalid_argument(dotted + ": " + problem);
  }
  [[noreturn]] void expected(const std::string& ptr, const std::string& what, const json& got) const {
    fail(ptr, "expected " + what + ", got " + kind_of(got));
  }

  /// Requires an object whose keys are all in `allowed`. (Repeated keys are refused by the text
  /// parser, parse_json_document, before a document gets here: a parsed object has already lost them.)
  void object(const json& j, const std::string& ptr, const std::string_view* allowed, std::size_t count) const {
    if (!j.is_object()) expected(ptr, "an object", j);
    for (const auto& item : j.items()) {
      if (std::find(allowed, allowed + count, item.key()) != allowed + count) continue;
      fail(child(ptr, item.key()), "unknown key \"" + printable(item.key(), 40) + "\"; expected one of: " +
                                       join(std::vector<std::string_view>(allowed, allowed + count), ", "));
    }
  }
  void object(const json& j, const std::string& ptr, std::initializer_list<std::string_view> allowed) const {
    object(j, ptr, allowed.begin(), allowed.size());
  }
  void object(const json& j, const std::string& ptr, const std::vector<std::string_view>& allowed) const {
    object(j, ptr, allowed.data(), allowed.size());
  }

  static const json* member(const json& obj, std::string_view key) {
    const auto it = obj.find(key);
    return it == obj.end() ? nullptr : &*it;
  }
  /// `member`, but a JSON null counts as absent (query and platform keys are nullable).
  static const json* nullable_member(const json& obj, std::string_view key) {
    const json* m = member(obj, key);
    return m == nullptr || m->is_null() ? nullptr : m;
  }

  const json& required(const json& obj, const std::string& ptr, std::string_view key) const {
    const json* m = member(obj, key);
    if (m == nullptr) fail(ptr, "missing required key \"" + std::string(key) + "\"");
    return *m;
  }

  std::string string(const json& j, const std::string& ptr) const {
    if (!j.is_string()) expected(ptr, "a string", j);
    return j.get<std::string>();
  }

  bool boolean(const json& j, const std::string& ptr) const {
    if (!j.is_boolean()) expected(ptr, "true or false", j);
    return j.get<bool>();
  }

  std::uint64_t unsigned_int(const json& j, const std::string& ptr, std::uint64_t min, std::uint64_t max) const {
    // The expectation text is built only on failure: catalogs are read at every engine start.
    const auto range = [&] { return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]"; };
    if (j.is_number_unsigned()) {
      const auto v = j.get<std::uint64_t>();
      if (v < min || v > max) expected(ptr, range(), j);
      return v;
    }
    if (j.is_number_integer()) {
      const auto v = j.get<std::int64_t>();
      if (v < 0 || static_cast<std::uint64_t>(v) < min || static_cast<std::uint64_t>(v) > max)
        expected(ptr, range(), j);
      return static_cast<std::uint64_t>(v);
    }
    expected(ptr, range(), j);
  }

  // A finite number in [0, max] (integers too).
  double non_negative(const json& j, const std::string& ptr, double max) const {
    const auto range = [&] { return "a number in [0, " + std::to_string(static_cast<long long>(max)) + "]"; };
    if (!j.is_number()) expected(ptr, range(), j);
    const auto v = j.get<double>();
    if (!(v >= 0 && v <= max)) expected(ptr, range(), j);  // NaN fails both
    return v;
  }

  std::uint32_t uint32(const json& j, const std::string& ptr, std::uint32_t min, std::uint32_t max) const {
    return static_cast<std::uint32_t>(unsigned_int(j, ptr, min, max));
  }

  template <class E>
  E enumerator(const json& j, const std::string& ptr) const {
    // Canonical names only, exact case: no aliases, no case folding (documented in docs/catalog-format.md).
    if (j.is_string())
      for (E v : enum_values<E>())
        if (to_string(v) == j.get_ref<const std::string&>()) return v;
    expected(ptr, "one of " + enum_names<E>(), j);
  }

  /// Requires an array of at most `catalog_limits::max_list_elements` elements (non-empty unless
  /// `allow_empty`) and counts them against the document's total. The top-level lists (backends,
  /// policies) pass `per_list_bound = false`: only the total and the byte limit bound them.
  const json& list(const json& j, const std::string& ptr, const std::string& what, bool allow_empty = false,
                   bool per_list_bound = true) const {
    if (!j.is_array() || (!allow_empty && j.empty())) expected(ptr, what, j);
    if (per_list_bound && j.size() > limits_.max_list_elements)
      fail(ptr, "list of " + std::to_string(j.size()) + " elements; the limit is " +
                    std::to_string(limits_.max_list_elements) + " (catalog_limits::max_list_elements)");
    count_elements(j.size(), ptr);
    return j;
  }

  /// Adds `n` stored elements to the document's total; fails past `catalog_limits::max_total_elements`.
  void count_elements(std::size_t n, const std::string& ptr) const {
    total_ += n;
    if (total_ > limits_.max_total_elements)
      fail(ptr, "the document holds more than " + std::to_string(limits_.max_total_elements) +
                    " list elements once variants inherit their backend's lists (catalog_limits::max_total_elements)");
  }

  template <class E>
  enum_set<E> enum_list(const json& j, const std::string& ptr, bool allow_any) const {
    if (allow_any && j.is_string() && j.get_ref<const std::string&>() == "any") return {};
    list(j, ptr,
         std::string("a non-empty array of ") + std::string(enum_table<E>::type_name) + " names" +
             (allow_any ? " or \"any\"" : ""));
    enum_set<E> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const E v = enumerator<E>(j[i], child(ptr, i));
      if (out.contains(v)) fail(child(ptr, i), "duplicate value \"" + std::string(to_string(v)) + "\"");
      out.insert(v);
    }
    return out;
  }

  /// lower_snake feature names, collected and sorted once (any input order is O(n log n)).
  feature_set features(const json& j, const std::string& ptr) const {
    list(j, ptr, "an array of feature names", true);
    std::vector<std::string> names;
    names.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      auto name = string(j[i], child(ptr, i));
      if (!is_valid_feature_name(name)) expected(child(ptr, i), "a lower_snake feature name", j[i]);
      names.push_back(std::move(name));
    }
    return feature_set(std::move(names));
  }

  std::vector<std::string> names(const json& j, const std::string& ptr, const char* what) const {
    list(j, ptr, std::string("an array of ") + what, true);
    std::vector<std::string> out;
    out.reserve(j.size());
    for (std::size_t i = 0; i < j.size(); ++i) {
      auto s = string(j[i], child(ptr, i));
      if (s.empty() || s.size() > limits::name_length || !is_printable_name(s))
        expected(child(ptr, i),
                 std::string("a non-empty ") + what + " of at most " + std::to_string(limits::name_length) +
                     " characters, without control characters",
                 j[i]);
      out.push_back(std::move(s));
    }
    return out;
  }

  /// A compute capability in the canonical `major.minor` spelling (`sm_90` is for people, not files).
  cuda_capability capability(const json& j, const std::string& ptr) const {
    const std::string what = R"(a compute capability "major.minor" such as "9.0")";
    if (!j.is_string()) expected(ptr, what, j);
    const auto& text = j.get_ref<const std::string&>();
    const auto dot = text.find('.');
    // The schema's pattern: ^[0-9]{1,2}\.[0-9]$.
    const auto digits = [](std::string_view s, std::size_t most) {
      return !s.empty() && s.size() <= most &&
             std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    const auto cc = parse_cuda_capability(text);
    if (dot == std::string::npos || !digits(std::string_view(text).substr(0, dot), 2) ||
        !digits(std::string_view(text).substr(dot + 1), 1) || !cc)
      expected(ptr, what, j);
    return *cc;
  }

  std::vector<gfx_arch> archs(const json& j, const std::string& ptr) const {
    list(j, ptr, "a non-empty array of gfx targets");
    std::vector<gfx_arch> out;
    for (std::size_t i = 0; i < j.size(); ++i) {
      const auto s = string(j[i], child(ptr, i));
      const auto a = parse_gfx_arch(s);
      if (!a) expected(child(ptr, i), "a gfx target such as \"gfx942\"", j[i]);
      out.push_back(*a);
    }
    return out;
  }

  std::vector<gfx_family> families(const json& j, const std::string& ptr) const {
    list(j, ptr, "a non-empty array of gfx families");
    std::vector<gfx_family> out;
    for (std::size_t i = 0; i < j.size(); ++i) out.push_back(enumerator<gfx_family>(j[i], child(ptr, i)));
    return out;
  }

  /// The arch-filter keys of `obj` (min_capability, max_capability, archs, families), checked against
  /// `vendor`: a filter no device of that vendor can pass is refused at the offending key.
  arch_filter arch_filter_of(const json& obj, const std::string& ptr, device_vendor vendor) const {
    arch_filter f;
    if (const json* m = member(obj, "min_capability")) f.min_capability = capability(*m, child(ptr, "min_capability"));
    if (const json* m = member(obj, "max_capability")) f.max_capability = capability(*m, child(ptr, "max_capability"));
    if (f.min_capability && f.max_capability && *f.max_capability < *f.min_capability)
      fail(child(ptr, "max_capability"), "capability range is inverted (max < min)");
    if (const json* m = member(obj, "archs")) f.archs = archs(*m, child(ptr, "archs"));
    if (const json* m = member(obj, "families")) f.families = families(*m, child(ptr, "families"));
    const auto bad = f.unmatchable_field(vendor);
    if (!bad.empty())
      fail(child(ptr, bad), "can never match: " + std::string(to_string(vendor)) + " devices have " +
                                (vendor == device_vendor::rocm ? "gfx targets, not compute capabilities"
                                                               : "no gfx target (archs and families are for rocm)"));
    return f;
  }

  [[nodiscard]] const catalog_limits& limits() const noexcept { return limits_; }

 private:
  std::string origin_;
  json_error_style style_;
  catalog_limits limits_;
  mutable std::size_t total_ = 0;
};

}  // namespace detail

ATTNSEL_END_NAMESPACE
