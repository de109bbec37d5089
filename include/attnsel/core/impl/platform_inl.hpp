// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for platform.hpp: architecture and version parsing, component look-up.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/platform.hpp>
#endif

#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/query.hpp>

#include <algorithm>
#include <stdexcept>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Reads a run of decimal digits into `out`; false on no digits or a value above `limit`.
inline bool read_decimal(std::string_view& text, std::uint64_t limit, std::uint64_t& out) noexcept {
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    if (value > limit) return false;
    ++i;
  }
  if (i == 0) return false;
  text.remove_prefix(i);
  out = value;
  return true;
}

inline int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  c = ascii_lower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

inline bool starts_with_icase(std::string_view text, std::string_view prefix) noexcept {
  return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

}  // namespace detail

ATTNSEL_INLINE std::optional<cuda_capability> parse_cuda_capability(std::string_view text) noexcept {
  using detail::read_decimal;
  if (text.empty() || text.size() > 16) return std::nullopt;
  for (std::string_view prefix : {"sm_", "sm", "compute_"}) {
    if (detail::starts_with_icase(text, prefix)) {
      // sm_90, sm_100a, sm_121f: the last digit is the minor version, the rest the major.
      text.remove_prefix(prefix.size());
      if (!text.empty() && (detail::ascii_lower(text.back()) == 'a' || detail::ascii_lower(text.back()) == 'f'))
        text.remove_suffix(1);
      std::string_view digits = text;
      std::uint64_t all = 0;
      if (!read_decimal(digits, 999, all) || !digits.empty() || text.size() < 2 || text.size() > 3) return std::nullopt;
      const auto major = all / 10;
      if (major < 1) return std::nullopt;
      return cuda_capability{static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(all % 10)};
    }
  }
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  if (!read_decimal(text, 99, major) || major < 1) return std::nullopt;
  if (text.empty() || text.front() != '.') return std::nullopt;
  text.remove_prefix(1);
  if (text.size() != 1 || !read_decimal(text, 9, minor)) return std::nullopt;
  return cuda_capability{static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor)};
}

ATTNSEL_INLINE std::optional<gfx_arch> parse_gfx_arch(std::string_view text) noexcept {
  if (!detail::starts_with_icase(text, "gfx")) return std::nullopt;
  text.remove_prefix(3);
  // Target-id feature suffixes (gfx90a:sramecc+:xnack-) do not change the arch.
  if (const auto colon = text.find(':'); colon != std::string_view::npos) text = text.substr(0, colon);
  if (text.size() != 3 && text.size() != 4) return std::nullopt;
  std::string_view major_digits = text.substr(0, text.size() - 2);
  std::uint64_t major = 0;
  if (!detail::read_decimal(major_digits, 15, major) || !major_digits.empty() || major < 6) return std::nullopt;
  const int minor = detail::hex_digit(text[text.size() - 2]);
  const int stepping = detail::hex_digit(text[text.size() - 1]);
  if (minor < 0 || stepping < 0) return std::nullopt;
  return gfx_arch{static_cast<std::uint8_t>(major), static_cast<std::uint8_t>(minor),
                  static_cast<std::uint8_t>(stepping)};
}

// Out of line: arch filters test it inside flattened gate walks, where one inlined copy per test site
// costs the compiler more than the call costs a ROCm selection.
ATTNSEL_INLINE ATTNSEL_INTERNAL_NOINLINE bool gfx_arch::in_family(gfx_family family) const noexcept {
  return detail::span_of(family).holds(*this);
}

ATTNSEL_INLINE std::string gfx_arch::name() const {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "gfx" + std::to_string(major);
  out += hex[minor & 0xf];
  out += hex[stepping & 0xf];
  return out;
}

ATTNSEL_INLINE std::optional<component_version> parse_component_version(std::string_view text) noexcept {
  component_version v;
  if (text.empty()) return std::nullopt;
  while (true) {
    std::uint64_t part = 0;
    if (v.count == v.parts.size() || !detail::read_decimal(text, 999'999'999, part)) return std::nullopt;
    v.parts[v.count++] = static_cast<std::uint32_t>(part);
    if (text.empty()) return v;
    if (text.front() != '.') return std::nullopt;
    text.remove_prefix(1);
  }
}

ATTNSEL_INLINE std::string to_string(const component_version& version) {
  std::string out;
  for (std::uint8_t i = 0; i < version.count; ++i) {
    if (i) out += '.';
    out += std::to_string(version.parts[i]);
  }
  return out;
}

ATTNSEL_INLINE std::string component_version::str() const { return to_string(*this); }

ATTNSEL_INLINE platform platform::rocm(std::string_view arch) {
  const auto parsed = parse_gfx_arch(arch);
  if (!parsed) throw std::invalid_argument("not a gfx architecture: '" + std::string(arch) + "'");
  platform p(device_vendor::rocm);
  p.f_.gfx = *parsed;
  return p;
}

