// SPDX-License-Identifier: Apache-2.0
// Backend descriptors: declarative data saying what one attention backend (and each variant) accepts.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/field_list.hpp>
#include <attnsel/core/head_sizes.hpp>
#include <attnsel/core/limits.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/shape.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// The arch half of a platform constraint or policy rule: the capability lies in [min, max] (a range
/// needs a known capability) and, when targets are listed, the gfx arch is one of `archs` or in one of
/// `families`. The vendor is the holder's business. Read from and written to JSON by one reader and
/// one writer (catalog_read_inl.hpp, catalog_write_inl.hpp).
struct arch_filter {
  std::optional<cuda_capability> min_capability;  ///< inclusive
  std::optional<cuda_capability> max_capability;  ///< inclusive
  std::vector<gfx_arch> archs;                    ///< empty = no arch list
  std::vector<gfx_family> families;               ///< empty = no family list; else any family matches

  /// True when `p`'s capability and gfx target pass the filter (the vendor is not looked at).
  /// Allocates nothing.
  [[nodiscard]] bool accepts(const platform& p) const noexcept;
  /// Deprecated: `to_string(filter)`.
  [[deprecated("use to_string(filter)")]] [[nodiscard]] std::string describe() const;
  /// True when no narrowing field is set.
  [[nodiscard]] bool empty() const noexcept {
    return !min_capability && !max_capability && archs.empty() && families.empty();
  }
  /// The key of the first field that no device of `vendor` can ever satisfy (a capability range on
  /// rocm, gfx targets anywhere but rocm), or an empty view when the filter can match.
  [[nodiscard]] std::string_view unmatchable_field(device_vendor vendor) const noexcept;

  friend bool operator==(const arch_filter& a, const arch_filter& b) {
    return a.min_capability == b.min_capability && a.max_capability == b.max_capability && a.archs == b.archs &&
           a.families == b.families;
  }
};

/// `[8.0, 12.1]`, `gfx942|gfx950`, `gfx9`; empty for a filter that narrows nothing.
[[nodiscard]] std::string to_string(const arch_filter& filter);

namespace detail {
/// The test behind `arch_filter::accepts`, for callers holding the four fields apart. Allocates nothing.
[[nodiscard]] bool arch_matches(const platform& p, const std::optional<cuda_capability>& min_capability,
                                const std::optional<cuda_capability>& max_capability,
                                const std::vector<gfx_arch>& archs, const std::vector<gfx_family>& families) noexcept;
}  // namespace detail

/// One platform a backend runs on: a vendor, optionally narrowed by compute-capability range (CUDA)
/// or by gfx targets and families (ROCm). Within one constraint every narrowing must hold.
struct platform_constraint : arch_filter {
  device_vendor vendor = device_vendor::cuda;

  [[nodiscard]] bool accepts(const platform& p) const noexcept;
  /// Deprecated: `to_string(constraint)`.
  [[deprecated("use to_string(constraint)")]] [[nodiscard]] std::string describe() const;

  friend bool operator==(const platform_constraint& a, const platform_constraint& b) {
    return a.vendor == b.vendor && static_cast<const arch_filter&>(a) == static_cast<const arch_filter&>(b);
  }
};

/// `cuda [8.0, 12.1]`, `rocm gfx942|gfx950`, `rocm gfx9`.
[[nodiscard]] std::string to_string(const platform_constraint& constraint);

/// Whether a list of platforms (a capability's, an advisory's, a model rule's) takes `p`: an empty list
/// takes every platform, else one of its constraints must accept it. Allocates nothing.
[[nodiscard]] inline bool platforms_accept(const std::vector<platform_constraint>& platforms,
                                           const platform& p) noexcept {
  return platforms.empty() ||
         std::any_of(platforms.begin(), platforms.end(), [&](const platform_constraint& c) { return c.accepts(p); });
}

namespace detail {
/// Whether a list of platforms names `vendor` (empty: every vendor).
[[nodiscard]] inline bool platforms_name_vendor(const std::vector<platform_constraint>& platforms,
                                                device_vendor vendor) noexcept {
  return platforms.empty() || std::any_of(platforms.begin(), platforms.end(),
                                          [&](const platform_constraint& c) { return c.vendor == vendor; });
}
}  // namespace detail

/// A component the backend needs on the platform, optionally at a version in [min_version, below_version):
/// the same range as a call condition's components (catalog key `requires`).
using component_requirement = component_condition;

