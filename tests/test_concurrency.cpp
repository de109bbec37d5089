// SPDX-License-Identifier: Apache-2.0
// Concurrency: many selecting threads while writers register and replace backends (run under TSan in CI).
#include "catch.hpp"
#include "fixtures.hpp"

#include <atomic>
#include <cstdlib>
#include <thread>

using namespace attnsel;

namespace {
std::size_t stress_selections() {
  if (const char* env = std::getenv("ATTNSEL_STRESS_SELECTIONS")) return static_cast<std::size_t>(std::atoll(env));
  return 1'000'000;
}
}  // namespace

TEST_CASE("selections stay valid for their snapshot while writers publish new registries", "[concurrency]") {
  shared_registry shared(fixtures::small_registry());
  constexpr int readers = 8;
  const std::size_t per_reader = stress_selections() / readers;
  std::atomic<bool> done{false};
  std::atomic<std::size_t> invalid{0};
  std::atomic<std::size_t> selections{0};
  std::atomic<std::size_t> writes{0};

  // The writer alternates: FAST loses and regains head size 128, and EXTRA is registered and removed.
  std::thread writer([&] {
    std::size_t n = 0;
    while (!done.load(std::memory_order_relaxed)) {
      shared.update([&](registry& reg) {
        backend_descriptor fast = *reg.find("FAST");
        fast.caps.head_sizes = (n % 2) ? head_size_spec::set({64, 128, 256}) : head_size_spec::set({64, 256});
        reg.replace(fast);
        if (n % 2 == 0) {
          backend_descriptor extra;
          extra.name = "EXTRA";
          reg.add(extra);
        } else {
          reg.remove("EXTRA");
        }
      });
      // A failing change publishes nothing.
      try {
        shared.update([](registry& reg) { reg.add(*reg.find("FAST")); });
      } catch (const registry_error&) {
      }
      ++n;
      writes.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::yield();
    }
  });

  std::vector<std::thread> threads;
  for (int t = 0; t < readers; ++t) {
    threads.emplace_back([&, t] {
      const auto p = fixtures::hopper_with_flashinfer();
      query q;
      q.head_size = (t % 2) ? 128 : 64;
      // Half the threads take a snapshot per call, half keep a per-thread reader.
      snapshot_reader reader(shared);
      for (std::size_t i = 0; i < per_reader; ++i) {
        const auto got = [&] {
          if (t < readers / 2) return select(shared, q, p);
          auto snap = reader.current();
          auto result = select(*snap, q, p);
          return snapshot_selection{std::move(snap), std::move(result)};
        }();
        const auto& snap = *got.snapshot;
        bool ok = got.result.ok();
        if (ok) {
          const auto* b = got.result->backend;
          const bool inside = b >= snap.backends().data() && b < snap.backends().data() + snap.size();
          // Valid for the snapshot: it supports the query, and FAST (first in order) won exactly when it could.
          ok = inside && supports(*b, q, p) && ((b->name == "FAST") == supports(*snap.find("FAST"), q, p));
        }
        if (!ok) invalid.fetch_add(1, std::memory_order_relaxed);
        selections.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (auto& th : threads) th.join();
  done = true;
  writer.join();

  CHECK(invalid.load() == 0);
  CHECK(selections.load() == per_reader * readers);
  CHECK(writes.load() > 0);
  CHECK(shared.version() == writes.load());  // failed updates published nothing
  CHECK(shared.snapshot()->size() == 5 + writes.load() % 2);
}

TEST_CASE("a snapshot_reader keeps its snapshot until a writer publishes", "[concurrency]") {
  shared_registry shared(fixtures::small_registry());
  snapshot_reader reader(shared);
  const auto first = reader.current();
  CHECK(reader.current().get() == first.get());  // no publication: the same snapshot, no reload
  CHECK(reader.select(query{}, fixtures::hopper_with_flashinfer())->name() == "FAST");

  shared.update([](registry& reg) {
    backend_descriptor fast = *reg.find("FAST");
    fast.caps.head_sizes = head_size_spec::set({64});
    reg.replace(fast);
  });
  CHECK(shared.version() == 1);
  CHECK(reader.current().get() != first.get());  // the new registry is seen on the next call
  CHECK(reader.select(query{}, fixtures::hopper_with_flashinfer())->name() == "MEDIUM");
  CHECK(first->find("FAST")->caps.head_sizes.accepts(128));  // the old snapshot is untouched and alive

  shared.publish(fixtures::small_registry());
  CHECK(reader.select(query{}, fixtures::hopper_with_flashinfer())->name() == "FAST");
}
