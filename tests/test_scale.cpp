// SPDX-License-Identifier: Apache-2.0
// Scale tests (issue 9): loading stays O(n log n) and memory stays proportional to the catalog text.
// Each budget compares a large input with a ten-times smaller one in the same run (instruction counts,
// or CPU time where counters are refused), never a clock constant; optimised builds only.
#include "catch.hpp"

#include <attnsel/all.hpp>

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

// Counting allocator: every operator new of this test program goes through here, so the peak of live
// bytes is measured exactly (no sampling, no RSS noise from the test framework).
namespace {
std::atomic<std::size_t> live_bytes{0};
std::atomic<std::size_t> peak_bytes{0};
std::atomic<std::size_t> allocations{0};

void* counted_alloc(std::size_t n) {
  void* p = std::malloc(n + sizeof(std::max_align_t));
  if (p == nullptr) throw std::bad_alloc();
  *static_cast<std::size_t*>(p) = n;
  allocations.fetch_add(1);
  const auto now = live_bytes.fetch_add(n) + n;
  auto peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
  return static_cast<char*>(p) + sizeof(std::max_align_t);
}
void counted_free(void* p) noexcept {
  if (p == nullptr) return;
  char* base = static_cast<char*>(p) - sizeof(std::max_align_t);
  live_bytes.fetch_sub(*reinterpret_cast<std::size_t*>(base));
  std::free(base);
}
}  // namespace