/// Head sizes that replace a variant's `head_sizes` (and `value_head_sizes`, when it declares them) for
/// one compute dtype (format 2): PyTorch's efficient attention aligns fp16/bf16 to 8 and fp32 to 4.
struct dtype_head_sizes {
  data_type dtype = data_type::float16;
  head_size_spec head_sizes;

  friend bool operator==(const dtype_head_sizes& a, const dtype_head_sizes& b) {
    return a.dtype == b.dtype && a.head_sizes == b.head_sizes;
  }
};

/// What one kernel variant accepts. Empty sets and `any` specs mean "no restriction" unless noted.
struct capabilities {
  std::string variant;              ///< variant name (`FA3`); empty for a backend without variants
  domain_set domains;               ///< variants only: domains this variant serves; empty = all of the backend's
  data_type_set dtypes;             ///< empty = any
  cache_dtype_set kv_cache_dtypes;  ///< empty = any; `auto` passes if listed or the compute dtype is
  head_size_spec head_sizes;
  std::optional<head_size_spec> value_head_sizes;   ///< unset: value head size must equal head size
  std::vector<std::uint32_t> block_size_multiples;  ///< empty = any; else a multiple of any entry
  std::uint32_t preferred_block_size = 0;           ///< 0 = no preference
  attention_type_set attn_types{attention_type::decoder};
  attention_mode mode = attention_mode::standard;
  feature_set features;                        ///< features this variant supports
  std::vector<platform_constraint> platforms;  ///< empty = every platform; else any one must accept
  std::vector<component_requirement> requires_components;
  // The call (format 2); see docs/model.md "Shape and phase".
  std::vector<dtype_head_sizes> head_sizes_by_dtype{};  ///< per-dtype head sizes; empty = `head_sizes` for all
  shape_limits shape{};                                 ///< ranges on the stated sequence lengths, batch, GQA group
  std::vector<call_rule> call_rules{};                  ///< conditional limits on the call

  /// The head sizes that apply to `dtype`: its `head_sizes_by_dtype` entry, else `head_sizes`.
  [[nodiscard]] const head_size_spec& head_sizes_for(data_type dtype) const noexcept {
    for (const auto& d : head_sizes_by_dtype)
      if (d.dtype == dtype) return d.head_sizes;
    return head_sizes;
  }
  /// True when the variant states anything about the call (a format-2 field).
  [[nodiscard]] bool reads_call() const noexcept {
    return !head_sizes_by_dtype.empty() || !shape.empty() || !call_rules.empty() ||
           std::any_of(requires_components.begin(), requires_components.end(),
                       [](const component_requirement& r) { return r.below_version.has_value(); });
  }

  friend bool operator==(const capabilities& a, const capabilities& b) { return detail::fields_equal(a, b); }
};

/// How a catalog states one capability field: its key, the catalog format that introduced it, the
/// largest value a count in it may take, whether the descriptor reads and writes it itself, and the
/// query field whose values it tells apart.
struct capability_field {
  std::string_view name;  ///< the JSON key
  int since;              ///< the catalog format that introduced the key (1 or 2)
  std::uint32_t bound;    ///< the largest count (a block size); 0 for a field that holds no count
  bool own_key;           ///< a variant's `name` and `domains`: read and written by the descriptor, not its codec
  /// The query count (its name in field_list<query>) whose values the field's numbers tell apart:
  /// `attnsel diff` takes candidate values of that axis from them. Empty for a field that names no
  /// count of the query (an enum set: the diff enumerates every enumerator), one the diff reads
  /// otherwise (the platform side, the call's ranges), or one whose count it holds fixed (the value
  /// head size, which the diff keeps equal to the head size).
  std::string_view query_field;
};

