// SPDX-License-Identifier: Apache-2.0
// The query gates of one variant compiled to masks, for the platform-bound selector's fast path.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/descriptor.hpp>
#include <attnsel/enums.hpp>
#include <attnsel/impl/hot.hpp>
#include <attnsel/limits.hpp>
#include <attnsel/platform.hpp>
#include <attnsel/query.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// The kv-cache dtype and block size gates' questions, shared by the check gates (checks_inl.hpp) and
// the compiled masks below.
inline bool kv_cache_dtype_ok(const capabilities& c, const query& q) noexcept {
  if (c.kv_cache_dtypes.empty() || c.kv_cache_dtypes.contains(q.kv_cache_dtype)) return true;
  if (q.kv_cache_dtype != cache_dtype::automatic) return false;
  // "auto" stores the cache in the compute dtype, so a backend listing that dtype accepts it.
  switch (q.dtype) {
    case data_type::float16:
      return c.kv_cache_dtypes.contains(cache_dtype::float16);
    case data_type::bfloat16:
      return c.kv_cache_dtypes.contains(cache_dtype::bfloat16);
    case data_type::float32:
      return c.kv_cache_dtypes.contains(cache_dtype::float32);
  }
  return false;
}

inline bool block_size_ok(const capabilities& c, const query& q) noexcept {
  if (q.block_size == 0 || c.block_size_multiples.empty()) return true;
  return std::any_of(c.block_size_multiples.begin(), c.block_size_multiples.end(),
                     [&](std::uint32_t base) { return base != 0 && q.block_size % base == 0; });
}

// The enum fields of a query as one word with one bit per field group: the mode in bits [0, 8), the
// attention type in [8, 16), the (dtype, kv-cache dtype) pair in [16, 64). A variant's (or a rule's)
// accepting word has every bit it accepts set, so all four enum gates are one test:
// (accepts & bits) == bits.
inline constexpr unsigned kv_slots = 16;
static_assert(enum_values<attention_mode>().size() <= 8, "query word: mode group is 8 bits");
static_assert(enum_values<attention_type>().size() <= 8, "query word: attention type group is 8 bits");
static_assert(enum_values<cache_dtype>().size() <= kv_slots, "query word: kv-cache dtype group is 16 bits");
static_assert(enum_values<data_type>().size() * kv_slots <= 48, "query word: (dtype, kv) group is 48 bits");

constexpr std::uint64_t mode_bit(attention_mode m) noexcept { return std::uint64_t{1} << static_cast<unsigned>(m); }
constexpr std::uint64_t attn_type_bit(attention_type t) noexcept {
  return std::uint64_t{1} << (8U + static_cast<unsigned>(t));
}
constexpr std::uint64_t dtype_kv_bit(data_type d, cache_dtype k) noexcept {
  return std::uint64_t{1} << (16U + static_cast<unsigned>(d) * kv_slots + static_cast<unsigned>(k));
}

// True when every enum field is one of its enumerators (so the shifts above are defined).
constexpr bool enums_in_range(const query& q) noexcept {
  return static_cast<std::size_t>(q.mode) < enum_values<attention_mode>().size() &&
         static_cast<std::size_t>(q.attn_type) < enum_values<attention_type>().size() &&
         static_cast<std::size_t>(q.dtype) < enum_values<data_type>().size() &&
         static_cast<std::size_t>(q.kv_cache_dtype) < enum_values<cache_dtype>().size() &&
         static_cast<std::size_t>(q.domain) < enum_values<attention_domain>().size();
}

// Head sizes 8, 16, ..., 512 (every size a kernel of the catalogs lists) have a bit each.
inline constexpr std::uint32_t head_size_step = 8;
inline constexpr unsigned no_slot = 64;
constexpr unsigned head_slot(std::uint32_t size) noexcept {
  return size != 0 && size % head_size_step == 0 && size <= head_size_step * 64 ? size / head_size_step - 1 : no_slot;
}
// Block sizes: 0 (not pinned) is bit 31, a power of two 2^k up to the block-size limit is bit k.
inline constexpr unsigned block_unpinned_slot = 31;
static_assert(limits::block_size <= (1U << 30), "block slots: powers of two must stay below bit 31");
inline unsigned block_slot(std::uint32_t size) noexcept {
  if (size == 0) return block_unpinned_slot;
  if ((size & (size - 1)) != 0 || size > limits::block_size) return no_slot;
#if defined(__GNUC__) || defined(__clang__)
  return static_cast<unsigned>(__builtin_ctz(size));
#else
  unsigned k = 0;
  while ((std::uint32_t{1} << k) != size) ++k;
  return k;
#endif
}