void* operator new(std::size_t n) { return counted_alloc(n); }
void* operator new[](std::size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, std::size_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::size_t) noexcept { counted_free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every allocation must carry
// the header counted_free expects.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }

using namespace attnsel;

namespace {

std::string catalog_text(const std::string& backends) {
  return R"({"format": "attnsel-catalog", "version": 1, "name": "scale", "backends": [)" + backends +
         R"(], "policies": []})";
}

// `n` small backends, names in a scrambled order so no insertion order is favoured.
std::string many_backends(std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = (i * 7919) % n;
    out += (i ? "," : "") + std::string(R"({"name": "B)") + std::to_string(k) + R"(", "domains": ["decoder"]})";
  }
  return out;
}

// One backend with `aliases` aliases, plus 500 small backends (the issue's 1 MB reproduction at 100,000).
std::string alias_heavy(std::size_t aliases) {
  std::string list;
  for (std::size_t i = 0; i < aliases; ++i) list += (i ? ",\"ALIAS_" : "\"ALIAS_") + std::to_string(aliases - i) + "\"";
  return R"({"name": "HUB", "domains": ["decoder"], "aliases": [)" + list + "]}," + many_backends(500);
}

// `n` features in descending order on one backend.
std::string descending_features(std::size_t n) {
  std::string list;
  for (std::size_t i = 0; i < n; ++i) list += (i ? ",\"f" : "\"f") + std::to_string(n - i) + "\"";
  return R"({"name": "F", "domains": ["decoder"], "features": [)" + list + "]}";
}

// The cost of `work`: user-space instructions retired (perf_event_open), which other processes on a
// shared machine do not disturb; where the kernel refuses performance counters, the best of three
// CPU times. Only ratios of two costs measured the same way are compared.
class cost_meter {
 public:
  cost_meter() {
    perf_event_attr attr{};
    attr.type = PERF_TYPE_HARDWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_HW_INSTRUCTIONS;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    fd_ = static_cast<int>(::syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
  }
  ~cost_meter() {
    if (fd_ >= 0) ::close(fd_);
  }
  cost_meter(const cost_meter&) = delete;
  cost_meter& operator=(const cost_meter&) = delete;
  [[nodiscard]] const char* unit() const { return fd_ >= 0 ? "instructions" : "CPU seconds"; }

  template <class Work>
  double measure(Work work) const {
    if (fd_ >= 0) {
      ::ioctl(fd_, PERF_EVENT_IOC_RESET, 0);
      ::ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
      work();
      ::ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
      long long count = 0;
      if (::read(fd_, &count, sizeof count) == static_cast<ssize_t>(sizeof count)) return static_cast<double>(count);
    }
    double best = 1e9;
    for (int i = 0; i < 3; ++i) {
      const auto start = std::clock();
      work();
      best = std::min(best, static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC);
    }
    return best;
  }

 private:
  int fd_ = -1;
};

const cost_meter& meter() {
  static const cost_meter m;
  return m;
}

double load_cost(const std::string& text, const catalog_limits& limits = {}) {
  (void)parse_catalog_text(text, "scale.json", limits);  // warm-up: first-touch page faults are not the loader's
  return meter().measure([&] { CHECK(!parse_catalog_text(text, "scale.json", limits).registry.empty()); });
}

// Linear work is 10x for a 10x input, n log n a little more, quadratic 100x. 50x separates them with
// room for cache effects when CPU time is the measure: on this 2-core VM, 1,000 -> 10,000 backends
// measures 14-19x with g++ 12. (A clang 14 build measured 33-56x: not yet explained; the clang-asan
// preset, instrumented anyway, does not run these tests; see docs/reliability.md.)
constexpr double growth_budget = 50.0;

}  // namespace

TEST_CASE("loading 10,000 backends costs about 10x loading 1,000 (defect 2)", "[scale]") {
  const auto small = load_cost(catalog_text(many_backends(1000)));
  const auto large = load_cost(catalog_text(many_backends(10000)));
  INFO("1,000 backends: " << small << " " << meter().unit() << "; 10,000 backends: " << large);
  CHECK(large < growth_budget * small);
}

TEST_CASE("a 1 MB alias-heavy catalog loads in about 10x the time of one ten times smaller (defect 2)", "[scale]") {
  catalog_limits roomy;
  roomy.max_list_elements = 1u << 20;  // the reproduction's 100,000 aliases are over the default list bound
  const auto small_text = catalog_text(alias_heavy(10000));
  const auto large_text = catalog_text(alias_heavy(100000));
  const auto small = load_cost(small_text, roomy);
  const auto large = load_cost(large_text, roomy);
  INFO(small_text.size() << " bytes: " << small << " " << meter().unit() << "; " << large_text.size()
                         << " bytes: " << large);
  CHECK(large_text.size() > 1000000);
  CHECK(large < growth_budget * small);
  // With the default limits the same file is refused, at the list, before any work on it.
  CHECK_THROWS_WITH(parse_catalog_text(large_text), ATTNSEL_CONTAINS("max_list_elements"));
}

TEST_CASE("features in descending order load in linearithmic time (defect 3)", "[scale]") {
  catalog_limits roomy;
  roomy.max_list_elements = 1u << 20;
  const auto small = load_cost(catalog_text(descending_features(4000)), roomy);
  const auto large = load_cost(catalog_text(descending_features(40000)), roomy);
  INFO("4,000 features: " << small << " " << meter().unit() << "; 40,000 features: " << large);
  CHECK(large < growth_budget * small);
}

TEST_CASE("a variant-heavy catalog's peak memory is a small multiple of its size (defect 1)", "[scale]") {
  // The issue's reproduction shape: every variant inherits the backend's long feature list.
  std::string features;
  for (int i = 0; i < 4000; ++i) features += (i ? ",\"feature_" : "\"feature_") + std::to_string(i) + "\"";
  std::string variants;
  for (int i = 0; i < 250; ++i) variants += std::string(i ? "," : "") + R"({"name": "V)" + std::to_string(i) + R"("})";
  const auto text = catalog_text(R"({"name": "V", "domains": ["decoder"], "features": [)" + features +
                                 R"(], "variants": [)" + variants + "]}");
  const auto before = live_bytes.load();
  peak_bytes.store(before);
  {
    const auto c = parse_catalog_text(text);
    CHECK(c.registry.backends().at(0).variants.size() == 250);
  }
  const auto peak = peak_bytes.load() - before;
  INFO(text.size() << " bytes of text; peak " << peak << " bytes allocated while loading");
  // The parsed JSON tree alone is ~10x its text; copying the list into each variant was ~250x.
  CHECK(peak < 32 * text.size());
}

// Allocations made by one call of `select` (a successful one: `ok` says so), after a warm-up call
// (first-use statics are not the path's). The result is inspected only after counting.
template <class Select>
std::size_t success_allocations(Select run, bool& ok) {
  (void)run();
  const auto before = allocations.load();
  {
    const auto r = run();
    ok = r.ok();
  }
  return allocations.load() - before;
}

TEST_CASE("every success path allocates nothing with 300 or 10,000 backends (defect 11)", "[scale]") {
  for (std::size_t n : {300u, 10000u}) {
    std::string backends;
    for (std::size_t i = 0; i < n; ++i)
      backends += (i ? "," : "") + std::string(R"({"name": "B)") + std::to_string(i) + R"(", "domains": ["decoder"],)" +
                  R"( "head_sizes": [)" + (i + 1 == n ? "128" : "64") + "]}";
    const auto c = parse_catalog_text(catalog_text(backends));
    const auto& reg = c.registry;
    query q;  // head size 128: only the last backend qualifies, so the walk visits all of them
    const auto p = platform::cuda(9, 0);
    const auto last = "B" + std::to_string(n - 1);
    const auto high = "B" + std::to_string(n - 2);  // past the first 256 registry positions
    // Automatic, strict forced names (past position 256, several of them), forced then automatic, and
    // exclusions: each one's success must not allocate, through the free, bound and cached paths.
    const std::string specs[] = {
        "", last, "B3," + high + ",B257," + last, high + ",auto", "B280,B270,auto", "-" + high + ",-B270,auto"};
    for (const auto& spec : specs) {
      INFO(n << " backends, override '" << spec << "'");
      const override_request ovr{spec};
      const auto r = select(reg, q, p, ovr);
      REQUIRE(r);
      CHECK(r->name() == last);
      bool ok = false;
      CHECK(success_allocations([&] { return select(reg, q, p, ovr); }, ok) == 0);
      CHECK(ok);
      selector_options no_cache;
      no_cache.cache = false;
      const selector bound(reg, p, ovr, no_cache);
      CHECK(bound.select(q)->name() == last);
      CHECK(success_allocations([&] { return bound.select(q); }, ok) == 0);
      CHECK(ok);
      const selector cached(reg, p, ovr);
      CHECK(success_allocations([&] { return cached.select(q); }, ok) == 0);
      CHECK(ok);
      CHECK(cached.stats().hits > 0);
    }
  }
}

// Issue 22: the resource cliffs of diff, lint and the JSON reader. Each compares 4x the input with 1x
// in the same run: linear work grows about 4x, quadratic 16x; 9x separates them with room for noise.
namespace {

constexpr double growth_4x_budget = 9.0;

// A catalog of one backend and `n` decoder rules on cuda, each differing from the others through
// `rule(k)` (the rule's keys after domain and vendor, ending in its order).
template <class Rule>
std::string rules_catalog(std::size_t n, Rule rule) {
  std::string policies;
  for (std::size_t k = 0; k < n; ++k)
    policies += (k ? "," : "") + std::string(R"({"domain": "decoder", "vendor": "cuda", )") + rule(k) + "}";
  return R"({"format": "attnsel-catalog", "version": 1, "name": "rules", "backends": [{"name": "A", "domains":
      ["decoder"], "platforms": [{"vendor": "cuda"}]}], "policies": [)" +
         policies + "]}";
}

std::string when_rule(std::size_t k) {
  return R"("order": [{"backend": "A", "when": ["c)" + std::to_string(k) + R"("]}])";
}
std::string feature_rule(std::size_t k) { return R"("features": ["f)" + std::to_string(k) + R"("], "order": ["A"])"; }
std::string heads_rule(std::size_t k) {
  return R"("min_num_heads": )" + std::to_string(2 * k + 1) + R"(, "max_num_heads": )" + std::to_string(2 * k + 1) +
         R"(, "order": ["A"])";
}

double diff_cost(const catalog& c) {
  diff_options o;
  o.encoder = false;
  o.overrides = false;
  (void)diff_catalogs(c, c, o);  // warm-up
  return meter().measure([&] { CHECK(diff_catalogs(c, c, o).empty()); });
}

catalog roomy_catalog(const std::string& text) {
  catalog_limits roomy;
  roomy.max_list_elements = 1u << 20;
  return parse_catalog_text(text, "rules.json", roomy);
}

}  // namespace

TEST_CASE("diff is near-linear in rules: component conditions, features, head-count ranges (issue 22)", "[scale]") {
  // Before: the signature of every candidate over every predicate, and component sets compared name
  // by name (10,000 rules took 61 s).
  const std::pair<const char*, std::string (*)(std::size_t)> shapes[] = {
      {"when", when_rule}, {"features", feature_rule}, {"num_heads", heads_rule}};
  for (const auto& [name, rule] : shapes) {
    const auto small = diff_cost(roomy_catalog(rules_catalog(1000, rule)));
    const auto large = diff_cost(roomy_catalog(rules_catalog(4000, rule)));
    INFO(name << ": 1,000 rules: " << small << " " << meter().unit() << "; 4,000 rules: " << large);
    CHECK(large < growth_4x_budget * small);
  }
}

TEST_CASE("diff refuses a configuration space over its limit before building it (issue 22)", "[scale]") {
  // 1,000 feature rules x 1,000 head-count rules: the query axes multiply to millions of queries.
  std::string policies;
  for (std::size_t k = 0; k < 1000; ++k) {
    policies += (k ? "," : "") + std::string(R"({"domain": "decoder", "vendor": "cuda", )") + feature_rule(k) + "},";
    policies += std::string(R"({"domain": "decoder", "vendor": "cuda", )") + heads_rule(k) + "}";
  }
  const auto c = roomy_catalog(R"({"format": "attnsel-catalog", "version": 1, "name": "wide", "backends": [{"name":
      "A", "domains": ["decoder"], "platforms": [{"vendor": "cuda"}]}], "policies": [)" +
                               policies + "]}");
  diff_options o;
  o.overrides = false;
  o.max_configurations = 1'000'000;
  const auto before = live_bytes.load();
  peak_bytes.store(before);
  CHECK_THROWS_AS(diff_catalogs(c, c, o), std::length_error);
  const auto peak = peak_bytes.load() - before;
  INFO("peak while refusing: " << peak << " bytes");
  CHECK(peak < (64u << 20));  // before: every query of the block was built first (hundreds of MB)
}

