// SPDX-License-Identifier: Apache-2.0
// One attention layer's requirements (the selection key) and the open set of named features.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/field_list.hpp>
#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/limits.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// Names of the features attnsel knows out of the box. The set is open: an engine may require and
/// declare any lower_snake name; these are the ones the reference catalog and the CLI document.
namespace features {
inline constexpr std::string_view sinks = "sinks";
inline constexpr std::string_view sliding_window = "sliding_window";
inline constexpr std::string_view alibi = "alibi";
inline constexpr std::string_view softcap = "softcap";
inline constexpr std::string_view mm_prefix = "mm_prefix";
inline constexpr std::string_view per_head_quant_scales = "per_head_quant_scales";
inline constexpr std::string_view non_causal = "non_causal";
inline constexpr std::string_view kv_connector = "kv_connector";
inline constexpr std::string_view dcp = "dcp";
inline constexpr std::string_view pcp = "pcp";
inline constexpr std::string_view batch_invariant = "batch_invariant";

struct known_feature {
  std::string_view name;
  std::string_view doc;
};
/// The documented features, in display order.
inline constexpr std::array<known_feature, 11> known{{
    {sinks, "attention sinks (gpt-oss)"},
    {sliding_window, "sliding-window (local) attention"},
    {alibi, "ALiBi positional bias"},
    {softcap, "logit soft-capping (Gemma 2)"},
    {mm_prefix, "bidirectional attention over a multimodal prefix"},
    {per_head_quant_scales, "per-head KV quantisation scales"},
    {non_causal, "non-causal attention inside the paged decoder path"},
    {kv_connector, "works with a KV-cache connector (disaggregated prefill)"},
    {dcp, "decode context parallelism"},
    {pcp, "prefill context parallelism"},
    {batch_invariant, "batch-invariant (deterministic) kernels"},
}};
}  // namespace features

