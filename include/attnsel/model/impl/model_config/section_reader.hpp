// SPDX-License-Identifier: Apache-2.0
// The config.json reader's typed access: a section of the document, values read by key with errors that
// name the key's JSON pointer, and Python's non-finite numbers marked so that they are refused by name.
#pragma once

#include <attnsel/catalog/impl/json_keys.hpp>
#include <attnsel/core/limits.hpp>
#include <attnsel/model/model_config.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Python's json module (and so Hugging Face's save_pretrained) writes NaN, Infinity and -Infinity,
// which JSON has no spelling for. Outside strings each becomes a one-member object that no key attnsel
// reads accepts, so a key attnsel never reads may hold one, and one that it reads is refused by name
// ("expected an integer ..., got NaN"). Linear; strings are copied as they are.
inline constexpr std::string_view non_finite_key = std::string_view("\0non_finite", 11);

inline std::string with_non_finite_marked(std::string_view text) {
  static constexpr std::string_view words[] = {"-Infinity", "Infinity", "NaN"};
  std::string out;
  out.reserve(text.size());
  json_string_tracker strings;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (!strings.outside_string(ch)) {
      out += ch;
      continue;
    }
    const auto word = std::find_if(std::begin(words), std::end(words),
                                   [&](std::string_view w) { return text.substr(i, w.size()) == w; });
    if (word != std::end(words)) {
      out += R"({"\u0000non_finite": ")";
      out += *word;
      out += "\"}";
      i += word->size() - 1;
      continue;
    }
    out += ch;
  }
  return out;
}

// The spelling of a value with_non_finite_marked made, or null for any other value.
inline const std::string* non_finite_of(const nlohmann::json& v) {
  if (!v.is_object() || v.size() != 1) return nullptr;
  const auto it = v.find(std::string(non_finite_key));
  return it != v.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

// One section of a config.json (the document, its text_config or a tower's), read by key. HF writes
// `null` for many unset keys (head_dim, sliding_window), so null reads as absent; a present value of the
// wrong type is an error naming its key.
class config_section_reader {
 public:
  config_section_reader(std::string origin, const nlohmann::json& root, model_dtype_keys dtype_keys)
      : origin_(std::move(origin)), root_(root), dtype_keys_(dtype_keys) {}

 protected:
  [[noreturn]] void fail(const std::string& pointer, const std::string& problem) const {
    throw model_config_error(origin_, pointer, problem);
  }
  void within_head_limit(const char* key, const char* what, std::uint64_t size) const {
    if (size > limits::head_size)
      fail(prefix_ + "/" + key, std::string(what) + " is " + std::to_string(size) + ", above the head-size limit " +
                                    std::to_string(limits::head_size));
  }
  static std::string kind(const nlohmann::json& v) {
    if (const auto* special = non_finite_of(v)) return *special;
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
  }
  static const nlohmann::json* present(const nlohmann::json& obj, const char* key) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }
  const nlohmann::json& required(const char* key, const char* hint = "") const {
    const nlohmann::json* v = present(*section_, key);
    if (v == nullptr)
      fail(prefix_ + "/" + key, std::string("missing") + (*hint ? std::string(" ") + hint : std::string()) +
                                    ": needed for the attention shape");
    return *v;
  }
  std::uint32_t size_at(const nlohmann::json& v, const char* key, std::uint64_t max = limits::head_size) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || static_cast<std::uint64_t>(v.get<std::int64_t>()) > max)
      fail(prefix_ + "/" + key, "expected an integer in [1, " + std::to_string(max) + "], got " + kind(v));
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
  }
  /// An index in [0, end): a layer, or an offset within a period.
  std::uint32_t index_at(const nlohmann::json& v, const char* key, std::uint32_t end) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= end)
      fail(prefix_ + "/" + key, "expected an integer in [0, " + std::to_string(end - 1) + "], got " + kind(v));
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
  }
  std::string string_at(const nlohmann::json& v, const char* key) const {
    if (!v.is_string()) fail(prefix_ + "/" + key, "expected a string, got " + kind(v));
    return v.get<std::string>();
  }
  std::optional<data_type> read_dtype(const nlohmann::json& obj, const std::string& prefix) const {
    for (const char* key : {"dtype", "torch_dtype"}) {
      const nlohmann::json* v = present(obj, key);
      if (v == nullptr) continue;
      if (v->is_string()) {
        const auto text = v->get<std::string>();
        if (text == "float16" || text == "bfloat16" || text == "float32") return parse_enum<data_type>(text);
      }
      fail(prefix + "/" + key, R"(expected "float16", "bfloat16" or "float32", got )" + kind(*v));
    }
    return std::nullopt;
  }

  std::string origin_;
  const nlohmann::json& root_;
  model_dtype_keys dtype_keys_;
  const nlohmann::json* section_ = nullptr;
  std::string prefix_;
};

}  // namespace detail

ATTNSEL_END_NAMESPACE
