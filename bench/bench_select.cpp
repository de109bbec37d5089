// SPDX-License-Identifier: Apache-2.0
// Benchmarks of select(), the bound and cached selector, explain() and shared_registry, with allocations per operation.
#include <attnsel/all.hpp>

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnsel_bench {
// bench_cases.cpp
std::size_t case_count() noexcept;
void make_case(std::size_t i, std::string_view& name, std::string_view& catalog, attnsel::query& q,
               attnsel::platform& p, std::string_view& spec, std::string_view& expected, bool& success);
const attnsel::registry& case_registry(std::string_view catalog);
// alloc_counter.cpp
std::uint64_t allocation_count() noexcept;
std::uint64_t allocation_bytes() noexcept;
}  // namespace attnsel_bench

namespace {

using namespace attnsel_bench;

struct bench_case {
  std::string_view name;
  std::string_view catalog;
  attnsel::query q;
  attnsel::platform p;
  std::string_view spec;
  std::string_view expected;
  bool success = false;
};

const std::vector<bench_case>& cases() {
  static const std::vector<bench_case> all = [] {
    std::vector<bench_case> out(case_count());
    for (std::size_t i = 0; i < out.size(); ++i) {
      auto& c = out[i];
      make_case(i, c.name, c.catalog, c.q, c.p, c.spec, c.expected, c.success);
    }
    return out;
  }();
  return all;
}

// A case's registry, built once before any timing, like an engine does at start-up.
const attnsel::registry& registry_of(const bench_case& c) { return case_registry(c.catalog); }

attnsel::shared_registry& shared() {
  static attnsel::shared_registry reg(attnsel::reference_registry());
  return reg;
}

// Checks the case picks what it should; a benchmark of the wrong outcome measures nothing useful.
bool outcome_matches(const attnsel::selection_result& r, std::string_view expected) {
  if (r.ok()) return r->name() == expected;
  return expected == "error:" + std::string(attnsel::to_string(r.error().code));
}

bool check_outcome(benchmark::State& state, const bench_case& c, const attnsel::selection_result& r) {
  if (outcome_matches(r, c.expected)) return true;
  const std::string got = r.ok() ? std::string(r->name()) : "error:" + std::string(attnsel::to_string(r.error().code));
  state.SkipWithError(("expected " + std::string(c.expected) + ", got " + got).c_str());
  return false;
}

// Sets allocs/op and bytes/op from the counter deltas over the timed loop. Averaged over the
// iterations of every thread (Google Benchmark sums per-thread counters before dividing).
void report_allocations(benchmark::State& state, std::uint64_t allocs, std::uint64_t bytes) {
  state.counters["allocs/op"] = benchmark::Counter(static_cast<double>(allocs), benchmark::Counter::kAvgIterations);
  state.counters["bytes/op"] = benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kAvgIterations);
}

// The design requirement "the fast path allocates nothing", checked on one call outside the loop
// so that no benchmark bookkeeping can blur it.
bool check_no_allocation(benchmark::State& state, const bench_case& c) {
  const auto before = allocation_count();
  auto r = attnsel::select(registry_of(c), c.q, c.p, attnsel::override_request{c.spec});
  const auto after = allocation_count();
  benchmark::DoNotOptimize(r);
  if (c.success && after != before) {
    state.SkipWithError(("successful select() allocated " + std::to_string(after - before) + " times").c_str());
    return false;
  }
  return true;
}

// Runs `op` in the timed loop and reports the allocations it made per iteration.
template <class Op>
void measure_counted(benchmark::State& state, Op&& op) {
  const auto allocs0 = allocation_count();
  const auto bytes0 = allocation_bytes();
  for (auto _ : state) {
    auto result = op();
    benchmark::DoNotOptimize(result);
  }
  report_allocations(state, allocation_count() - allocs0, allocation_bytes() - bytes0);
}