// What a selection computes once about its query, for every candidate to test against.
struct query_facts {
  std::uint64_t bits = 0;  // the query word
  unsigned head = no_slot;
  unsigned value_head = no_slot;
  unsigned block = no_slot;
  bool same_head_sizes = true;
  std::array<std::uint64_t, 2> required{};  // feature bits of a bound selector's dictionary
};

ATTNSEL_GATE query_facts facts_of(const query& q, const std::array<std::uint64_t, 2>& required) noexcept {
  query_facts f;
  f.bits = mode_bit(q.mode) | attn_type_bit(q.attn_type) | dtype_kv_bit(q.dtype, q.kv_cache_dtype);
  f.head = head_slot(q.head_size);
  f.same_head_sizes = q.value_head_size() == q.head_size;
  f.value_head = head_slot(q.value_head_size());
  f.block = block_slot(q.block_size);
  f.required = required;
  return f;
}

// The query gates (mode .. custom of `check_gates`) of one resolved variant as masks. Passing or
// failing them all is exactly `first_query_failure` passing or failing (a test compares both on every
// catalog variant); which gate failed is the explain path's business.
struct query_gates {
  const backend_descriptor* backend = nullptr;
  const capabilities* variant = nullptr;
  std::uint64_t accepts = 0;                // query words the mode, attention type, dtype and kv gates pass
  std::uint64_t head_sizes = 0;             // bit k: head size 8(k+1) accepted
  std::uint64_t value_head_sizes = 0;       // the same for a value head size that differs from the head size
  std::array<std::uint64_t, 2> declared{};  // the variant's features as dictionary bits
  std::uint32_t block_sizes = 0;            // bit k: block size 2^k accepted; bit 31: unpinned
  bool value_heads_listed = false;          // the variant accepts a different value head size at all
  bool custom = false;                      // the backend has an extra_check
};

inline query_gates compile_query_gates(const backend_descriptor& b, const capabilities& v,
                                       const std::array<std::uint64_t, 2>& declared) {
  query_gates g;
  g.backend = &b;
  g.variant = &v;
  g.declared = declared;
  g.custom = static_cast<bool>(b.extra_check);
  g.value_heads_listed = v.value_head_sizes.has_value();
  query probe;
  for (const auto m : enum_values<attention_mode>())
    if (m == v.mode) g.accepts |= mode_bit(m);
  for (const auto t : enum_values<attention_type>())
    if (v.attn_types.empty() || v.attn_types.contains(t)) g.accepts |= attn_type_bit(t);
  for (const auto d : enum_values<data_type>()) {
    if (!v.dtypes.empty() && !v.dtypes.contains(d)) continue;
    probe.dtype = d;
    for (const auto k : enum_values<cache_dtype>()) {
      probe.kv_cache_dtype = k;
      if (kv_cache_dtype_ok(v, probe)) g.accepts |= dtype_kv_bit(d, k);
    }
  }
  for (unsigned k = 0; k < 64; ++k) {
    const std::uint32_t size = head_size_step * (k + 1);
    if (v.head_sizes.accepts(size)) g.head_sizes |= std::uint64_t{1} << k;
    if (v.value_head_sizes && v.value_head_sizes->accepts(size)) g.value_head_sizes |= std::uint64_t{1} << k;
  }
  g.block_sizes = std::uint32_t{1} << block_unpinned_slot;
  for (unsigned k = 0; (std::uint32_t{1} << k) <= limits::block_size; ++k) {
    probe.block_size = std::uint32_t{1} << k;
    if (block_size_ok(v, probe)) g.block_sizes |= std::uint32_t{1} << k;
  }
  return g;
}

// True when the variant passes every query gate for `q` (whose facts are `f`) on `p`.
ATTNSEL_GATE bool passes(const query_gates& g, const query_facts& f, const query& q, const platform& p) noexcept {
  if ((g.accepts & f.bits) != f.bits) return false;
  const capabilities& v = *g.variant;
  if (f.head != no_slot ? ((g.head_sizes >> f.head) & 1U) == 0 : !v.head_sizes.accepts(q.head_size)) return false;
  if (!f.same_head_sizes) {
    if (!g.value_heads_listed) return false;
    if (f.value_head != no_slot ? ((g.value_head_sizes >> f.value_head) & 1U) == 0
                                : !v.value_head_sizes->accepts(q.value_head_size()))
      return false;
  }
  if (f.block != no_slot ? ((g.block_sizes >> f.block) & 1U) == 0 : !block_size_ok(v, q)) return false;
  if (((f.required[0] & ~g.declared[0]) | (f.required[1] & ~g.declared[1])) != 0) return false;
  if (!g.custom) return true;
  // Last, as in check_gates: a custom check sees only queries every declarative gate accepted.
  try {
    return g.backend->extra_check(v, q, p, nullptr);
  } catch (...) {
    return false;  // a throwing predicate rejects its backend, as on the other paths
  }
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