TEST_CASE("lint is near-linear in rules and backends (issue 22)", "[scale]") {
  // `n` backends, each listed by its own feature rule, and `n` rules repeating one filter (shadowed).
  const auto text = [](std::size_t n) {
    std::string backends;
    std::string policies;
    for (std::size_t k = 0; k < n; ++k) {
      const auto b = "B" + std::to_string(k);
      backends += (k ? "," : "") + std::string(R"({"name": ")") + b + R"(", "domains": ["decoder"], "features": ["f)" +
                  std::to_string(k) + R"("]})";
      policies += (k ? "," : "") + std::string(R"({"domain": "decoder", "vendor": "cuda", "features": ["f)") +
                  std::to_string(k) + R"("], "order": [")" + b + R"("]},)" +
                  R"({"domain": "decoder", "vendor": "rocm", "min_num_heads": 4, "order": [")" + b + R"("]})";
    }
    return R"({"format": "attnsel-catalog", "version": 1, "name": "lint", "backends": [)" + backends +
           R"(], "policies": [)" + policies + "]}";
  };
  const auto cost = [](const catalog& c) {
    lint_options o;
    o.builtin_components = false;
    (void)lint_catalog(c, o);
    return meter().measure([&] { CHECK(lint_catalog(c, o).size() >= 1); });
  };
  const auto small = cost(roomy_catalog(text(1000)));
  const auto large = cost(roomy_catalog(text(4000)));
  INFO("1,000 backends and 2,000 rules: " << small << " " << meter().unit() << "; 4x: " << large);
  CHECK(large < growth_4x_budget * small);
}

