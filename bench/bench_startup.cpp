// SPDX-License-Identifier: Apache-2.0
// Start-up benchmarks: the compiled-in registry, the JSON catalog path split into its parts, binding a selector.
#include <attnsel/all.hpp>

#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string_view>

namespace attnsel_bench {
// alloc_counter.cpp
std::uint64_t allocation_count() noexcept;
std::uint64_t allocation_bytes() noexcept;
}  // namespace attnsel_bench

namespace {

using attnsel_bench::allocation_bytes;
using attnsel_bench::allocation_count;

// Runs `body` in the timed loop and reports allocs/op, bytes/op and the input size.
template <class Body>
void timed(benchmark::State& state, std::size_t input_bytes, Body&& body) {
  const auto allocs0 = allocation_count();
  const auto bytes0 = allocation_bytes();
  for (auto _ : state) body();
  state.counters["allocs/op"] =
      benchmark::Counter(static_cast<double>(allocation_count() - allocs0), benchmark::Counter::kAvgIterations);
  state.counters["bytes/op"] =
      benchmark::Counter(static_cast<double>(allocation_bytes() - bytes0), benchmark::Counter::kAvgIterations);
  if (input_bytes) state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * input_bytes));
}

// What an engine pays once: embedded text -> depth pre-scan -> nlohmann::json -> catalog.
void bm_builtin_catalog(benchmark::State& state, std::string_view name) {
  timed(state, attnsel::builtin_catalog_json(name).size(), [&] {
    auto c = attnsel::builtin_catalog(name);
    benchmark::DoNotOptimize(c);
  });
}

// The registry from the compiled-in tables: no JSON, only building the descriptors and the registry.
void bm_reference_registry(benchmark::State& state) {
  timed(state, 0, [] {
    auto reg = attnsel::reference_registry();
    benchmark::DoNotOptimize(reg);
  });
}

// Part 1: the JSON parse alone (what nlohmann::json costs for this document).
void bm_json_parse(benchmark::State& state, std::string_view name) {
  const auto text = attnsel::builtin_catalog_json(name);
  timed(state, text.size(), [&] {
    auto doc = nlohmann::json::parse(text.begin(), text.end());
    benchmark::DoNotOptimize(doc);
  });
}

// Part 2: the nesting-depth pre-scan parse_catalog_text runs before the parser (internal).
void bm_depth_scan(benchmark::State& state, std::string_view name) {
  const auto text = attnsel::builtin_catalog_json(name);
  const std::string origin = "builtin";
  timed(state, text.size(), [&] {
    attnsel::detail::check_depth(text, 32, origin);
    benchmark::ClobberMemory();
  });
}

// Part 3: parse_catalog on an already-parsed document: validation plus building the registry.
void bm_parse_catalog(benchmark::State& state, std::string_view name) {
  const auto text = attnsel::builtin_catalog_json(name);
  const auto doc = nlohmann::json::parse(text.begin(), text.end());
  timed(state, 0, [&] {
    auto c = attnsel::parse_catalog(doc, "builtin");
    benchmark::DoNotOptimize(c);
  });
}

// Binding a selector to a platform: what an engine pays once per device before its first select.
void bm_bind_selector(benchmark::State& state) {
  const auto reg = attnsel::reference_registry();
  const auto p = attnsel::platform::cuda(9, 0);
  timed(state, 0, [&] {
    attnsel::selector bound(reg, p);
    benchmark::DoNotOptimize(bound);
  });
}

// Copying a loaded registry: what shared_registry::update and every registry mutation start with.
void bm_registry_copy(benchmark::State& state) {
  const auto reg = attnsel::reference_registry();
  timed(state, 0, [&] {
    attnsel::registry copy = reg;
    benchmark::DoNotOptimize(copy);
  });
}

const bool registered = [] {
  benchmark::RegisterBenchmark("startup/builtin_catalog/vllm", bm_builtin_catalog, std::string_view("vllm"))
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("startup/reference_registry", bm_reference_registry)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("startup/json_parse/vllm", bm_json_parse, std::string_view("vllm"))
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("startup/depth_scan/vllm", bm_depth_scan, std::string_view("vllm"))
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("startup/parse_catalog/vllm", bm_parse_catalog, std::string_view("vllm"))
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("startup/builtin_catalog/torch_sdpa", bm_builtin_catalog, std::string_view("torch_sdpa"))
      ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("startup/registry_copy/vllm", bm_registry_copy)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("startup/bind_selector/cuda90", bm_bind_selector)->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
