// SPDX-License-Identifier: Apache-2.0
// Thread-safe publication of registry snapshots: many selecting threads, occasional writers.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/registry.hpp>
#include <attnsel/core/select.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

/// A registry shared between threads. Readers take an immutable snapshot (one atomic load) and
/// select on it without locks; writers copy the current snapshot, change the copy and publish it.
///
/// Guarantees: `snapshot()` and `select()` are safe from any number of threads at once, also while
/// writers run; a reader sees either the old or the new registry, never a half-built one; writers are
/// serialised; a writer whose change throws publishes nothing. A selection's pointers stay valid while
/// its snapshot is held.
class shared_registry {
 public:
  explicit shared_registry(registry initial = {}) : current_(std::make_shared<const registry>(std::move(initial))) {}

  shared_registry(const shared_registry&) = delete;
  shared_registry& operator=(const shared_registry&) = delete;

  /// The current registry; keep the pointer for as long as results from it are used.
  [[nodiscard]] std::shared_ptr<const registry> snapshot() const noexcept { return std::atomic_load(&current_); }

  /// Number of snapshots published so far (0 for the initial one).
  [[nodiscard]] std::uint64_t version() const noexcept { return version_.load(std::memory_order_acquire); }

  /// Applies `change(registry&)` to a copy of the current registry and publishes the copy.
  /// If `change` throws, nothing is published and the exception propagates. Calling `update` or
  /// `publish` from inside `change` (same thread) throws std::logic_error instead of deadlocking.
  template <class Change>
  void update(Change&& change) {
    std::lock_guard<std::mutex> lock(lock_writer());
    const writing guard(writer_);
    auto next = std::make_shared<registry>(*std::atomic_load(&current_));
    std::forward<Change>(change)(*next);
    std::atomic_store(&current_, std::shared_ptr<const registry>(std::move(next)));
    version_.fetch_add(1, std::memory_order_release);
  }

  /// Publishes `next` as the whole new registry. Throws std::logic_error inside an `update` callback.
  void publish(registry next) {
    std::lock_guard<std::mutex> lock(lock_writer());
    std::atomic_store(&current_, std::shared_ptr<const registry>(std::make_shared<const registry>(std::move(next))));
    version_.fetch_add(1, std::memory_order_release);
  }

 private:
  // Marks the thread running an update callback for as long as it runs.
  struct writing {
    explicit writing(std::atomic<std::thread::id>& w) : w_(w) { w_.store(std::this_thread::get_id()); }
    ~writing() { w_.store(std::thread::id{}); }
    writing(const writing&) = delete;
    writing& operator=(const writing&) = delete;
    std::atomic<std::thread::id>& w_;
  };
  // The write mutex, refused to the thread already inside update() (re-locking would deadlock).
  std::mutex& lock_writer() {
    if (writer_.load() == std::this_thread::get_id())
      throw std::logic_error(
          "shared_registry: update() or publish() called from inside an update() callback; "
          "change the registry passed to the callback instead");
    return write_mutex_;
  }

  std::atomic<std::thread::id> writer_{};
  mutable std::mutex write_mutex_;
  std::shared_ptr<const registry> current_;
  std::atomic<std::uint64_t> version_{0};
};

/// A per-thread view of a shared_registry that re-takes the snapshot only when a writer published a
/// new one. `std::atomic_load` on a shared_ptr serialises readers in libstdc++ (a lock and a shared
/// reference count), so selecting through `select(shared, ...)` from many threads stops scaling at two;
/// a reader's steady state is one acquire load of the version counter.
/// One reader per thread: a reader itself is not synchronised.
class snapshot_reader {
 public:
  explicit snapshot_reader(const shared_registry& shared)
      : shared_(&shared), version_(shared.version()), snapshot_(shared.snapshot()) {}

  /// The newest snapshot; keep the reference only until the next call.
  const std::shared_ptr<const registry>& current() {
    const auto v = shared_->version();
    // A writer stores the snapshot before it bumps the version (release), so after this acquire load
    // the snapshot we take is at least as new as `v`.
    if (v != version_) {
      snapshot_ = shared_->snapshot();
      version_ = v;
    }
    return snapshot_;
  }

  /// Selects on the newest snapshot. The result's pointers stay valid until the reader moves on to a
  /// newer snapshot (the next call after a writer published); copy `current()` to keep them longer.
  [[nodiscard]] selection_result select(const query& q, const platform& p, const override_request& ovr = {},
                                        const select_options& options = {}) {
    return attnsel::select(*current(), q, p, ovr, options);
  }

 private:
  const shared_registry* shared_;
  std::uint64_t version_;
  std::shared_ptr<const registry> snapshot_;
};

/// A result together with the snapshot it points into.
struct snapshot_selection {
  std::shared_ptr<const registry> snapshot;
  selection_result result;
};

/// Takes a snapshot and selects on it. Simple, but every call takes the snapshot through a shared
/// lock; threads that select often should each hold a `snapshot_reader`.
[[nodiscard]] inline snapshot_selection select(const shared_registry& shared, const query& q, const platform& p,
                                               const override_request& ovr = {}, const select_options& options = {}) {
  auto snap = shared.snapshot();
  auto result = select(*snap, q, p, ovr, options);
  return {std::move(snap), std::move(result)};
}

ATTNSEL_END_NAMESPACE