TEST_CASE("lint is near-linear in rules that differ only in head counts, head sizes or a shape range (issue 23)",
          "[scale]") {
  // Before: every earlier rule without features sat in one list that each later rule scanned (a catalog
  // of 8,000 rules with their own head sizes cost 37x one of 2,000).
  using rule_text = std::string (*)(std::size_t);
  const auto text = [](std::size_t n, rule_text rule) {
    std::string backends;
    std::string policies;
    for (std::size_t k = 0; k < n; ++k) {
      const auto b = "B" + std::to_string(k);
      backends += (k ? "," : "") + std::string(R"({"name": ")") + b + R"(", "domains": ["decoder"]})";
      policies += (k ? "," : "") + std::string(R"({"domain": "decoder", "vendor": "cuda", )") + rule(k) +
                  R"(, "order": [")" + b + R"("]})";
    }
    return R"({"format": "attnsel-catalog", "version": 2, "name": "lint", "backends": [)" + backends +
           R"(], "policies": [)" + policies + "]}";
  };
  const std::pair<const char*, rule_text> shapes[] = {
      {"head counts",
       [](std::size_t k) -> std::string {
         return R"("min_num_heads": )" + std::to_string(2 * k + 1) + R"(, "max_num_heads": )" +
                std::to_string(2 * k + 2);
       }},
      {"head sizes", [](std::size_t k) -> std::string { return R"("head_sizes": [)" + std::to_string(k + 1) + "]"; }},
      {"seq_len_kv ranges",
       [](std::size_t k) -> std::string {
         return R"("seq_len_kv": {"min": )" + std::to_string(100 * k + 1) + R"(, "max": )" +
                std::to_string(100 * k + 100) + "}";
       }},
      {"a shared feature and head counts",
       [](std::size_t k) -> std::string {
         return R"("features": ["gqa"], "min_num_heads": )" + std::to_string(k + 1) + R"(, "max_num_heads": )" +
                std::to_string(k + 1);
       }},
  };
  const auto cost = [](const catalog& c) {
    lint_options o;
    o.builtin_components = false;
    (void)lint_catalog(c, o);
    return meter().measure([&] { (void)lint_catalog(c, o); });
  };
  for (const auto& [name, rule] : shapes) {
    const auto small_catalog = roomy_catalog(text(1000, rule));
    const auto large_catalog = roomy_catalog(text(4000, rule));
    // None of these rules covers another: lint must find nothing, however it gets there.
    lint_options o;
    o.builtin_components = false;
    const auto findings = lint_catalog(large_catalog, o);
    CHECK(std::none_of(findings.begin(), findings.end(),
                       [](const lint_finding& f) { return f.code == lint_code::shadowed_rule; }));
    const auto small = cost(small_catalog);
    const auto large = cost(large_catalog);
    INFO(name << ": 1,000 rules: " << small << " " << meter().unit() << "; 4,000 rules: " << large);
    CHECK(large < growth_4x_budget * small);
  }
}

TEST_CASE("reading JSON is linear in the length of an array of objects (issue 22)", "[scale]") {
  // Before: the duplicate-key callback parser rescanned the enclosing array at every object's end
  // (330,000 backends took 36 s).
  const auto text = [](std::size_t n) {
    std::string out = "[";
    for (std::size_t k = 0; k < n; ++k) out += (k ? "," : "") + std::string(R"({"a": 1})");
    return out + "]";
  };
  const auto cost = [](const std::string& t) {
    (void)parse_json_document(t, "array.json");
    return meter().measure([&] { CHECK(parse_json_document(t, "array.json").size() > 0); });
  };
  const auto small = cost(text(25000));
  const auto large = cost(text(100000));
  INFO("25,000 objects: " << small << " " << meter().unit() << "; 100,000 objects: " << large);
  CHECK(large < growth_4x_budget * small);
}

// Issue 35: every size-dependent command is linear or better in the catalog's rules and backends. The
// catalog has `n` backends (only the last accepts the query's head size, so the walk tries all of them)
// and `n` rules whose features the query lacks, followed by the rule that matches: selection scans
// every rule and tries every backend. 4x the catalog costs < 9x in the same run (instruction counts).
namespace {

std::string select_walk_catalog(std::size_t n) {
  std::string backends;
  std::string policies;
  std::string order;
  for (std::size_t k = 0; k < n; ++k) {
    const auto b = "B" + std::to_string(k);
    backends += (k ? "," : "") + std::string(R"({"name": ")") + b +
                R"(", "domains": ["decoder"], "platforms": [{"vendor": "cuda"}], "head_sizes": [)" +
                (k + 1 == n ? "128" : "64") + "]}";
    policies += std::string(R"({"domain": "decoder", "vendor": "cuda", "features": ["f)") + std::to_string(k) +
                R"("], "order": [")" + b + R"("]},)";
    order += (k ? ",\"" : "\"") + b + "\"";
  }
  policies += R"({"domain": "decoder", "vendor": "cuda", "order": [)" + order + "]}";
  return R"({"format": "attnsel-catalog", "version": 1, "name": "walk", "backends": [)" + backends +
         R"(], "policies": [)" + policies + "]}";
}