/// The field list of `capabilities` (see field_list.hpp). Names are the catalog's JSON keys, with two
/// exceptions: `variant` is a variant's `name`, and `shape` is written as its fields' own keys
/// (`seq_len_q`, `seq_len_kv`, `batch_size`, `gqa_group`). The catalog writer, the reader and the
/// inherited-element count iterate `members`, each value through the codec of its type (`value_json` in
/// catalog/impl/catalog_write_inl.hpp writes, `read_value` in catalog/impl/descriptor_reader.hpp reads), so a
/// field of a type that already has a codec needs no other edit there.
template <>
struct field_list<capabilities> {
  /// `visit(field, field_member<&capabilities::x>{})` for every field, in declaration order.
  template <class Visit>
  static constexpr void members(Visit&& visit) {
    using c = capabilities;
    visit(capability_field{"variant", 1, 0, true, ""}, field_member<&c::variant>{});
    visit(capability_field{"domains", 1, 0, true, ""}, field_member<&c::domains>{});
    visit(capability_field{"dtypes", 1, 0, false, ""}, field_member<&c::dtypes>{});
    visit(capability_field{"kv_cache_dtypes", 1, 0, false, ""}, field_member<&c::kv_cache_dtypes>{});
    visit(capability_field{"head_sizes", 1, 0, false, "head_size"}, field_member<&c::head_sizes>{});
    visit(capability_field{"value_head_sizes", 1, 0, false, ""}, field_member<&c::value_head_sizes>{});
    visit(capability_field{"block_size_multiples", 1, limits::block_size, false, "block_size"},
          field_member<&c::block_size_multiples>{});
    visit(capability_field{"preferred_block_size", 1, limits::block_size, false, "block_size"},
          field_member<&c::preferred_block_size>{});
    visit(capability_field{"attn_types", 1, 0, false, ""}, field_member<&c::attn_types>{});
    visit(capability_field{"mode", 1, 0, false, ""}, field_member<&c::mode>{});
    visit(capability_field{"features", 1, 0, false, ""}, field_member<&c::features>{});
    visit(capability_field{"platforms", 1, 0, false, ""}, field_member<&c::platforms>{});
    visit(capability_field{"requires", 1, 0, false, ""}, field_member<&c::requires_components>{});
    visit(capability_field{"head_sizes_by_dtype", 2, 0, false, "head_size"}, field_member<&c::head_sizes_by_dtype>{});
    visit(capability_field{"shape", 2, 0, false, ""}, field_member<&c::shape>{});
    visit(capability_field{"call_rules", 2, 0, false, "head_size"}, field_member<&c::call_rules>{});
  }
  template <class Visit, class... Caps>
  static constexpr void apply(Visit&& visit, Caps&&... c) {
    members([&](const capability_field& f, auto m) { visit(f.name, (c.*decltype(m)::value)...); });
  }
};
static_assert(detail::has_field_list<capabilities>::value, "field_list<capabilities> is specialised before any use");

/// A known-bad combination of one backend (catalog key `advisories`, format 2): an upstream bug or gap
/// that the engine works around by warning or by demoting the backend, with the issue that records it.
/// Advisories are kept apart from capabilities: a capability says what the kernel is built for, an
/// advisory what is known to go wrong within that. Every narrowing field left empty matches anything.
struct advisory {
  std::string id;                              ///< stable lower-kebab id: `vllm-fa4-batch-invariant-sinks`
  std::string variant;                         ///< only this variant of the backend; empty = any
  std::vector<platform_constraint> platforms;  ///< empty = every platform; else any one must accept
  cache_dtype_set kv_cache_dtypes;             ///< empty = any; else the query's KV-cache dtype is one
  call_condition when;                         ///< the call (dtypes, features, phase, shape, components)
  advisory_action action = advisory_action::warn;
  std::string message;                ///< what goes wrong, in a sentence (shown by explain and in errors)
  std::vector<std::string> upstream;  ///< the issues or pull requests that record it (URLs), at least one

  /// Whether it holds for `checked` (the variant the selection checked), `q` and `p`: `unknown` when
  /// the answer hangs on a field the query leaves unstated (then it is not applied; explain lists it).
  /// Allocates nothing.
  [[nodiscard]] truth holds(const capabilities& checked, const query& q, const platform& p) const noexcept;

  friend bool operator==(const advisory& a, const advisory& b) { return detail::fields_equal(a, b); }
};

/// The field list of `advisory` (see field_list.hpp). Names are the catalog's JSON keys.
template <>
struct field_list<advisory> {
  template <class Visit, class... Advisory>
  static constexpr void apply(Visit&& visit, Advisory&&... a) {
    visit("id", a.id...);
    visit("variant", a.variant...);
    visit("platforms", a.platforms...);
    visit("kv_cache_dtypes", a.kv_cache_dtypes...);
    visit("when", a.when...);
    visit("action", a.action...);
    visit("message", a.message...);
    visit("upstream", a.upstream...);
  }
};
static_assert(detail::has_field_list<advisory>::value, "field_list<advisory> is specialised before any use");

/// `vllm-fa4-batch-invariant-sinks (demote FA4 when +batch_invariant, +sinks)`.
[[nodiscard]] std::string to_string(const advisory& a);

