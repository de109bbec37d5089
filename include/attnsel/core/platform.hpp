// SPDX-License-Identifier: Apache-2.0
// The platform a selection runs on: vendor, device architecture and installed components.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/field_list.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// CUDA compute capability `major.minor` (sm_90 is 9.0, sm_121 is 12.1).
struct cuda_capability {
  std::uint8_t major = 0;
  std::uint8_t minor = 0;

  [[nodiscard]] constexpr int value() const noexcept { return major * 10 + minor; }
  friend constexpr bool operator==(cuda_capability a, cuda_capability b) noexcept { return a.value() == b.value(); }
  friend constexpr bool operator!=(cuda_capability a, cuda_capability b) noexcept { return !(a == b); }
  friend constexpr bool operator<(cuda_capability a, cuda_capability b) noexcept { return a.value() < b.value(); }
  friend constexpr bool operator<=(cuda_capability a, cuda_capability b) noexcept { return a.value() <= b.value(); }
};

/// Parses `9.0`, `12.1`, `sm_90`, `sm90`, `sm_100a`, `compute_90`; `std::nullopt` for anything else.
/// Major must be 1..99 and minor 0..9.
[[nodiscard]] std::optional<cuda_capability> parse_cuda_capability(std::string_view text) noexcept;

/// `9.0`: a compute capability as catalogs, the CLI and reports write it (`parse_cuda_capability` reads it).
[[nodiscard]] std::string to_string(cuda_capability c);

/// AMD gfx target, `gfx<major><minor hex><stepping hex>`: gfx90a is {9, 0, 0xa}, gfx1201 is {12, 0, 1}.
struct gfx_arch {
  std::uint8_t major = 0;
  std::uint8_t minor = 0;
  std::uint8_t stepping = 0;

  friend constexpr bool operator==(gfx_arch a, gfx_arch b) noexcept {
    return a.major == b.major && a.minor == b.minor && a.stepping == b.stepping;
  }
  friend constexpr bool operator!=(gfx_arch a, gfx_arch b) noexcept { return !(a == b); }
  /// True when this target belongs to `family` (gfx9, mi300 = gfx942/gfx950, rdna = gfx10-12 ...).
  [[nodiscard]] bool in_family(gfx_family family) const noexcept;
  /// `gfx942`, `gfx90a`, `gfx1100`.
  [[nodiscard]] std::string name() const;
};

namespace detail {
/// Which gfx targets one gfx_family holds: a run of whole generations (`min_major`..`max_major`), or
/// exactly the named `members`. The one home of that knowledge: gfx_arch::in_family, lint's family
/// containment and the diff's sample targets all read `gfx_families`.
struct gfx_family_span {
  gfx_family family;
  std::uint8_t min_major;
  std::uint8_t max_major;
  std::array<gfx_arch, 4> members;  ///< the named targets, the first `count` of them
  std::uint8_t count;
  gfx_arch example;  ///< a target of the family for samples: the first member, or a common part

  [[nodiscard]] constexpr bool holds(gfx_arch g) const noexcept {
    if (count == 0) return g.major >= min_major && g.major <= max_major;
    for (std::size_t i = 0; i < count; ++i)
      if (members[i] == g) return true;
    return false;
  }
  /// True when every target of `inner` is one of this family's.
  [[nodiscard]] constexpr bool covers(const gfx_family_span& inner) const noexcept {
    if (inner.count == 0) return count == 0 && min_major <= inner.min_major && inner.max_major <= max_major;
    for (std::size_t i = 0; i < inner.count; ++i)
      if (!holds(inner.members[i])) return false;
    return true;
  }
};

inline constexpr gfx_arch gfx908{9, 0, 8}, gfx90a{9, 0, 0xa}, gfx942{9, 4, 2}, gfx950{9, 5, 0};
/// In gfx_family's order (checked below).
inline constexpr std::array<gfx_family_span, 7> gfx_families{{
    {gfx_family::gfx9, 9, 9, {}, 0, gfx90a},
    {gfx_family::gfx10, 10, 10, {}, 0, gfx_arch{10, 3, 0}},
    {gfx_family::gfx11, 11, 11, {}, 0, gfx_arch{11, 0, 0}},
    {gfx_family::gfx12, 12, 12, {}, 0, gfx_arch{12, 0, 1}},
    {gfx_family::mi300, 0, 0, {gfx942, gfx950}, 2, gfx942},
    {gfx_family::cdna, 0, 0, {gfx908, gfx90a, gfx942, gfx950}, 4, gfx908},
    {gfx_family::rdna, 10, 12, {}, 0, gfx_arch{11, 0, 0}},
}};
constexpr bool rows_in_family_order() noexcept {
  for (std::size_t i = 0; i < gfx_families.size(); ++i)
    if (static_cast<std::size_t>(gfx_families[i].family) != i) return false;
  return gfx_families.size() == enum_values<gfx_family>().size();
}
static_assert(rows_in_family_order(), "a row for every gfx_family, in its order");

/// A family outside the enumeration: it holds no target (min_major above max_major).
inline constexpr gfx_family_span no_gfx_family{gfx_family::gfx9, 1, 0, {}, 0, gfx_arch{}};

/// The row of `family`, or no_gfx_family.
[[nodiscard]] constexpr const gfx_family_span& span_of(gfx_family family) noexcept {
  const auto i = static_cast<std::size_t>(family);
  return i < gfx_families.size() ? gfx_families[i] : no_gfx_family;
}
}  // namespace detail

