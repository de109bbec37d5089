// SPDX-License-Identifier: Apache-2.0
// A bounded, lock-free decision cache: fixed slots, each a seqlock over a packed query key and answer.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/impl/hot.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// Hit and miss counts of a decision cache since it was built or cleared.
struct cache_stats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;  ///< look-ups that found nothing (the answer was then computed)
};

/// A query packed into four words: every field a gate or a policy rule reads.
using cache_key = std::array<std::uint64_t, 4>;

/// A direct-mapped table of `slots` entries (rounded up to a power of two). Readers never block and
/// never write shared data except the counters; a writer that finds its slot being written by another
/// thread skips the store (it is a cache). A torn read is detected by the slot's sequence number and
/// reported as a miss, so a hit always returns a value that was stored under exactly that key.
/// Values are non-zero 64-bit words (0 marks an empty slot). The hit and miss counters are sharded
/// by thread, so that readers of one hot entry do not all write the same cache line.
/// Movable (the slots live on the heap); not safe to move while other threads use it.
class decision_cache {
 public:
  explicit decision_cache(std::size_t slots)
      : mask_(round_up(slots) - 1), slots_(mask_ + 1), counters_(counter_shards + 1) {}

  /// Looks `key` up; on a hit stores the value in `value` and returns true. Counts the hit or miss.
  /// Always inlined: it is most of a selector's cache hit.
  ATTNSEL_GATE bool find(const cache_key& key, std::uint64_t& value) const noexcept {
    const slot& s = slots_[index(key)];
    auto& shard = counters_[shard_index()];
    // The seqlock reader: relaxed loads of the key and value between an acquire load of the sequence
    // number and an acquire fence before its second load. If any of them read a writer's store, the
    // second load sees that writer's odd (or a newer) number, and the look-up reports a miss. Word by
    // word with early exits: a hit needs every compare anyway, and few values stay live.
    const std::uint64_t before = s.seq.load(std::memory_order_acquire);
    bool hit = s.key[0].load(std::memory_order_relaxed) == key[0] &&
               s.key[1].load(std::memory_order_relaxed) == key[1] &&
               s.key[2].load(std::memory_order_relaxed) == key[2] && s.key[3].load(std::memory_order_relaxed) == key[3];
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

  /// Stores `value` (non-zero) under `key`, replacing whatever the slot held.
  void store(const cache_key& key, std::uint64_t value) noexcept {
    slot& s = slots_[index(key)];
    std::uint64_t before = s.seq.load(std::memory_order_relaxed);
    // The acquire exchange keeps the stores below after it: no reader sees them with an even number.
    if ((before & 1U) != 0 ||
        !s.seq.compare_exchange_strong(before, before + 1, std::memory_order_acquire, std::memory_order_relaxed))
      return;  // another thread is writing this slot
    for (std::size_t i = 0; i < key.size(); ++i) s.key[i].store(key[i], std::memory_order_release);
    s.value.store(value, std::memory_order_release);
    s.seq.store(before + 2, std::memory_order_release);
  }

  /// Empties every slot and zeroes the counters. Not safe concurrently with `find`/`store`.
  void clear() noexcept {
    for (std::size_t i = 0; i <= mask_; ++i) slots_[i].value.store(0, std::memory_order_relaxed);
    for (auto& c : counters_) {
      c.hits.store(0, std::memory_order_relaxed);
      c.misses.store(0, std::memory_order_relaxed);
    }
  }

  [[nodiscard]] cache_stats stats() const noexcept {
    cache_stats out;
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
    std::array<std::atomic<std::uint64_t>, 4> key{};
    std::atomic<std::uint64_t> value{0};
  };

  struct alignas(64) counter {
    std::atomic<std::uint64_t> hits{0};
    std::atomic<std::uint64_t> misses{0};
  };
  static constexpr std::size_t counter_shards = 16;

  // A thread's shard (1 to counter_shards; counters_[0] stays unused), dealt round-robin on the
  // thread's first look-up and then kept in a constant-initialised thread_local: one load and a test.
  // No call even on the first look-up: a call would make the caller keep its values in saved registers.
  static std::size_t shard_index() noexcept {
    static thread_local std::uint32_t shard = 0;
    static std::atomic<std::uint32_t> dealt{0};
    if (shard == 0) shard = dealt.fetch_add(1, std::memory_order_relaxed) % counter_shards + 1;
    return shard;
  }

  static std::size_t round_up(std::size_t n) noexcept {
    std::size_t p = 1;
    while (p < n && p < (std::size_t{1} << 24)) p <<= 1;
    return p;
  }
  [[nodiscard]] std::size_t index(const cache_key& key) const noexcept {
    // Two multiplies: the feature bits are usually zero, so they share one with the sizes.
    std::uint64_t h = ((key[0] ^ key[2]) * 0x9e3779b97f4a7c15ULL) ^ ((key[1] ^ key[3]) * 0xc2b2ae3d27d4eb4fULL);
    h ^= h >> 29;
    return static_cast<std::size_t>(h) & mask_;
  }

  std::size_t mask_;
  std::vector<slot> slots_;
  mutable std::vector<counter> counters_;
};

ATTNSEL_END_NAMESPACE
