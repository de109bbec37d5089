// SPDX-License-Identifier: Apache-2.0
// Reading JSON text before a parser does: the first repeated object key (one linear SAX pass: catalogs,
// switch table), JSON pointer tokens, and which bytes lie outside strings.
#pragma once

#include <attnsel/config.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Fed a JSON text byte by byte, says which bytes lie outside every string: those a pre-parse scan may
// read as structure (brackets, bare words). A string's quotes count as inside it.
class json_string_tracker {
 public:
  constexpr bool outside_string(char c) noexcept {
    if (in_string_) {
      if (escaped_)
        escaped_ = false;
      else if (c == '\\')
        escaped_ = true;
      else if (c == '"')
        in_string_ = false;
      return false;
    }
    in_string_ = c == '"';
    return !in_string_;
  }

 private:
  bool in_string_ = false;
  bool escaped_ = false;
};

// RFC 6901: '~' becomes "~0" and '/' becomes "~1" inside a pointer token.
inline std::string pointer_token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

/// Where a key repeats: the RFC 6901 pointer of its second occurrence and the key itself.
struct repeated_key {
  std::string pointer;
  std::string key;
};

/// A SAX handler that stops at the first key an object repeats. nlohmann's DOM parser keeps the last
/// of repeated keys silently; its callback parser (used before for this check) rescans the enclosing
/// array at every object end, which made arrays of objects quadratic. This pass is linear: one hash
/// set per open object, one position per open array.
class repeated_key_finder final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::optional<repeated_key> found;

  bool null() override { return next(); }
  bool boolean(bool) override { return next(); }
  bool number_integer(number_integer_t) override { return next(); }
  bool number_unsigned(number_unsigned_t) override { return next(); }
  bool number_float(number_float_t, const string_t&) override { return next(); }
  bool string(string_t&) override { return next(); }
  bool binary(binary_t&) override { return next(); }
  bool start_object(std::size_t) override {
    stack_.push_back(frame{true, 0, {}, {}});
    return true;
  }
  bool key(string_t& k) override {
    auto& top = stack_.back();
    if (!top.keys.insert(k).second) {
      found = repeated_key{pointer_to(k), k};
      return false;  // stops the parse
    }
    top.key = k;
    return true;
  }
  bool end_object() override { return end(); }
  bool start_array(std::size_t) override {
    stack_.push_back(frame{false, 0, {}, {}});
    return true;
  }
  bool end_array() override { return end(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;  // malformed text: the DOM parse that follows reports it
  }

 private:
  struct frame {
    bool object;
    std::size_t index;                     // arrays: position of the element being read
    std::string key;                       // objects: the key being read
    std::unordered_set<std::string> keys;  // objects: keys seen so far
  };

  bool next() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    return true;
  }
  bool end() {
    stack_.pop_back();
    return next();
  }

  std::string pointer_to(const std::string& k) const {
    std::string out;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i)
      out += "/" + (stack_[i].object ? pointer_token(stack_[i].key) : std::to_string(stack_[i].index));
    return out + "/" + pointer_token(k);
  }

  std::vector<frame> stack_;
};

/// The first repeated key of `text`, or nullopt when no object repeats a key (or the text is not
/// JSON: the caller's own parse reports that). Linear in the text's length.
inline std::optional<repeated_key> find_repeated_key(std::string_view text) {
  repeated_key_finder finder;
  nlohmann::json::sax_parse(text.begin(), text.end(), &finder, nlohmann::json::input_format_t::json, true);
  return finder.found;
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