/// Parses `gfx942`, `gfx90a`, `gfx1100` (case-insensitive, feature suffixes such as `:xnack-` ignored);
/// major must be 6..15.
[[nodiscard]] std::optional<gfx_arch> parse_gfx_arch(std::string_view text) noexcept;

/// Dotted numeric version of a component, 1 to 4 parts (`0.2.5`, `9.1`); compared part by part.
struct component_version {
  std::array<std::uint32_t, 4> parts{};
  std::uint8_t count = 0;

  friend bool operator==(const component_version& a, const component_version& b) noexcept { return a.parts == b.parts; }
  friend bool operator!=(const component_version& a, const component_version& b) noexcept { return !(a == b); }
  friend bool operator<(const component_version& a, const component_version& b) noexcept { return a.parts < b.parts; }
  friend bool operator>(const component_version& a, const component_version& b) noexcept { return b < a; }
  friend bool operator<=(const component_version& a, const component_version& b) noexcept { return !(b < a); }
  friend bool operator>=(const component_version& a, const component_version& b) noexcept { return !(a < b); }
  /// Deprecated: `to_string(version)`.
  [[deprecated("use to_string(version)")]] [[nodiscard]] std::string str() const;
};

/// `9.19.0`: the parts joined by dots, as parsed.
[[nodiscard]] std::string to_string(const component_version& version);

/// Strict parse: digits separated by single dots, at most 4 parts, each below 10^9.
[[nodiscard]] std::optional<component_version> parse_component_version(std::string_view text) noexcept;

/// A library or kernel package present on the platform (`flashinfer`, `aiter_mha`), maybe versioned.
struct component {
  std::string name;
  std::optional<component_version> version;

  friend bool operator==(const component& a, const component& b) { return a.name == b.name && a.version == b.version; }
};

/// `aiter` or `flashinfer=0.2.5`: a component as the CLI reads and prints it.
[[nodiscard]] std::string to_string(const component& c);

namespace detail {
struct platform_access;
}  // namespace detail

/// Everything a capability check may read about the machine. Plain data: an engine fills it from the
/// device it finds, a test fakes it. Nothing is read from the environment or from globals.
class platform {
 public:
  /// What a platform holds, in the order its field list (`for_each_field`) visits it. Read it through
  /// the accessors: the components stay sorted by name.
  struct fields {
    device_vendor vendor = device_vendor::cpu;
    std::optional<cuda_capability> capability;
    std::optional<gfx_arch> gfx;
    std::vector<component> components;  ///< sorted by name
    std::string device_name;
  };

  platform() = default;
  explicit platform(device_vendor vendor) noexcept { f_.vendor = vendor; }

  /// A CUDA device of the given compute capability.
  static platform cuda(std::uint8_t major, std::uint8_t minor) {
    platform p(device_vendor::cuda);
    p.f_.capability = cuda_capability{major, minor};
    return p;
  }
  /// A ROCm device of the given gfx target. Precondition: `arch` parses (throws std::invalid_argument).
  static platform rocm(std::string_view arch);
  static platform cpu() noexcept { return platform(device_vendor::cpu); }
  static platform xpu() noexcept { return platform(device_vendor::xpu); }

