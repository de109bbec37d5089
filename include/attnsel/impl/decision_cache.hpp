// SPDX-License-Identifier: Apache-2.0
// The bound selector's decision cache: a bounded table of (query key, answer) slots, each a seqlock.
// IWYU pragma: private, include <attnsel/bound_selector.hpp>
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/impl/hot.hpp>
#include <attnsel/impl/shape_classes.hpp>
#include <attnsel/query.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// The most slots a cache takes (selector_options::max_cache_slots, checked equal in bound_selector_inl.hpp).
inline constexpr std::size_t max_cache_slots = std::size_t{1} << 16;

// Hit and miss counts (the selector reports them as cache_stats).
struct cache_counts {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};

// Everything of a query that a gate or a policy rule reads, as plain scalars: the cache key. A new
// query field is one member here and one line in key_of(). The feature list is keyed by identity:
// the address of its stored names, which a query's copies share (a slot keeps that list alive, so an
// equal address means the same immutable list). A query rebuilt with equal names is another key.
// The shape fields (catalog format 2) are keyed by class: the interval between the registry's own
// thresholds that holds the value (shape_thresholds), so calls of ever-new lengths still hit.
struct query_key {
  std::uint32_t domain = 0;
  std::uint32_t head_size = 0;
  std::uint32_t head_size_v = 0;
  std::uint32_t dtype = 0;
  std::uint32_t kv_cache_dtype = 0;
  std::uint32_t block_size = 0;
  std::uint32_t attn_type = 0;
  std::uint32_t mode = 0;
  std::uint32_t num_heads = 0;
  std::uint32_t phase = 0;
  std::array<std::uint32_t, shape_fields.size()> shape{};  // by shape_field: class (or value), 0 = unstated
  std::uint32_t equal_lengths = 0;  // seq_len_q == seq_len_kv, both stated (call rules may require it)
  std::uint32_t spare = 0;          // keeps the struct free of padding (see the static_assert)
  std::uint64_t features = 0;       // identity of the query's feature list; 0 when it requires none
};
static_assert(std::has_unique_object_representations_v<query_key>,
              "query_key must have no padding: its bytes are compared as words");

inline std::uint64_t feature_list_identity(const feature_set& f) noexcept {
  return f.empty() ? 0 : static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&*f.begin()));
}

// The one function that builds a key from a query. With `classes`, each shape field is keyed by its
// class; without, by its value (a registry with custom checks, which may read any length).
ATTNSEL_INTERNAL_ALWAYS_INLINE query_key key_of(const query& q, const shape_thresholds* classes = nullptr) noexcept {
  query_key k;
  k.domain = static_cast<std::uint32_t>(q.domain);
  k.head_size = q.head_size;
  k.head_size_v = q.value_head_size();
  k.dtype = static_cast<std::uint32_t>(q.dtype);
  k.kv_cache_dtype = static_cast<std::uint32_t>(q.kv_cache_dtype);
  k.block_size = q.block_size;
  k.attn_type = static_cast<std::uint32_t>(q.attn_type);
  k.mode = static_cast<std::uint32_t>(q.mode);
  k.num_heads = q.num_heads;
  k.phase = static_cast<std::uint32_t>(q.phase);
  for (shape_field f : shape_fields)
    k.shape[static_cast<std::size_t>(f)] = classes ? classes->class_of(q, f) : shape_value(q, f).value_or(0);
  k.equal_lengths = q.seq_len_q != 0 && q.seq_len_q == q.seq_len_kv ? 1U : 0U;
  k.features = feature_list_identity(q.required);
  return k;
}

// A direct-mapped table of slots (a power of two). Readers never block and write nothing shared but
// the counters; a writer that finds its slot being written by another thread skips its store (it is a
// cache). A torn read is detected by the slot's sequence number and reported as a miss, so a hit
// returns exactly a value stored under an equal key. Values are non-zero (0 marks an empty slot).
// The hit and miss counters are sharded by thread, so readers of one hot entry do not all write one
// cache line.
class decision_cache {
 public:
  static constexpr std::size_t key_words = sizeof(query_key) / 8;
  static_assert(sizeof(query_key) % 8 == 0, "query_key is compared as 64-bit words");
  using key_words_t = std::array<std::uint64_t, key_words>;

  // `slots` is rounded up to a power of two and clamped to [1, max_cache_slots].
  explicit decision_cache(std::size_t slots)
      : mask_(round_up(slots) - 1), slots_(mask_ + 1), counters_(counter_shards + 1) {}