void bm_select(benchmark::State& state, std::size_t index) {
  const auto& c = cases()[index];
  const auto& reg = registry_of(c);
  const attnsel::override_request ovr{c.spec};
  if (!check_outcome(state, c, attnsel::select(reg, c.q, c.p, ovr)) || !check_no_allocation(state, c)) return;
  measure_counted(state, [&] { return attnsel::select(reg, c.q, c.p, ovr); });
}

// The platform-bound selector, built once per case like an engine does at start-up. `cached` picks
// the decision cache (warmed by the outcome check, so the loop measures hits) or none (every call walks).
void bm_bound_select(benchmark::State& state, std::size_t index, bool cached) {
  const auto& c = cases()[index];
  attnsel::selector_options options;
  options.cache = cached;
  const attnsel::selector bound(registry_of(c), c.p, attnsel::override_request{c.spec}, options);
  if (!check_outcome(state, c, bound.select(c.q))) return;
  // The same zero-allocation requirement as the free select, for the bound and the cached path.
  const auto before = allocation_count();
  auto r = bound.select(c.q);
  const auto after = allocation_count();
  benchmark::DoNotOptimize(r);
  if (c.success && after != before) {
    state.SkipWithError(("successful bound select allocated " + std::to_string(after - before) + " times").c_str());
    return;
  }
  measure_counted(state, [&] { return bound.select(c.q); });
  if (cached)
    state.counters["hit_rate"] =
        static_cast<double>(bound.stats().hits) / static_cast<double>(bound.stats().hits + bound.stats().misses);
}

// The cached selector asked with a query built afresh each call, as an engine that builds each layer's
// query (or a Python program making a new Query per call) asks: equal values in new feature lists. The
// copy of the case's query costs its feature list's copy; the features are rebuilt from their names.
void bm_cached_fresh_query(benchmark::State& state, std::size_t index) {
  const auto& c = cases()[index];
  const attnsel::selector bound(registry_of(c), c.p, attnsel::override_request{c.spec});
  if (!check_outcome(state, c, bound.select(c.q))) return;
  const std::vector<std::string> names(c.q.required.begin(), c.q.required.end());
  for (auto _ : state) {
    attnsel::query q = c.q;
    q.required = attnsel::feature_set(std::vector<std::string>(names));
    auto r = bound.select(q);
    benchmark::DoNotOptimize(r);
  }
  state.counters["hit_rate"] =
      static_cast<double>(bound.stats().hits) / static_cast<double>(bound.stats().hits + bound.stats().misses);
}

void bm_explain(benchmark::State& state, std::size_t index) {
  const auto& c = cases()[index];
  const auto& reg = registry_of(c);
  const attnsel::override_request ovr{c.spec};
  if (!check_outcome(state, c, attnsel::explain(reg, c.q, c.p, ovr).result)) return;
  measure_counted(state, [&] { return attnsel::explain(reg, c.q, c.p, ovr); });
}

// Many threads selecting through one shared_registry: each select takes a snapshot (an atomic
// shared_ptr load and a reference-count round trip on one control block) and selects on it.
void bm_shared_select(benchmark::State& state, std::size_t index) {
  const auto& c = cases()[index];
  auto& reg = shared();
  const attnsel::override_request ovr{c.spec};
  if (!check_outcome(state, c, attnsel::select(reg, c.q, c.p, ovr).result)) return;
  measure_counted(state, [&] { return attnsel::select(reg, c.q, c.p, ovr); });
  state.SetItemsProcessed(state.iterations());
}