  [[nodiscard]] device_vendor vendor() const noexcept { return f_.vendor; }
  [[nodiscard]] const std::optional<cuda_capability>& capability() const noexcept { return f_.capability; }
  [[nodiscard]] const std::optional<gfx_arch>& gfx() const noexcept { return f_.gfx; }
  [[nodiscard]] const std::vector<component>& components() const noexcept { return f_.components; }
  /// The device's marketing name (`NVIDIA H200`, as the driver reports it); empty when not stated. No
  /// capability check reads it: a measured policy rule (`measurement`) uses it to refuse timings taken
  /// on another device of the same arch.
  [[nodiscard]] const std::string& device_name() const noexcept { return f_.device_name; }

  platform& set_capability(cuda_capability cc) noexcept {
    f_.capability = cc;
    return *this;
  }
  platform& set_gfx(gfx_arch arch) noexcept {
    f_.gfx = arch;
    return *this;
  }
  platform& set_device_name(std::string name) {
    f_.device_name = std::move(name);
    return *this;
  }
  /// Adds (or replaces) a component; kept sorted by name so look-ups do not allocate.
  platform& add_component(std::string name, std::optional<component_version> version = std::nullopt);
  /// Adds `name` or `name=version`; throws std::invalid_argument on a malformed version.
  platform& add_component_spec(std::string_view spec);

  [[nodiscard]] const component* find_component(std::string_view name) const noexcept;
  [[nodiscard]] bool has_component(std::string_view name) const noexcept { return find_component(name) != nullptr; }

  /// Deprecated: `to_string(platform)`.
  [[deprecated("use to_string(platform)")]] [[nodiscard]] std::string describe() const;

  friend bool operator==(const platform& a, const platform& b) { return detail::fields_equal(a, b); }

 private:
  friend struct detail::platform_access;
  fields f_;
};

namespace detail {
// The field list's way in to a platform's (private) values.
struct platform_access {
  static const platform::fields& of(const platform& p) noexcept { return p.f_; }
};
}  // namespace detail

/// The field list of `platform` (see field_list.hpp), read-only: `visit(name, member)` for vendor,
/// capability, gfx, components and device_name, the accessors' names. JSON (`to_json(platform)`)
/// writes the capability or gfx target as one `arch` key and the device name as `device`.
template <>
struct field_list<platform> {
  template <class Visit, class... P>
  static constexpr void apply(Visit&& visit, const P&... p) {
    visit("vendor", detail::platform_access::of(p).vendor...);
    visit("capability", detail::platform_access::of(p).capability...);
    visit("gfx", detail::platform_access::of(p).gfx...);
    visit("components", detail::platform_access::of(p).components...);
    visit("device_name", detail::platform_access::of(p).device_name...);
  }
};
static_assert(detail::has_field_list<platform>::value, "field_list<platform> is specialised before any use");

/// `cuda 9.0`, `rocm gfx942`, `cpu`: the vendor and the device's capability or gfx target.
[[nodiscard]] std::string to_string(const platform& p);
/// `rocm gfx942 [aiter, flashinfer=0.2.5]`: `to_string(p)` and the components (none: no brackets).
[[nodiscard]] std::string to_string_with_components(const platform& p);

/// Sets the architecture of `p` from text a person typed (`9.0`, `sm_90` for cuda; `gfx942` for rocm).
/// Returns an empty string, or why not, worded to follow the quoted input (`'gfx9x' is not a gfx
/// target (e.g. gfx942, gfx90a, gfx1100)`); `p` is then unchanged. An arch-specific CUDA target
/// (`sm_100a`, `sm_121f`) is refused, naming the capability to give. The CLI, Python and
/// `platform_from_json` all call it.
[[nodiscard]] std::string set_arch_text(platform& p, std::string_view arch);
/// Adds a component from `NAME` or `NAME=VERSION` text a person typed. Returns an empty string, or why
/// not, worded to follow the quoted input; `p` is then unchanged.
[[nodiscard]] std::string add_component_text(platform& p, std::string_view spec);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/platform_inl.hpp>
#endif