ATTNSEL_INLINE platform& platform::add_component(std::string name, std::optional<component_version> version) {
  const auto it = std::lower_bound(f_.components.begin(), f_.components.end(), name,
                                   [](const component& c, const std::string& n) { return c.name < n; });
  if (it != f_.components.end() && it->name == name) {
    it->version = version;
  } else {
    f_.components.insert(it, component{std::move(name), version});
  }
  return *this;
}

ATTNSEL_INLINE platform& platform::add_component_spec(std::string_view spec) {
  const auto eq = spec.find('=');
  const auto name = spec.substr(0, eq);
  if (name.empty()) throw std::invalid_argument("component name is empty in '" + std::string(spec) + "'");
  std::optional<component_version> version;
  if (eq != std::string_view::npos) {
    version = parse_component_version(spec.substr(eq + 1));
    if (!version)
      throw std::invalid_argument("component '" + std::string(name) + "' has a malformed version '" +
                                  std::string(spec.substr(eq + 1)) + "' (expected digits and dots, e.g. 0.2.5)");
  }
  return add_component(std::string(name), version);
}

ATTNSEL_INLINE const component* platform::find_component(std::string_view name) const noexcept {
  // A platform names a few components: comparing sizes first, a linear scan calls memcmp about once
  // per look-up, where a binary search orders strings (a memcmp per step). Long lists bisect.
  if (f_.components.size() <= 8) {
    for (const auto& c : f_.components)
      if (c.name.size() == name.size() && c.name == name) return &c;
    return nullptr;
  }
  const auto it = std::lower_bound(f_.components.begin(), f_.components.end(), name,
                                   [](const component& c, std::string_view n) { return c.name < n; });
  return (it != f_.components.end() && it->name == name) ? &*it : nullptr;
}

ATTNSEL_INLINE std::string to_string(cuda_capability c) {
  return std::to_string(c.major) + "." + std::to_string(c.minor);
}

ATTNSEL_INLINE std::string to_string(const component& c) {
  return c.version ? c.name + "=" + to_string(*c.version) : c.name;
}

ATTNSEL_INLINE std::string to_string(const platform& p) {
  std::string out(to_string(p.vendor()));
  if (p.capability()) out += " " + to_string(*p.capability());
  if (p.gfx()) out += " " + p.gfx()->name();
  return out;
}

namespace detail {
// Why `arch`, which parsed as `cc`, is refused as typed text, or empty. sm_100a / sm_121f name
// arch-specific feature sets, which a platform does not model: refused rather than the suffix dropped
// without a word. set_arch_text calls it (and through it platform_from_json).
inline std::string arch_specific_refusal(std::string_view arch, cuda_capability cc) {
  const char last = arch.empty() ? '\0' : static_cast<char>(arch.back() | 0x20);  // ASCII lower case
  if (last != 'a' && last != 'f') return {};
  return "names an arch-specific target, which a platform does not model; give the compute capability "
         "without the suffix ('" +
         to_string(cc) + "')";
}
}  // namespace detail

ATTNSEL_INLINE std::string set_arch_text(platform& p, std::string_view arch) {
  if (p.vendor() == device_vendor::cuda) {
    const auto cc = parse_cuda_capability(arch);
    if (!cc) return "is not a CUDA compute capability (e.g. 9.0, sm_90, sm90, 12.1)";
    if (auto why = detail::arch_specific_refusal(arch, *cc); !why.empty()) return why;
    p.set_capability(*cc);
  } else if (p.vendor() == device_vendor::rocm) {
    const auto gfx = parse_gfx_arch(arch);
    if (!gfx) return "is not a gfx target (e.g. gfx942, gfx90a, gfx1100)";
    p.set_gfx(*gfx);
  } else {
    return "does not apply to platform " + std::string(to_string(p.vendor())) + "; only cuda and rocm take an arch";
  }
  return {};
}

ATTNSEL_INLINE std::string add_component_text(platform& p, std::string_view spec) {
  if (!is_valid_feature_name(spec.substr(0, spec.find('='))))
    return "needs a lower_snake NAME or NAME=VERSION (e.g. aiter_mha, flashinfer=0.2.5)";
  try {
    p.add_component_spec(spec);
  } catch (const std::invalid_argument&) {
    return "needs NAME or NAME=VERSION with a dotted numeric version (e.g. flashinfer=0.2.5)";
  }
  return {};
}

ATTNSEL_INLINE std::string to_string_with_components(const platform& p) {
  if (p.components().empty()) return to_string(p);
  return to_string(p) + " [" + detail::join(p.components(), ", ", [](const component& c) { return to_string(c); }) +
         "]";
}

ATTNSEL_INLINE std::string platform::describe() const { return to_string(*this); }

ATTNSEL_END_NAMESPACE