/// True for a lower_snake name: [a-z][a-z0-9_]*, at most 64 characters.
[[nodiscard]] constexpr bool is_valid_feature_name(std::string_view name) noexcept {
  if (name.empty() || name.size() > limits::name_length || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  // NOLINTNEXTLINE(readability-use-anyofallof): std::all_of is not constexpr before C++20; this function is
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

namespace detail {
/// An immutable list of names shared by reference count. std::shared_ptr would do, but its header
/// adds about 3,000 lines to every file that includes the selection core (<attnsel/core.hpp> budget).
class shared_names {
 public:
  shared_names() noexcept = default;
  explicit shared_names(std::vector<std::string> names) : rep_(new rep{std::move(names), {1}}) {}
  shared_names(const shared_names& other) noexcept : rep_(other.rep_) {
    if (rep_) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  shared_names(shared_names&& other) noexcept : rep_(other.rep_) { other.rep_ = nullptr; }
  shared_names& operator=(shared_names other) noexcept {
    std::swap(rep_, other.rep_);
    return *this;
  }
  ~shared_names() {
    if (rep_ && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rep_;
  }
  [[nodiscard]] const std::vector<std::string>* get() const noexcept { return rep_ ? &rep_->names : nullptr; }
  friend bool operator==(const shared_names& a, const shared_names& b) noexcept { return a.rep_ == b.rep_; }

 private:
  struct rep {
    std::vector<std::string> names;
    std::atomic<std::size_t> refs;
  };
  rep* rep_ = nullptr;
};

/// The tag of feature_set's constructor for lists already sorted and unique.
struct sorted_unique_t {
  explicit sorted_unique_t() = default;
};
inline constexpr sorted_unique_t sorted_unique{};
}  // namespace detail

/// A sorted set of feature names. Membership and inclusion tests never allocate.
/// Copies share one immutable list (copy-on-write), so a catalog variant that inherits its backend's
/// features costs a reference count, not a copy: memory stays proportional to the catalog text.
class feature_set {
 public:
  feature_set() = default;
  feature_set(std::initializer_list<std::string_view> names) {
    std::vector<std::string> list;
    list.reserve(names.size());
    for (auto n : names) list.emplace_back(n);
    *this = feature_set(std::move(list));
  }
  /// Sorts and de-duplicates `names` once: O(n log n) for any input order (bulk readers use this).
  explicit feature_set(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    if (!names.empty()) names_ = detail::shared_names(std::move(names));
  }
  /// Takes `names` as they are: the caller guarantees them sorted and unique (asserted in debug builds).
  feature_set(detail::sorted_unique_t, std::vector<std::string> names) {
    assert(std::adjacent_find(names.begin(), names.end(),
                              [](const std::string& a, const std::string& b) { return !(a < b); }) == names.end());
    if (!names.empty()) names_ = detail::shared_names(std::move(names));
  }

  /// Inserts `name` (no validation here; loaders and the CLI validate what people type).
  /// O(size): for many names build the set from a vector instead.
  void insert(std::string_view name) {
    const auto& cur = list();
    const auto it = std::lower_bound(cur.begin(), cur.end(), name);
    if (it != cur.end() && *it == name) return;
    std::vector<std::string> next;
    next.reserve(cur.size() + 1);
    next.insert(next.end(), cur.begin(), it);
    next.emplace_back(name);
    next.insert(next.end(), it, cur.end());
    names_ = detail::shared_names(std::move(next));
  }
  /// Removes `name` when present (nothing else changes). O(size), like insert.
  void erase(std::string_view name) {
    const auto& cur = list();
    const auto it = std::lower_bound(cur.begin(), cur.end(), name);
    if (it == cur.end() || *it != name) return;
    if (cur.size() == 1) {
      names_ = detail::shared_names();
      return;
    }
    std::vector<std::string> next;
    next.reserve(cur.size() - 1);
    next.insert(next.end(), cur.begin(), it);
    next.insert(next.end(), it + 1, cur.end());
    names_ = detail::shared_names(std::move(next));
  }
  [[nodiscard]] bool contains(std::string_view name) const noexcept {
    return std::binary_search(begin(), end(), name, std::less<>{});
  }
  /// True when every name of `required` is in this set.
  [[nodiscard]] bool includes(const feature_set& required) const noexcept {
    return std::includes(begin(), end(), required.begin(), required.end());
  }
  /// True when at least one name is in both sets.
  [[nodiscard]] bool intersects(const feature_set& other) const noexcept {
    auto a = begin();
    auto b = other.begin();
    while (a != end() && b != other.end()) {
      if (*a == *b) return true;
      if (*a < *b)
        ++a;
      else
        ++b;
    }
    return false;
  }
  // The empty set holds no list: these read the pointer only (no function-local static to guard),
  // so iterating a query's usually empty feature set costs a compare on the selection path.
  [[nodiscard]] bool empty() const noexcept { return names_.get() == nullptr; }
  [[nodiscard]] std::size_t size() const noexcept { return empty() ? 0 : names_.get()->size(); }
  using const_iterator = std::vector<std::string>::const_iterator;
  [[nodiscard]] const_iterator begin() const noexcept { return empty() ? const_iterator() : names_.get()->begin(); }
  [[nodiscard]] const_iterator end() const noexcept { return empty() ? const_iterator() : names_.get()->end(); }
  /// True when both sets share one stored list (a copy not modified since).
  [[nodiscard]] bool shares_storage_with(const feature_set& other) const noexcept {
    return names_.get() != nullptr && names_ == other.names_;
  }

  friend bool operator==(const feature_set& a, const feature_set& b) {
    return a.names_ == b.names_ || a.list() == b.list();
  }
  friend bool operator!=(const feature_set& a, const feature_set& b) { return !(a == b); }

 private:
  [[nodiscard]] const std::vector<std::string>& list() const noexcept {
    static const std::vector<std::string> none;
    return names_.get() ? *names_.get() : none;
  }
  detail::shared_names names_;  // null when empty; never modified once shared
};

/// What one attention layer needs. Every input a capability check reads is here or in `platform`.
struct query {
  attention_domain domain = attention_domain::decoder;
  std::uint32_t head_size = 128;
  std::uint32_t head_size_v = 0;  ///< value head size; 0 = same as head_size
  data_type dtype = data_type::bfloat16;
  cache_dtype kv_cache_dtype = cache_dtype::automatic;
  std::uint32_t block_size = 0;  ///< 0 = not pinned: do not filter on block size
  attention_type attn_type = attention_type::decoder;
  attention_mode mode = attention_mode::standard;
  std::uint32_t num_heads = 0;  ///< query heads per rank; 0 = unknown (only policies read it)
  feature_set required;         ///< features the layer cannot run without

  // The call (catalog format 2). Every field may stay unstated (0); see docs/model.md "Shape and phase".
  attention_phase phase = attention_phase::unstated;  ///< prefill, decode, or unstated
  std::uint32_t seq_len_q = 0;                        ///< query tokens per sequence in the call; 0 = unstated
  std::uint32_t seq_len_kv = 0;    ///< key/value tokens per sequence (KV cache included); 0 = unstated
  std::uint32_t batch_size = 0;    ///< sequences in the call; 0 = unstated
  std::uint32_t num_kv_heads = 0;  ///< key/value heads per rank; 0 = unstated

  /// The value head size the layer actually uses.
  [[nodiscard]] std::uint32_t value_head_size() const noexcept { return head_size_v ? head_size_v : head_size; }

  friend bool operator==(const query& a, const query& b) {
    return a.domain == b.domain && a.head_size == b.head_size && a.value_head_size() == b.value_head_size() &&
           a.dtype == b.dtype && a.kv_cache_dtype == b.kv_cache_dtype && a.block_size == b.block_size &&
           a.attn_type == b.attn_type && a.mode == b.mode && a.num_heads == b.num_heads && a.required == b.required &&
           a.phase == b.phase && a.seq_len_q == b.seq_len_q && a.seq_len_kv == b.seq_len_kv &&
           a.batch_size == b.batch_size && a.num_kv_heads == b.num_kv_heads;
  }
};

/// One field of a query as its readers and writers see it. It converts to its name, so a visitor may
/// take a `std::string_view`.
struct query_field {
  std::string_view name;  ///< the JSON key and Python keyword; the CLI flag is `--` and the name with dashes
  std::string_view doc;   ///< what it is, a noun phrase for help texts and docstrings
  std::uint32_t max = 0;  ///< a count's largest value (limits.hpp); 0 for a field that counts nothing
  /// Non-empty when its zero (a count) or first enumerator (`phase`) means "not stated", and what that
  /// means: null in JSON, None in Python, the CLI flag's default.
  std::string_view unstated;
  constexpr operator std::string_view() const noexcept { return name; }  // NOLINT(google-explicit-constructor)
};

/// The field list of `query` (see field_list.hpp): `visit(field, member)` for every field, in
/// declaration order, `field` a query_field. The member `required` is the field `features`. Equality is
/// the one exception to "the list drives it": a value head size of 0 equals the head size it stands for.
/// The JSON writer and reader, the Python `Query` and the CLI's flags take each field's name, bounds,
/// text and meaning of zero from here.
template <>
struct field_list<query> {
  /// Deprecated: `field_member<M>` (field_list.hpp), which every field list shares.
  template <auto M>
  using member [[deprecated("use field_member<M>")]] = field_member<M>;

  /// `visit(field, field_member<&query::x>{})` for every field, in declaration order.
  template <class Visit>
  static constexpr void members(Visit&& visit) {
    visit(query_field{"domain", "Model part", 0, ""}, field_member<&query::domain>{});
    visit(query_field{"head_size", "Query and key head size", max_head_size, ""}, field_member<&query::head_size>{});
    visit(query_field{"head_size_v", "Value head size", max_head_size, "the head size"},
          field_member<&query::head_size_v>{});
    visit(query_field{"dtype", "Compute dtype", 0, ""}, field_member<&query::dtype>{});
    visit(query_field{"kv_cache_dtype", "KV-cache dtype", 0, ""}, field_member<&query::kv_cache_dtype>{});
    visit(query_field{"block_size", "KV-cache block size", max_block_size, "not pinned"},
          field_member<&query::block_size>{});
    visit(query_field{"attn_type", "Attention type", 0, ""}, field_member<&query::attn_type>{});
    visit(query_field{"mode", "Attention formulation, or a linear layer's kind (domain linear)", 0, ""},
          field_member<&query::mode>{});
    visit(query_field{"num_heads", "Query heads per rank", max_num_heads, "unknown"},
          field_member<&query::num_heads>{});
    visit(query_field{"features", "Required features (lower_snake names)", 0, ""}, field_member<&query::required>{});
    visit(query_field{"phase", "Phase of the call", 0, "unstated: the layer as a whole"},
          field_member<&query::phase>{});
    visit(query_field{"seq_len_q", "Query tokens per sequence in the call", limits::seq_len, "unstated"},
          field_member<&query::seq_len_q>{});
    visit(query_field{"seq_len_kv", "Key/value tokens per sequence (KV cache included)", limits::seq_len, "unstated"},
          field_member<&query::seq_len_kv>{});
    visit(query_field{"batch_size", "Sequences in the call", limits::batch_size, "unstated"},
          field_member<&query::batch_size>{});
    visit(query_field{"num_kv_heads", "Key/value heads per rank (dividing num_heads)", max_num_heads, "unstated"},
          field_member<&query::num_kv_heads>{});
  }
  template <class Visit, class... Query>
  static constexpr void apply(Visit&& visit, Query&&... q) {
    members([&](const query_field& field, auto m) { visit(field, (q.*decltype(m)::value)...); });
  }
};
static_assert(detail::has_field_list<query>::value, "field_list<query> is specialised before any use");

/// True when every field is in range: head size in [1, max_head_size], value head size 0 or in that
/// range, block size and head counts within their maxima, sequence lengths and batch within theirs,
/// num_kv_heads dividing num_heads when both are stated, domain and phase among their enumerators, feature
/// names lower_snake. Allocates nothing.
/// Inline: every uncached select asks it first, so the usual valid query costs a few folded compares.
[[nodiscard]] ATTNSEL_INTERNAL_ALWAYS_INLINE bool is_valid(const query& q) noexcept {
  // `&` rather than `&&`: one branch for all the limits (head_size - 1 wraps for 0).
  constexpr std::size_t domains = enum_values<attention_domain>().size();
  constexpr std::size_t phases = enum_values<attention_phase>().size();
  const bool in_limits = (q.head_size - 1U < max_head_size) & (q.head_size_v <= max_head_size) &
                         (q.block_size <= max_block_size) & (q.num_heads <= max_num_heads) &
                         (q.num_kv_heads <= max_num_heads) & (q.seq_len_q <= limits::seq_len) &
                         (q.seq_len_kv <= limits::seq_len) & (q.batch_size <= limits::batch_size) &
                         (static_cast<std::size_t>(q.phase) < phases) & (static_cast<std::size_t>(q.domain) < domains);
  if (!in_limits) return false;
  // Equal head counts (the usual case) divide without a division.
  if (q.num_heads != q.num_kv_heads && q.num_heads != 0 && q.num_kv_heads != 0 && q.num_heads % q.num_kv_heads != 0)
    return false;
  // A plain loop: std::all_of here costs the bound select about 35 instructions (g++ 12 inlines the
  // whole walk differently around it).
  for (const auto& f : q.required)  // NOLINT(readability-use-anyofallof)
    if (!is_valid_feature_name(f)) return false;
  return true;
}
/// Why `q` is not valid (empty when it is).
[[nodiscard]] std::string validation_message(const query& q);

/// One-line text of a query: `decoder attention (head_size=128, dtype=bfloat16, kv_cache_dtype=auto, ...)`.
[[nodiscard]] std::string to_string(const query& q);
/// Deprecated: `to_string(q)`.
[[deprecated("use to_string(q)")]] [[nodiscard]] inline std::string summary(const query& q) { return to_string(q); }

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/query_inl.hpp>
#endif