  // Looks `q` up; on a hit stores the value in `value` and returns true. Counts the hit or miss.
  ATTNSEL_INTERNAL_ALWAYS_INLINE bool find(const query_key& key, std::uint64_t& value) const noexcept {
    const auto words = words_of(key);
    const slot& s = slots_[index(words)];
    auto& shard = counters_[shard_index()];
    // The seqlock reader: relaxed loads of the key and value between an acquire load of the sequence
    // number and an acquire fence before its second load. If any of them read a writer's store, the
    // second load sees that writer's odd (or a newer) number, and the look-up reports a miss.
    const std::uint64_t before = s.seq.load(std::memory_order_acquire);
    bool hit = true;
    for (std::size_t i = 0; i < key_words && hit; ++i) hit = s.key[i].load(std::memory_order_relaxed) == words[i];
    std::uint64_t v = 0;
    if (hit) {
      v = s.value.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      hit = v != 0 && ((before & 1U) | (s.seq.load(std::memory_order_relaxed) ^ before)) == 0;
    }
    (hit ? shard.hits : shard.misses).fetch_add(1, std::memory_order_relaxed);
    if (hit) value = v;
    return hit;
  }

  // Stores `value` (non-zero) for `q`, replacing whatever the slot held. The slot keeps a reference
  // to q's feature list, so the identity in its key names that list for as long as the slot holds it.
  void store(const query& q, const query_key& key, std::uint64_t value) noexcept {
    const auto words = words_of(key);
    slot& s = slots_[index(words)];
    std::uint64_t before = s.seq.load(std::memory_order_relaxed);
    // The acquire exchange keeps the stores below after it: no reader sees them with an even number.
    if ((before & 1U) != 0 ||
        !s.seq.compare_exchange_strong(before, before + 1, std::memory_order_acquire, std::memory_order_relaxed))
      return;                 // another thread is writing this slot
    s.features = q.required;  // only writers, serialised by the sequence number, touch it
    for (std::size_t i = 0; i < key_words; ++i) s.key[i].store(words[i], std::memory_order_release);
    s.value.store(value, std::memory_order_release);
    s.seq.store(before + 2, std::memory_order_release);
  }

  // Empties every slot and zeroes the counters. Not safe concurrently with find/store.
  void clear() noexcept {
    for (auto& s : slots_) {
      s.value.store(0, std::memory_order_relaxed);
      for (auto& w : s.key) w.store(0, std::memory_order_relaxed);
      s.features = feature_set();
    }
    for (auto& c : counters_) {
      c.hits.store(0, std::memory_order_relaxed);
      c.misses.store(0, std::memory_order_relaxed);
    }
  }

  [[nodiscard]] cache_counts stats() const noexcept {
    cache_counts out;
    for (const auto& c : counters_) {
      out.hits += c.hits.load(std::memory_order_relaxed);
      out.misses += c.misses.load(std::memory_order_relaxed);
    }
    return out;
  }
  [[nodiscard]] std::size_t size() const noexcept { return mask_ + 1; }

 private:
  struct slot {
    std::atomic<std::uint64_t> seq{0};  // odd while a writer is inside
    std::array<std::atomic<std::uint64_t>, key_words> key{};
    std::atomic<std::uint64_t> value{0};
    feature_set features;  // keeps the keyed feature list alive (writers only)
  };

  struct alignas(64) counter {
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
  };
  static constexpr std::size_t counter_shards = 16;

  ATTNSEL_INTERNAL_ALWAYS_INLINE static key_words_t words_of(const query_key& key) noexcept {
    key_words_t out;
    std::memcpy(out.data(), &key, sizeof key);
    return out;
  }

  // A thread's shard (1 to counter_shards; counters_[0] stays unused), dealt round-robin on the
  // thread's first look-up and then kept in a constant-initialised thread_local.
  static std::size_t shard_index() noexcept {
    static thread_local std::uint32_t shard = 0;
    static std::atomic<std::uint32_t> dealt{0};
    if (shard == 0) shard = dealt.fetch_add(1, std::memory_order_relaxed) % counter_shards + 1;
    return shard;
  }

  static std::size_t round_up(std::size_t n) noexcept {
    std::size_t p = 1;
    while (p < n && p < max_cache_slots) p <<= 1;
    return p;
  }
  [[nodiscard]] std::size_t index(const key_words_t& words) const noexcept {
    std::uint64_t h = 0;
    for (const auto w : words) h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 29;
    return static_cast<std::size_t>(h) & mask_;
  }

  std::size_t mask_;
  std::vector<slot> slots_;
  mutable std::vector<counter> counters_;
};

}  // namespace detail

ATTNSEL_END_NAMESPACE