// The same threads selecting on one plain const registry: the baseline without snapshots.
void bm_const_select(benchmark::State& state, std::size_t index) {
  const auto& c = cases()[index];
  const auto& reg = registry_of(c);
  const attnsel::override_request ovr{c.spec};
  if (!check_outcome(state, c, attnsel::select(reg, c.q, c.p, ovr))) return;
  for (auto _ : state) {
    auto r = attnsel::select(reg, c.q, c.p, ovr);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}

// The same threads each holding a snapshot_reader: the snapshot is re-taken only when a writer
// published, so the steady state is one acquire load of the version counter per selection.
void bm_reader_select(benchmark::State& state, std::size_t index) {
  const auto& c = cases()[index];
  attnsel::snapshot_reader reader(shared());
  const attnsel::override_request ovr{c.spec};
  if (!check_outcome(state, c, reader.select(c.q, c.p, ovr))) return;
  measure_counted(state, [&] { return reader.select(c.q, c.p, ovr); });
  state.SetItemsProcessed(state.iterations());
}

// The snapshot alone, to separate its cost from selection's.
void bm_shared_snapshot(benchmark::State& state) {
  auto& reg = shared();
  for (auto _ : state) {
    auto snap = reg.snapshot();
    benchmark::DoNotOptimize(snap);
  }
  state.SetItemsProcessed(state.iterations());
}

// The hot path of an engine that needs only the winner: selector::decide through the cache (warmed
// by the outcome check), returning a trivially copyable decision. Successful cases only.
void bm_cached_decide(benchmark::State& state, std::size_t index) {
  const auto& c = cases()[index];
  const attnsel::selector bound(registry_of(c), c.p, attnsel::override_request{c.spec});
  if (!check_outcome(state, c, bound.select(c.q))) return;
  const auto before = allocation_count();
  const auto d = bound.decide(c.q);
  const auto after = allocation_count();
  if (!d || d.name() != c.expected) {
    state.SkipWithError("decide() disagrees with select()");
    return;
  }
  if (after != before) {
    state.SkipWithError(("successful cached decide allocated " + std::to_string(after - before) + " times").c_str());
    return;
  }
  measure_counted(state, [&] { return bound.decide(c.q); });
}

const bool registered = [] {
  for (std::size_t i = 0; i < cases().size(); ++i) {
    const std::string name(cases()[i].name);
    benchmark::RegisterBenchmark(("select/" + name).c_str(), bm_select, i);
  }
  for (std::size_t i = 0; i < cases().size(); ++i) {
    const std::string name(cases()[i].name);
    benchmark::RegisterBenchmark(("bound_select/" + name).c_str(), bm_bound_select, i, false);
  }
  for (std::size_t i = 0; i < cases().size(); ++i) {
    const std::string name(cases()[i].name);
    benchmark::RegisterBenchmark(("cached_select/" + name).c_str(), bm_bound_select, i, true);
  }
  for (std::size_t i = 0; i < cases().size(); ++i) {
    const std::string name(cases()[i].name);
    if (cases()[i].success) benchmark::RegisterBenchmark(("cached_decide/" + name).c_str(), bm_cached_decide, i);
  }
  for (std::size_t i = 0; i < cases().size(); ++i) {
    const std::string name(cases()[i].name);
    if (cases()[i].success && !cases()[i].q.required.empty())
      benchmark::RegisterBenchmark(("cached_fresh_query/" + name).c_str(), bm_cached_fresh_query, i);
  }
  for (std::size_t i = 0; i < cases().size(); ++i) {
    const std::string name(cases()[i].name);
    benchmark::RegisterBenchmark(("explain/" + name).c_str(), bm_explain, i);
  }
  // The machine these figures come from has 2 cores: 8 threads measure oversubscription.
  for (std::size_t i : {std::size_t{0}, std::size_t{1}}) {
    const std::string name(cases()[i].name);
    benchmark::RegisterBenchmark(("shared_select/" + name).c_str(), bm_shared_select, i)
        ->Threads(1)
        ->Threads(2)
        ->Threads(8)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("const_select/" + name).c_str(), bm_const_select, i)
        ->Threads(1)
        ->Threads(2)
        ->Threads(8)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("reader_select/" + name).c_str(), bm_reader_select, i)
        ->Threads(1)
        ->Threads(2)
        ->Threads(8)
        ->UseRealTime();
  }
  benchmark::RegisterBenchmark("shared_snapshot", bm_shared_snapshot)
      ->Threads(1)
      ->Threads(2)
      ->Threads(8)
      ->UseRealTime();
  return true;
}();

}  // namespace
