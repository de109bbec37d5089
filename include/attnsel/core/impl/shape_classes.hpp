// SPDX-License-Identifier: Apache-2.0
// The thresholds a registry's shape limits and conditions use, and the classes they cut each field into:
// two values of one class get the same answer from every gate and policy condition.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/registry.hpp>
#include <attnsel/core/shape.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

/// Per shape field, the sorted distinct values at which some range of the registry starts or ends (a
/// range [min, max] contributes `min` and `max + 1`). Values between two neighbours are one class.
struct shape_thresholds {
  std::array<std::vector<std::uint32_t>, shape_fields.size()> cuts{};

  /// The class of `v` (a value of `f`, 0 when unstated): 0 when unstated, else 1 + the number of cuts
  /// at or below it.
  [[nodiscard]] ATTNSEL_INTERNAL_ALWAYS_INLINE std::uint32_t class_of(shape_field f, std::uint32_t v) const noexcept {
    if (v == 0) return 0;
    const auto& c = cuts[static_cast<std::size_t>(f)];
    const auto* it = c.data();
    const auto* end = it + c.size();
    if (c.size() > linear_cuts) return 1 + static_cast<std::uint32_t>(std::upper_bound(it, end, v) - it);
    std::uint32_t n = 1;  // a catalog's few thresholds (0 to 2 per field in the built-in catalogs)
    for (; it != end && v >= *it; ++it) ++n;
    return n;
  }

 private:
  static constexpr std::size_t linear_cuts = 8;  // more cuts than this: a binary search
};
inline void add_cuts(const shape_limits& limits, shape_thresholds& out) {
  for (shape_field f : shape_fields)
    if (const auto& r = limits[f]) {
      auto& c = out.cuts[static_cast<std::size_t>(f)];
      c.push_back(r->min);
      if (r->bounded_above()) c.push_back(r->max + 1);
    }
}

inline void add_cuts(const call_condition& cond, shape_thresholds& out) { add_cuts(cond.shape, out); }

inline void add_cuts(const capabilities& c, shape_thresholds& out) {
  add_cuts(c.shape, out);
  for (const auto& r : c.call_rules) {
    add_cuts(r.when, out);
    add_cuts(r.require, out);
  }
}

/// Every threshold of `reg`: variant ranges and call rules, advisories, policy rules and entries.
inline shape_thresholds thresholds_of(const registry& reg) {
  shape_thresholds out;
  for (const auto& b : reg.backends()) {
    add_cuts(b.caps, out);
    for (const auto& v : b.variants) add_cuts(v, out);
    for (const auto& a : b.advisories) add_cuts(a.when, out);
  }
  for (const auto& r : reg.policy().rules) {
    add_cuts(r.shape, out);
    for (const auto& e : r.order) add_cuts(e.shape, out);
  }
  for (auto& c : out.cuts) {
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
  }
  return out;
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