/// A cross-field rule no declarative field can express. Returns true when the combination is
/// supported; on rejection, when `why` is non-null, stores a message with actual and supported values.
/// Called only after every declarative check passed (fast path) or always (explain path).
class custom_check {
 public:
  custom_check() noexcept = default;
  custom_check(std::nullptr_t) noexcept {}  // NOLINT(google-explicit-constructor): `= nullptr` clears it
  /// Any callable `bool(const capabilities&, const query&, const platform&, std::string*)`.
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, custom_check> &&
                                              std::is_invocable_r_v<bool, const std::decay_t<F>&, const capabilities&,
                                                                    const query&, const platform&, std::string*>>>
  custom_check(F f) : impl_(new model<std::decay_t<F>>(std::move(f))) {}  // NOLINT(google-explicit-constructor)
  custom_check(const custom_check& other) : impl_(other.impl_ ? other.impl_->clone() : nullptr) {}
  custom_check(custom_check&& other) noexcept : impl_(other.impl_) { other.impl_ = nullptr; }
  custom_check& operator=(custom_check other) noexcept {
    std::swap(impl_, other.impl_);
    return *this;
  }
  ~custom_check() { delete impl_; }

  explicit operator bool() const noexcept { return impl_ != nullptr; }
  /// Precondition: set (`operator bool`).
  bool operator()(const capabilities& variant, const query& q, const platform& p, std::string* why) const {
    return impl_->call(variant, q, p, why);
  }

 private:
  // A small type-erased callable instead of std::function, whose header would double the weight of the
  // selection core (<attnsel/core.hpp> has a preprocessed-size budget).
  struct callable {
    virtual ~callable() = default;
    virtual callable* clone() const = 0;
    virtual bool call(const capabilities& variant, const query& q, const platform& p, std::string* why) const = 0;
  };
  template <class F>
  struct model final : callable {
    explicit model(F fn) : f(std::move(fn)) {}
    callable* clone() const override { return new model(f); }
    bool call(const capabilities& variant, const query& q, const platform& p, std::string* why) const override {
      return static_cast<bool>(f(variant, q, p, why));
    }
    F f;
  };
  callable* impl_ = nullptr;
};

/// One attention backend: a name operators type, the domains it serves and what it accepts.
/// Order never lives here: priority is the policy's business.
struct backend_descriptor {
  std::string name;                  ///< canonical UPPER_SNAKE name
  std::vector<std::string> aliases;  ///< other accepted UPPER_SNAKE names
  std::string description;
  domain_set domains{attention_domain::decoder};
  capabilities caps;                   ///< used when `variants` is empty
  std::vector<capabilities> variants;  ///< sub-kernels; the first that accepts domain and platform is checked
  custom_check extra_check;            ///< optional cross-field predicate (not serialised to JSON)
  /// The engine runs it only when forced (catalog key `forced_only`): no automatic order lists it, and
  /// lint does not report it as unreachable.
  bool forced_only = false;
  /// Known-bad combinations (catalog key `advisories`); see `advisory`.
  std::vector<advisory> advisories{};

  /// Equality of the data; `extra_check` compares by presence only.
  friend bool operator==(const backend_descriptor& a, const backend_descriptor& b) {
    return a.name == b.name && a.aliases == b.aliases && a.description == b.description && a.domains == b.domains &&
           a.caps == b.caps && a.variants == b.variants && a.forced_only == b.forced_only &&
           a.advisories == b.advisories && static_cast<bool>(a.extra_check) == static_cast<bool>(b.extra_check);
  }
  friend bool operator!=(const backend_descriptor& a, const backend_descriptor& b) { return !(a == b); }
};

/// True for an UPPER_SNAKE backend name: [A-Z][A-Z0-9_]*, at most 64 characters.
[[nodiscard]] constexpr bool is_valid_backend_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > limits::name_length || !(name[0] >= 'A' && name[0] <= 'Z')) return false;
  // NOLINTNEXTLINE(readability-use-anyofallof): std::all_of is not constexpr before C++20; this function is
  for (char c : name)
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

/// True for an advisory id: lower-kebab, [a-z0-9][a-z0-9.-]*, at most 64 characters.
[[nodiscard]] constexpr bool is_valid_advisory_id(std::string_view id) noexcept {
  if (id.empty() || id.size() > limits::name_length || id[0] == '-' || id[0] == '.') return false;
  // NOLINTNEXTLINE(readability-use-anyofallof): std::all_of is not constexpr before C++20; this function is
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.')) return false;
  return true;
}

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/descriptor_inl.hpp>
#endif
