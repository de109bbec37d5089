// SPDX-License-Identifier: Apache-2.0
// The bound selector's decision cache: a bounded table of (query key, answer) slots, each a seqlock.
// IWYU pragma: private, include <attnsel/core/selector.hpp>
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/impl/shape_classes.hpp>
#include <attnsel/core/query.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// The most slots a cache takes (selector_options::max_cache_slots, checked equal in selector_inl.hpp).
inline constexpr std::size_t max_cache_slots = std::size_t{1} << 16;

// Hit and miss counts (the selector reports them as cache_stats).
struct cache_counts {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
};

// Everything of a query that a gate or a policy rule reads, as six words: the cache key. Each field
// keeps its whole width (a 32-bit count in half a word, an enumeration in a byte), so the key is
// one-to-one on those fields with no limit of its own; the words are composed in registers, not
// written field by field and read back as words (which would stall on store forwarding).
//   word 0: head_size, value head size        word 3: seq_len_kv, batch_size
//   word 1: block_size, num_heads             word 4: domain, dtype, kv_cache_dtype, attn_type, mode,
//   word 2: num_kv_heads, seq_len_q                   phase, equal lengths (a byte each)
//                                             word 5: the features, by value
// A new query field is a place in one word here. The features are keyed by value: one bit for each
// feature name the registry names anywhere (feature_vocabulary: at most 64), so a query rebuilt with
// equal names is the same key. A query requiring a name the registry never names is not cached (no
// backend declares it; the walk answers). A registry naming more than 64 features keys the list by
// identity instead: the address of its stored names, which a query's copies share (a slot keeps that
// list alive, so an equal address means the same immutable list).
// The call's lengths and batch (catalog format 2) are keyed by class: the interval between the
// registry's own thresholds that holds the value (shape_thresholds), so calls of ever-new lengths
// still hit. num_kv_heads, a layer's constant, is keyed by value: with num_heads it fixes the GQA
// group and whether the query is valid, so a hit needs neither a division nor a validity check.
struct query_key {
  std::array<std::uint64_t, 6> words{};
};

inline std::uint64_t feature_list_identity(const feature_set& f) noexcept {
  return f.empty() ? 0 : static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&*f.begin()));
}

constexpr std::uint64_t key_pair(std::uint32_t low, std::uint32_t high) noexcept {
  return low | (std::uint64_t{high} << 32);
}
template <class E>
constexpr std::uint64_t key_byte(E e, unsigned byte) noexcept {
  static_assert(sizeof(E) == 1, "an enumeration in query_key takes one byte");
  return std::uint64_t{static_cast<std::uint8_t>(e)} << (8 * byte);
}

// The feature names a registry's gates and rules can read, sorted: the vocabulary of the feature bits.
class feature_vocabulary {
 public:
  static constexpr std::size_t max_names = 64;
  feature_vocabulary() = default;
  // Sorts and de-duplicates `names`; more than max_names turns the vocabulary off (identity keys).
  explicit feature_vocabulary(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    by_value_ = names.size() <= max_names;
    if (by_value_) names_ = std::move(names);
  }
  [[nodiscard]] bool by_value() const noexcept { return by_value_; }
  // The key word of `f`: a bit per name when every name is in the vocabulary (true), else false.
  // Without a vocabulary (too many names), the list's identity, and true.
  ATTNSEL_INTERNAL_ALWAYS_INLINE bool word_of(const feature_set& f, std::uint64_t& word) const noexcept {
    if (f.empty()) {
      word = 0;
      return true;
    }
    if (!by_value_) {
      word = feature_list_identity(f);
      return true;
    }
    std::uint64_t bits = 0;
    for (const auto& name : f) {
      const auto it = std::lower_bound(names_.begin(), names_.end(), name);
      if (it == names_.end() || *it != name) return false;
      bits |= std::uint64_t{1} << static_cast<unsigned>(it - names_.begin());
    }
    word = bits;
    return true;
  }

 private:
  std::vector<std::string> names_;
  bool by_value_ = false;
};