struct walk_case {
  catalog c;
  platform p = platform::cuda(9, 0);  // no components: closed under any implications, nothing copied
  query q;                            // head size 128: the last backend, in the last rule's order
  explicit walk_case(std::size_t n) : c(roomy_catalog(select_walk_catalog(n))) {}
};

// The cost of `reps` calls of `work` on the 1x and the 4x catalog, after a warm-up call on each.
template <class Work>
std::pair<double, double> walk_costs(int reps, Work work) {
  const walk_case small(1000);
  const walk_case large(4000);
  work(small, 1000);
  work(large, 4000);
  const auto cost = [&](const walk_case& w, std::size_t n) {
    return meter().measure([&] {
      for (int i = 0; i < reps; ++i) work(w, n);
    });
  };
  return {cost(small, 1000), cost(large, 4000)};
}

}  // namespace

TEST_CASE("select is linear in rules and backends: 4x the catalog costs < 9x (issue 35)", "[scale]") {
  const auto [small, large] = walk_costs(200, [](const walk_case& w, std::size_t n) {
    const auto r = select(w.c.registry, w.q, w.p);
    REQUIRE(r);
    CHECK(r->name() == "B" + std::to_string(n - 1));
  });
  INFO("1,000 backends and 1,001 rules: " << small << " " << meter().unit() << "; 4x: " << large);
  CHECK(large < growth_4x_budget * small);
}

TEST_CASE("explain is linear in rules and backends: 4x the catalog costs < 9x (issue 35)", "[scale]") {
  const auto [small, large] = walk_costs(10, [](const walk_case& w, std::size_t n) {
    const auto ex = explain(w.c.registry, w.q, w.p);
    REQUIRE(ex.result);
    CHECK(ex.result->name() == "B" + std::to_string(n - 1));
    CHECK(ex.candidates.size() == n);
  });
  INFO("1,000 backends and 1,001 rules: " << small << " " << meter().unit() << "; 4x: " << large);
  CHECK(large < growth_4x_budget * small);
}

TEST_CASE("plan is linear in rules and backends: 4x the catalog costs < 9x (issue 35)", "[scale]") {
  const auto [small, large] = walk_costs(100, [](const walk_case& w, std::size_t n) {
    const auto plan = plan_phases(w.c.registry, w.q, w.p);
    REQUIRE(plan.ok());
    CHECK(plan.decode->name() == "B" + std::to_string(n - 1));
    CHECK(plan.prefill->name() == "B" + std::to_string(n - 1));
  });
  INFO("1,000 backends and 1,001 rules: " << small << " " << meter().unit() << "; 4x: " << large);
  CHECK(large < growth_4x_budget * small);
}
