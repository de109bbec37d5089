// SPDX-License-Identifier: Apache-2.0
// Runs select() a fixed number of times, for repeatable instruction counts under callgrind or perf stat.
//
// Usage: attnsel_select_driver ITERATIONS [CASE] [--explain | --bound | --cached | --decide | --startup]
// --bound and --cached select through a platform-bound selector (without / with its decision cache);
// --decide asks the cached selector for a `decision` (selector::decide) instead of a selection_result;
// --startup builds reference_registry() ITERATIONS times instead of selecting.
// Run it twice (e.g. 0 and 100000 iterations) and divide the difference in instructions by the
// difference in iterations: start-up (catalog parsing, process set-up) cancels out.
#include <attnsel/all.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace attnsel_bench {
// bench_cases.cpp
std::size_t case_count() noexcept;
void make_case(std::size_t i, std::string_view& name, std::string_view& catalog, attnsel::query& q,
               attnsel::platform& p, std::string_view& spec, std::string_view& expected, bool& success);
const attnsel::registry& case_registry(std::string_view catalog);
}  // namespace attnsel_bench

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: attnsel_select_driver ITERATIONS [CASE] [--explain | --bound | --cached | --decide | "
               "--startup]\ncases:");
  for (std::size_t i = 0; i < attnsel_bench::case_count(); ++i) {
    std::string_view name, catalog, spec, expected;
    attnsel::query q;
    attnsel::platform p;
    bool success = false;
    attnsel_bench::make_case(i, name, catalog, q, p, spec, expected, success);
    std::fprintf(stderr, " %.*s", static_cast<int>(name.size()), name.data());
  }
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  char* end = nullptr;
  const unsigned long long iterations = std::strtoull(argv[1], &end, 10);
  if (end == argv[1] || *end != '\0') return usage();
  std::string_view wanted = "cuda90_decoder";
  bool explain = false;
  bool bound = false;
  bool cached = false;
  bool decide = false;
  bool startup = false;
  for (int a = 2; a < argc; ++a) {
    if (std::strcmp(argv[a], "--explain") == 0)
      explain = true;
    else if (std::strcmp(argv[a], "--bound") == 0)
      bound = true;
    else if (std::strcmp(argv[a], "--cached") == 0)
      bound = cached = true;
    else if (std::strcmp(argv[a], "--decide") == 0)
      bound = cached = decide = true;
    else if (std::strcmp(argv[a], "--startup") == 0)
      startup = true;
    else
      wanted = argv[a];
  }

  std::string_view name, catalog, spec, expected;
  attnsel::query q;
  attnsel::platform p;
  bool success = false;
  bool found = false;
  for (std::size_t i = 0; i < attnsel_bench::case_count() && !found; ++i) {
    attnsel_bench::make_case(i, name, catalog, q, p, spec, expected, success);
    found = name == wanted;
  }
  if (!found) return usage();

  const auto& reg = attnsel_bench::case_registry(catalog);
  const attnsel::override_request ovr{spec};
  attnsel::selector_options options;
  options.cache = cached;
  const attnsel::selector sel(reg, p, ovr, options);
  if (cached) (void)sel.select(q);  // the loop then measures hits only
  // A volatile sink keeps every call observable without adding more than a store per iteration.
  volatile std::size_t sink = 0;
  for (unsigned long long i = 0; i < iterations; ++i) {
    if (startup) {
      const auto r = attnsel::reference_registry();
      sink = r.size();
    } else if (decide) {
      const auto d = sel.decide(q);
      sink = d.rank;
    } else if (bound) {
      const auto r = sel.select(q);
      sink = r.ok() ? r->rank : 0;
    } else if (explain) {
      const auto ex = attnsel::explain(reg, q, p, ovr);
      sink = ex.candidates.size();
    } else {
      const auto r = attnsel::select(reg, q, p, ovr);
      sink = r.ok() ? r->rank : 0;
    }
  }
  const auto r = bound ? sel.select(q) : attnsel::select(reg, q, p, ovr);
  const std::string got = r.ok() ? std::string(r->name()) : "error:" + std::string(attnsel::to_string(r.error().code));
  std::printf("%.*s: %llu x %s -> %s\n", static_cast<int>(name.size()), name.data(), iterations,
              startup   ? "reference_registry"
              : decide  ? "cached decide"
              : cached  ? "cached select"
              : bound   ? "bound select"
              : explain ? "explain"
                        : "select",
              got.c_str());
  (void)sink;
  return got == expected ? 0 : 1;
}