// The one function that builds a key from a query; `features` is its feature word (feature_vocabulary).
// With `classes`, the lengths and batch are keyed by class; without, by value (a registry with custom
// checks, which may read any length).
ATTNSEL_INTERNAL_ALWAYS_INLINE query_key key_of(const query& q, std::uint64_t features,
                                                const shape_thresholds* classes = nullptr) noexcept {
  std::uint32_t seq_len_q = q.seq_len_q;
  std::uint32_t seq_len_kv = q.seq_len_kv;
  std::uint32_t batch_size = q.batch_size;
  if (classes != nullptr) {
    seq_len_q = classes->class_of(shape_field::seq_len_q, seq_len_q);
    seq_len_kv = classes->class_of(shape_field::seq_len_kv, seq_len_kv);
    batch_size = classes->class_of(shape_field::batch_size, batch_size);
  }
  const bool equal_lengths = q.seq_len_q != 0 && q.seq_len_q == q.seq_len_kv;
  query_key k;
  k.words[0] = key_pair(q.head_size, q.value_head_size());
  k.words[1] = key_pair(q.block_size, q.num_heads);
  k.words[2] = key_pair(q.num_kv_heads, seq_len_q);
  k.words[3] = key_pair(seq_len_kv, batch_size);
  k.words[4] = key_byte(q.domain, 0) | key_byte(q.dtype, 1) | key_byte(q.kv_cache_dtype, 2) | key_byte(q.attn_type, 3) |
               key_byte(q.mode, 4) | key_byte(q.phase, 5) | (std::uint64_t{equal_lengths} << 48);
  k.words[5] = features;
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
  static constexpr std::size_t key_words = std::tuple_size_v<decltype(query_key::words)>;
  using key_words_t = std::array<std::uint64_t, key_words>;

  // `slots` is rounded up to a power of two and clamped to [1, max_cache_slots].
  explicit decision_cache(std::size_t slots)
      : mask_(round_up(slots) - 1), slots_(mask_ + 1), counters_(counter_shards + 1) {}

  // Looks `q` up; on a hit stores the value in `value` and returns true. Counts the hit or miss.
  ATTNSEL_INTERNAL_ALWAYS_INLINE bool find(const query_key& key, std::uint64_t& value) const noexcept {
    const auto& words = key.words;
    const slot& s = slots_[index(words)];
    auto& shard = counters_[shard_index()];
    // The seqlock reader: relaxed loads of the key and value between an acquire load of the sequence
    // number and an acquire fence before its second load. If any of them read a writer's store, the
    // second load sees that writer's odd (or a newer) number, and the look-up reports a miss.
    const std::uint64_t before = s.seq.load(std::memory_order_acquire);
    std::uint64_t differ = 0;  // every word compared, without a branch per word
#pragma GCC unroll 8
    for (std::size_t i = 0; i < key_words; ++i) differ |= s.key[i].load(std::memory_order_relaxed) ^ words[i];
    bool hit = differ == 0;
    std::uint64_t v = 0;
    if (hit) {
      v = s.value.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      hit = v != 0 && ((before & 1U) | (s.seq.load(std::memory_order_relaxed) ^ before)) == 0;
    }
    bump(hit ? shard.hits : shard.misses);
    if (hit) value = v;
    return hit;
  }

  // Stores `value` (non-zero) for `q`, replacing whatever the slot held. The slot keeps a reference
  // to q's feature list, so the identity in its key names that list for as long as the slot holds it.
  void store(const query& q, const query_key& key, std::uint64_t value) noexcept {
    const auto& words = key.words;
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
  static_assert(sizeof(void*) != 8 || sizeof(slot) == 72, "selector.hpp and docs/model.md state 72 bytes a slot");

  // A count that, as a rule, only its shard's thread writes: a load and a store, not a locked
  // read-modify-write (which cost a hit about a fifth of its time). Threads are dealt the shards in
  // turn, so the process's 65th looking-up thread shares the first one's shard, and an increment that
  // races another on a shared shard may be lost: the counts are statistics, never read by a selection.
  ATTNSEL_INTERNAL_ALWAYS_INLINE static void bump(std::atomic<std::uint64_t>& count) noexcept {
    count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }

  struct alignas(64) counter {
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
  };
  static constexpr std::size_t counter_shards = 64;

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
  // Each word times its own odd constant, the products summed: independent multiplies (a chained
  // hash would wait on each), then the high bits folded down, since a product's low bits see only
  // its factor's low bits.
  [[nodiscard]] std::size_t index(const key_words_t& words) const noexcept {
    constexpr std::array<std::uint64_t, 8> odd{0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL, 0x165667b19e3779f9ULL,
                                               0xd6e8feb86659fd93ULL, 0xff51afd7ed558ccdULL, 0xc4ceb9fe1a85ec53ULL,
                                               0x94d049bb133111ebULL, 0xbf58476d1ce4e5b9ULL};
    static_assert(key_words <= odd.size(), "a multiplier per key word");
    std::uint64_t h = 0;
    for (std::size_t i = 0; i < key_words; ++i) h += words[i] * odd[i];
    h ^= h >> 32;
    h ^= h >> 17;
    return static_cast<std::size_t>(h) & mask_;
  }

  std::size_t mask_;
  std::vector<slot> slots_;
  mutable std::vector<counter> counters_;
};

}  // namespace detail

ATTNSEL_END_NAMESPACE
