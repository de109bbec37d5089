// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for descriptor.hpp: head-size and platform constraint matching.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/descriptor.hpp>
#endif

#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/impl/value_text.hpp>

#include <algorithm>
#include <stdexcept>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE head_size_spec head_size_spec::set(std::vector<std::uint32_t> sizes) {
  if (sizes.empty()) throw std::invalid_argument("head_size_spec::set needs at least one size");
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  head_size_spec s;
  s.form = kind::set;
  s.values = std::move(sizes);
  return s;
}

ATTNSEL_INLINE head_size_spec head_size_spec::range(std::uint32_t min, std::uint32_t max, std::uint32_t multiple_of) {
  if (min > max) throw std::invalid_argument("head_size_spec::range: min > max");
  if (multiple_of == 0) throw std::invalid_argument("head_size_spec::range: multiple_of must be positive");
  head_size_spec s;
  s.form = kind::range;
  s.min = min;
  s.max = max;
  s.multiple_of = multiple_of;
  return s;
}

ATTNSEL_INLINE bool head_size_spec::accepts(std::uint32_t size) const noexcept {
  switch (form) {
    case kind::any:
      return true;
    case kind::set:
      return std::binary_search(values.begin(), values.end(), size);
    case kind::range:
      // Most ranges take every size in them (multiple_of 1): no division for those.
      return size >= min && size <= max && (multiple_of <= 1 || size % multiple_of == 0);
  }
  return false;
}

ATTNSEL_INLINE std::string to_string(const head_size_spec& spec) {
  using kind = head_size_spec::kind;
  switch (spec.form) {
    case kind::any:
      return "any";
    case kind::set: {
      std::string out = "{";
      for (std::size_t i = 0; i < spec.values.size(); ++i) out += (i ? ", " : "") + std::to_string(spec.values[i]);
      return out + "}";
    }
    case kind::range: {
      std::string out =
          "[" + std::to_string(spec.min) + ", " +
          (spec.max == std::numeric_limits<std::uint32_t>::max() ? std::string("inf") : std::to_string(spec.max)) + "]";
      if (spec.multiple_of > 1) out += " multiple of " + std::to_string(spec.multiple_of);
      return out;
    }
  }
  return "?";
}

ATTNSEL_INLINE std::string head_size_spec::describe() const { return to_string(*this); }

ATTNSEL_INLINE bool arch_filter::accepts(const platform& p) const noexcept {
  return detail::arch_matches(p, min_capability, max_capability, archs, families);
}

ATTNSEL_INLINE std::string to_string(const arch_filter& filter) {
  std::string out;
  const auto cc = [](cuda_capability c) { return to_string(c); };
  if (filter.min_capability || filter.max_capability) {
    out += "[" + (filter.min_capability ? cc(*filter.min_capability) : std::string("any")) + ", " +
           (filter.max_capability ? cc(*filter.max_capability) : std::string("any")) + "]";
  }
  std::string targets;
  for (const auto& a : filter.archs) targets += (targets.empty() ? "" : "|") + a.name();
  for (auto f : filter.families) targets += (targets.empty() ? "" : "|") + std::string(to_string(f));
  if (!targets.empty()) out += (out.empty() ? "" : " ") + targets;
  return out;
}

ATTNSEL_INLINE std::string arch_filter::describe() const { return to_string(*this); }

ATTNSEL_INLINE std::string_view arch_filter::unmatchable_field(device_vendor vendor) const noexcept {
  // Only CUDA platforms are described by a capability in practice, and only ROCm ones carry a gfx
  // target (platform_from_json and the CLI set it for rocm alone).
  if (vendor == device_vendor::rocm) {
    if (min_capability) return "min_capability";
    if (max_capability) return "max_capability";
    return {};
  }
  if (!archs.empty()) return "archs";
  if (!families.empty()) return "families";
  return {};
}

ATTNSEL_INLINE bool detail::arch_matches(const platform& p, const std::optional<cuda_capability>& min_capability,
                                         const std::optional<cuda_capability>& max_capability,
                                         const std::vector<gfx_arch>& archs,
                                         const std::vector<gfx_family>& families) noexcept {
  if (min_capability || max_capability) {
    // A range needs a known capability: an unknown device is not assumed to be in range.
    if (!p.capability()) return false;
    if (min_capability && *p.capability() < *min_capability) return false;
    if (max_capability && *max_capability < *p.capability()) return false;
  }
  if (!archs.empty() || !families.empty()) {
    if (!p.gfx()) return false;
    const gfx_arch arch = *p.gfx();
    return std::find(archs.begin(), archs.end(), arch) != archs.end() ||
           std::any_of(families.begin(), families.end(), [&](gfx_family f) { return arch.in_family(f); });
  }
  return true;
}

ATTNSEL_INLINE bool platform_constraint::accepts(const platform& p) const noexcept {
  return p.vendor() == vendor && arch_filter::accepts(p);
}

ATTNSEL_INLINE std::string to_string(const platform_constraint& constraint) {
  const auto narrowing = to_string(static_cast<const arch_filter&>(constraint));
  return std::string(to_string(constraint.vendor)) + (narrowing.empty() ? "" : " " + narrowing);
}

ATTNSEL_INLINE std::string platform_constraint::describe() const { return to_string(*this); }

ATTNSEL_INLINE ATTNSEL_INTERNAL_NOINLINE truth advisory::holds(const capabilities& checked, const query& q,
                                                               const platform& p) const noexcept {
  if (!variant.empty() && variant != checked.variant) return truth::no;
  if (!platforms_accept(platforms, p)) return truth::no;
  if (!kv_cache_dtypes.empty() && !kv_cache_dtypes.contains(q.kv_cache_dtype)) return truth::no;
  return when.evaluate(q, p);
}

ATTNSEL_INLINE std::string to_string(const advisory& a) {
  std::string out = a.id + " (" + std::string(to_string(a.action));
  if (!a.variant.empty()) out += " " + a.variant;
  for (std::size_t i = 0; i < a.platforms.size(); ++i) out += (i == 0 ? " " : "|") + to_string(a.platforms[i]);
  std::string when;
  if (!a.kv_cache_dtypes.empty()) when = "kv_cache_dtype " + detail::format_enum_set(a.kv_cache_dtypes);
  if (!a.when.empty()) when += (when.empty() ? "" : ", ") + to_string(a.when);
  if (!when.empty()) out += " when " + when;
  return out + ")";
}

ATTNSEL_END_NAMESPACE
