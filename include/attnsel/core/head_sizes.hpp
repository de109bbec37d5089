// SPDX-License-Identifier: Apache-2.0
// Head-size specifications: the accepted head sizes of a variant, and of a call condition.
#pragma once

#include <attnsel/config.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// Accepted head sizes: any, an explicit set, or a range `[min, max]` stepping by `multiple_of`.
struct head_size_spec {
  enum class kind : std::uint8_t { any, set, range };

  kind form = kind::any;
  std::vector<std::uint32_t> values;  ///< sorted; form == set
  std::uint32_t min = 1;              ///< form == range
  std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t multiple_of = 1;

  static head_size_spec any() { return {}; }
  static head_size_spec set(std::vector<std::uint32_t> sizes);
  static head_size_spec range(std::uint32_t min, std::uint32_t max, std::uint32_t multiple_of = 1);

  [[nodiscard]] bool accepts(std::uint32_t size) const noexcept;
  /// Deprecated: `to_string(spec)`.
  [[deprecated("use to_string(spec)")]] [[nodiscard]] std::string describe() const;

  friend bool operator==(const head_size_spec& a, const head_size_spec& b) {
    return a.form == b.form && a.values == b.values && a.min == b.min && a.max == b.max &&
           a.multiple_of == b.multiple_of;
  }
};

/// `any`, `{64, 128, 256}`, `[8, 256] multiple of 8`.
[[nodiscard]] std::string to_string(const head_size_spec& spec);

ATTNSEL_END_NAMESPACE
