// SPDX-License-Identifier: Apache-2.0
// The platform-bound selector and its decision cache give exactly the free select's answers.
#include "builtin_registries.hpp"
#include "catch.hpp"
#include "fixtures.hpp"

#include <attnsel/core/impl/decision_cache.hpp>
#include <attnsel/core/selector.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

using namespace attnsel;
using nlohmann::json;

namespace {

std::string describe(const std::vector<candidate_report>& cs) {
  std::ostringstream out;
  for (const auto& c : cs) {
    out << c.name << "|" << c.variant << "|" << c.rank << "|" << to_string(c.outcome) << "|" << c.forced;
    for (const auto& r : c.reasons) out << "|" << to_string(r.code) << ":" << r.message;
    out << "\n";
  }
  return out.str();
}

// Everything a caller can observe in a result, as text: equal text means equal results.
std::string describe(const selection_result& r) {
  std::ostringstream out;
  if (r.ok()) {
    out << "ok " << r->backend << " " << r->variant << " " << r->rank << " " << r->overridden << " "
        << to_string(r->source) << " " << r->fell_back << "\n"
        << describe(r->fallback);
  } else {
    const auto& e = r.error();
    out << "error " << to_string(e.code) << "\n" << e.message << "\n" << describe(e.candidates);
    for (const auto& s : e.suggestions) out << "suggest " << s << "\n";
  }
  return out.str();
}

// Every field of an explanation: what closing the platform added, the unstated fields and the stale
// measurements included (a bound selector's platform is closed before explain runs).
std::string describe(const explanation& ex) {
  std::ostringstream out;
  out << describe(ex.result) << "rule " << ex.rule << "\nnote " << ex.note << "\n" << describe(ex.candidates);
  for (const auto& i : ex.implied) out << "implied " << i.name << " because " << i.because << "\n";
  for (const auto& u : ex.unstated) out << "unstated " << u.subject << "|" << u.fields << "|" << u.condition << "\n";
  for (const auto& st : ex.stale) {
    out << "stale " << st.rule << "|" << st.measured_on;
    for (const auto& d : st.differences) out << "|" << d;
    out << "\n";
  }
  return out.str();
}

using fixtures::catalog_registry;

selector_options cached(bool on, bool prefer = false) {
  selector_options o;
  o.cache = on;
  o.select.prefer = prefer;
  return o;
}

// The free select, a bound selector without cache and one with cache (asked twice: miss, then hit)
// must describe the same result.
void check_same(const registry& reg, const query& q, const platform& p, const override_request& ovr, bool prefer) {
  select_options options;
  options.prefer = prefer;
  const auto expected = describe(select(reg, q, p, ovr, options));
  const selector plain(reg, p, ovr, cached(false, prefer));
  const selector with_cache(reg, p, ovr, cached(true, prefer));
  CHECK(describe(plain.select(q)) == expected);
  CHECK(describe(with_cache.select(q)) == expected);
  CHECK(describe(with_cache.select(q)) == expected);
  CHECK(describe(plain.explain(q)) == describe(explain(reg, q, p, ovr, options)));
  CHECK(describe(with_cache.explain(q)) == describe(explain(reg, q, p, ovr, options)));
  // decide() is select() without the error and the fallback trace: the same winner and fields.
  const auto r = select(reg, q, p, ovr, options);
  for (const auto* bound : {&plain, &with_cache, &with_cache}) {
    const auto d = bound->decide(q);
    REQUIRE(static_cast<bool>(d) == r.ok());
    if (!d) continue;
    CHECK(d.backend == r->backend);
    CHECK(d.variant == r->variant);
    CHECK(d.rank == r->rank);
    CHECK(d.overridden == r->overridden);
    CHECK(d.fell_back == r->fell_back);
    CHECK(d.source == r->source);
    CHECK(d.name() == r->name());
  }
}

}  // namespace

TEST_CASE("the bound selector answers every table case exactly as the free select", "[bound][reference]") {
  std::size_t cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ATTNSEL_SOURCE_DIR) + "/tests/data")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const auto doc = json::parse(in);
    if (!doc.contains("cases")) continue;
    for (const auto& c : doc.at("cases")) {
      INFO(entry.path().filename().string() << ": " << c.at("name").get<std::string>());
      const auto& reg = catalog_registry(c.at("catalog").get<std::string>());
      const auto p = platform_from_json(c.at("platform"));
      const auto q = query_from_json(c.value("query", json::object()));
      const auto spec = c.value("override", std::string());
      for (const bool prefer : {false, true})
        check_same(reg, q, p, override_request{spec, override_source::flag}, prefer);
      ++cases;
    }
  }
  CHECK(cases > 100);
}

TEST_CASE("bound selection covers errors, bad overrides and bad queries", "[bound]") {
  const auto reg = fixtures::small_registry();
  auto p = platform::cuda(9, 0);
  p.add_component("flashinfer", parse_component_version("0.2.1"));
  query q;
  for (const char* spec :
       {"", "auto", "FAST", "MEDIUM,SLOW", "SLOW,auto", "-FAST", "-FAST,auto", "FAST_ATN", ",,", "FAST,-FAST", "LATENT",
        "LATENT,auto", "auto,SLOW", "auto,LATENT", "LATENT,auto,SLOW", "-MEDIUM,auto,LATENT"}) {
    INFO(spec);
    for (const bool prefer : {false, true}) check_same(reg, q, p, override_request{spec, override_source::env}, prefer);
  }
  q.head_size = 0;  // bad_query comes before everything
  check_same(reg, q, p, override_request{"FAST_ATN"}, false);
  // Sizes at and past the bounds, and past what the cache key packs: same answers, cached or not.
  for (const std::uint32_t size : {max_head_size, max_head_size + 1, 1U << 17, 1U << 20}) {
    INFO(size);
    q = query{};
    q.head_size = size;
    check_same(reg, q, p, override_request{"SLOW"}, false);
    q.head_size = 128;
    q.head_size_v = size;
    check_same(reg, q, p, override_request{"LATENT"}, false);
  }
}

TEST_CASE("a bound selector keeps its override with more feature names than its bit words hold", "[bound]") {
  auto reg = fixtures::small_registry();
  backend_descriptor many;
  many.name = "MANY";
  std::vector<std::string> names;
  for (int i = 0; i < 130; ++i) names.push_back("feature_" + std::to_string(i));
  many.caps.features = feature_set(names);
  reg.add(many);
  const auto p = platform::cuda(9, 0);
  for (const char* spec : {"SLOW", "MANY,auto", "-SLOW"}) {
    INFO(spec);
    const selector bound(reg, p, override_request{spec});
    CHECK(bound.bound_override(attention_domain::decoder).spec == spec);
    for (const bool prefer : {false, true}) check_same(reg, query{}, p, override_request{spec}, prefer);
    CHECK(describe(bound.select(query{})) == describe(select(reg, query{}, p, override_request{spec})));
  }
}

TEST_CASE("a bound selector caches with 200 feature names", "[bound][cache]") {
  // The cache key holds the query's feature list by identity: no limit on the catalog's feature names
  // (the packed-word key stopped caching past 88).
  auto reg = fixtures::small_registry();
  backend_descriptor many;
  many.name = "MANY";
  std::vector<std::string> names{"sinks"};
  for (std::size_t i = 0; names.size() < 200; ++i) names.push_back("feature_" + std::to_string(i));
  many.caps.features = feature_set(names);
  reg.add(many);
  const auto p = platform::cuda(9, 0);
  const override_request ovr{"MANY,auto"};
  const selector bound(reg, p, ovr);
  REQUIRE(bound.cache_enabled());
  for (const auto dtype : {data_type::bfloat16, data_type::float32}) {
    for (const char* feature : {"sinks", "feature_0", "feature_198", "alibi"}) {
      query q;
      q.dtype = dtype;
      q.required.insert(feature);
      INFO(feature);
      check_same(reg, q, p, ovr, false);
      const auto expected = describe(select(reg, q, p, ovr));
      const auto hits = bound.stats().hits;
      CHECK(describe(bound.select(q)) == expected);
      CHECK(describe(bound.select(q)) == expected);
      CHECK(bound.stats().hits == hits + (expected.rfind("ok", 0) == 0 ? 1 : 0));
    }
  }
}

TEST_CASE("feature names sharing their first 8 bytes and length keep the cache working", "[bound][cache]") {
  // Issue 22: such a pair disabled the old feature dictionary's look-up, and with it the cache.
  auto reg = fixtures::small_registry();
  backend_descriptor twins;
  twins.name = "TWINS";
  twins.caps.features = feature_set{"abcdefgh_one", "abcdefgh_two"};
  reg.add(twins);
  const auto p = platform::cuda(9, 0);
  const override_request ovr{"TWINS,auto"};
  const selector bound(reg, p, ovr);
  std::size_t winners = 0;
  for (const char* feature : {"abcdefgh_one", "abcdefgh_two", "abcdefgh_six"}) {
    query q;
    q.required.insert(feature);
    INFO(feature);
    const auto expected = describe(select(reg, q, p, ovr));
    CHECK(describe(bound.select(q)) == expected);
    const auto hits = bound.stats().hits;
    CHECK(describe(bound.select(q)) == expected);
    CHECK(bound.stats().hits == hits + (expected.rfind("ok", 0) == 0 ? 1 : 0));
    const auto r = select(reg, q, p, ovr);
    winners += r && r->name() == "TWINS" ? 1 : 0;
  }
  CHECK(winners == 2);
}

TEST_CASE("cache_slots is clamped", "[bound][cache]") {
  const auto reg = fixtures::small_registry();
  selector_options options;
  options.cache_slots = SIZE_MAX;  // would have committed 768 MiB
  const selector bound(reg, platform::cuda(9, 0), override_request{}, options);
  REQUIRE(bound.cache_enabled());
  detail::decision_cache huge(SIZE_MAX);
  CHECK(huge.size() == selector_options::max_cache_slots);
  CHECK(detail::decision_cache(0).size() == 1);
  CHECK(detail::decision_cache(5).size() == 8);
  CHECK(bound.select(query{}));
  CHECK(bound.select(query{}));
  CHECK(bound.stats().hits == 1);
}

TEST_CASE("a bound selector reads each domain's own override", "[bound][domain]") {
  const auto reg = fixtures::small_registry();
  const auto p = platform::cuda(9, 0);
  override_set overrides;
  overrides.decoder = {"SLOW", override_source::flag};
  overrides.encoder = {"VISION", override_source::env};
  const selector bound(reg, p, overrides);
  query q;
  CHECK(describe(bound.select(q)) == describe(select(reg, q, p, overrides)));
  q.domain = attention_domain::encoder;
  q.attn_type = attention_type::encoder_only;
  CHECK(describe(bound.select(q)) == describe(select(reg, q, p, overrides)));
  CHECK(bound.bound_override(attention_domain::encoder).spec == "VISION");
}

TEST_CASE("a moved selector keeps answering from its own copy of the override", "[bound]") {
  const auto reg = fixtures::small_registry();
  std::string spec = "SLOW";
  selector first(reg, platform::cuda(9, 0), override_request{spec});
  spec = "MEDIUM";  // the selector owns its copy
  const selector moved(std::move(first));
  const auto r = moved.select(query{});
  REQUIRE(r);
  CHECK(r->name() == "SLOW");
  CHECK(r->overridden);
}

namespace {

// A random but valid query: every field a gate or rule reads varies, features included.
query random_query(std::mt19937& rng) {
  const auto pick = [&](auto... values) {
    const std::array<std::common_type_t<decltype(values)...>, sizeof...(values)> all{values...};
    return all[std::uniform_int_distribution<std::size_t>(0, all.size() - 1)(rng)];
  };
  query q;
  q.domain = pick(attention_domain::decoder, attention_domain::decoder, attention_domain::encoder);
  q.head_size = pick(64U, 72U, 80U, 96U, 128U, 192U, 256U, 576U);
  q.head_size_v = pick(0U, 0U, 0U, 128U, 512U);
  q.dtype = pick(data_type::float16, data_type::bfloat16, data_type::float32);
  q.kv_cache_dtype = pick(cache_dtype::automatic, cache_dtype::automatic, cache_dtype::fp8, cache_dtype::float16,
                          cache_dtype::fp8_e5m2);
  q.block_size = pick(0U, 0U, 16U, 32U, 64U, 1U, 128U);
  q.attn_type = q.domain == attention_domain::encoder
                    ? pick(attention_type::encoder_only, attention_type::encoder)
                    : pick(attention_type::decoder, attention_type::decoder, attention_type::encoder_decoder);
  q.mode = pick(attention_mode::standard, attention_mode::standard, attention_mode::mla, attention_mode::sparse_mla);
  q.num_heads = pick(0U, 8U, 16U, 32U, 128U);
  for (const auto& f : features::known)
    if (std::uniform_int_distribution<int>(0, 9)(rng) == 0) q.required.insert(f.name);
  if (std::uniform_int_distribution<int>(0, 49)(rng) == 0) q.required.insert("no_backend_has_this");
  // The PyTorch catalogs' features, which their call rules read (dropout with one query token, backward).
  for (const char* f : {"dropout", "requires_grad", "nested", "gqa", "attn_mask", "deterministic"})
    if (std::uniform_int_distribution<int>(0, 5)(rng) == 0) q.required.insert(f);
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
    q.seq_len_q = pick(1U, 1U, 16U, 128U, 4096U);
    q.seq_len_kv = pick(q.seq_len_q, 128U, 8192U);
    q.batch_size = pick(1U, 8U, 70000U);
  }
  return q;
}

std::vector<platform> test_platforms() {
  std::vector<platform> out{platform::cuda(9, 0), platform::cuda(10, 0),    platform::cuda(8, 6),
                            platform::cuda(7, 5), platform::rocm("gfx942"), platform::cpu()};
  auto aiter = platform::rocm("gfx942");
  for (const char* c : {"aiter", "aiter_enabled", "aiter_mha", "aiter_mla"}) aiter.add_component(c);
  out.push_back(aiter);
  auto flashinfer = platform::cuda(10, 0);
  flashinfer.add_component("flashinfer", parse_component_version("0.3.0"));
  out.push_back(flashinfer);
  // Component versions that call rules' conditions read (the PyTorch catalogs' cuDNN rules), on both
  // sides of their bounds: the bound selector decides those conditions once (detail::resolved_on).
  for (const char* version : {"9.5.0", "9.12.0", "9.19.0", "9.22.1"}) {
    for (const std::uint8_t major : {std::uint8_t{9}, std::uint8_t{10}}) {
      auto cudnn = platform::cuda(major, 0);
      cudnn.add_component("cudnn", parse_component_version(version));
      if (version[2] == '1') cudnn.add_component("cudnn_preferred");
      out.push_back(cudnn);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a cache hit never answers differently from a miss (random queries)", "[bound][cache]") {
  std::mt19937 rng(20261130);
  std::size_t hits_expected = 0;
  for (const auto name : builtin_catalog_names) {
    const auto& reg = catalog_registry(std::string(name));
    for (const auto& p : test_platforms()) {
      // The cuDNN platforms are for the catalogs whose call rules read cuDNN's version (the PyTorch ones).
      if (p.has_component("cudnn") && name.rfind("torch_sdpa", 0) != 0) continue;
      for (const char* spec : {"", "TRITON_ATTN,auto", "-FLASH_ATTN"}) {
        const override_request ovr{reg.find("TRITON_ATTN") || spec[0] == '\0' ? spec : ""};
        const selector plain(reg, p, ovr, cached(false));
        selector_options small = cached(true);
        small.cache_slots = 16;  // small on purpose: collisions and replacements are exercised too
        const selector with_cache(reg, p, ovr, small);
        std::vector<query> seen;
        for (int i = 0; i < 150; ++i) {
          // Ask some queries again so that hits happen.
          const bool again = !seen.empty() && std::uniform_int_distribution<int>(0, 2)(rng) == 0;
          const query q =
              again ? seen[std::uniform_int_distribution<std::size_t>(0, seen.size() - 1)(rng)] : random_query(rng);
          if (!again) seen.push_back(q);
          const auto expected = describe(select(reg, q, p, ovr));
          INFO(name << " on " << to_string(p) << " override '" << ovr.spec << "': " << to_string(q));
          REQUIRE(describe(plain.select(q)) == expected);
          REQUIRE(describe(with_cache.select(q)) == expected);
          const auto d = with_cache.decide(q);
          REQUIRE(d.name() == (expected.rfind("error", 0) == 0 ? "" : with_cache.select(q)->name()));
        }
        hits_expected += with_cache.stats().hits;
        CHECK(plain.stats().hits + plain.stats().misses == 0);
      }
    }
  }
  CHECK(hits_expected > 0);
}

TEST_CASE("the screened rule match finds the rule the policy's own match finds (random calls)", "[bound][policy]") {
  // registry::match_rule runs each rule's packed cheap tests (detail::rule_screen) before
  // policy_rule::matches; a screen that rejected a call matches accepts would change the answer.
  std::mt19937 rng(20261206);
  std::size_t matched = 0;
  std::size_t screened_out = 0;
  for (const auto name : builtin_catalog_names) {
    const auto& reg = catalog_registry(std::string(name));
    auto platforms = test_platforms();
    platforms.push_back(platform::cuda(12, 0));
    platforms.push_back(platform::xpu());
    for (const auto& p : platforms) {
      for (int i = 0; i < 200; ++i) {
        auto q = random_query(rng);
        const auto phase = std::uniform_int_distribution<int>(0, 2)(rng);
        q.phase = static_cast<attention_phase>(phase);
        if (std::uniform_int_distribution<int>(0, 5)(rng) == 0) q.domain = attention_domain::linear;
        if (std::uniform_int_distribution<int>(0, 5)(rng) == 0) q.domain = attention_domain::drafter;
        INFO(name << " on " << to_string(p) << ": " << to_string(q));
        const auto* expected = reg.policy().match(q, p);
        REQUIRE(reg.match_rule(q, p) == expected);
        if (expected != nullptr) ++matched;
        for (const auto& rule : reg.policy().rules)
          if (!detail::rule_screen::of(rule).passes(detail::call_facts::of(q, p))) ++screened_out;
      }
    }
  }
  // Both sides of the screen were exercised.
  CHECK(matched > 1000);
  CHECK(screened_out > 1000);
}

TEST_CASE("the cache counts hits and misses and can be cleared", "[bound][cache]") {
  const auto reg = reference_registry();
  const selector bound(reg, platform::cuda(9, 0));
  REQUIRE(bound.cache_enabled());
  query q;
  REQUIRE(bound.select(q));
  CHECK(bound.stats().misses == 1);
  CHECK(bound.stats().hits == 0);
  REQUIRE(bound.select(q));
  REQUIRE(bound.select(q));
  CHECK(bound.stats().hits == 2);
  q.head_size = 64;
  REQUIRE(bound.select(q));
  CHECK(bound.stats().misses == 2);
  const_cast<selector&>(bound).clear_cache();
  CHECK(bound.stats().hits + bound.stats().misses == 0);
  REQUIRE(bound.select(q));
  CHECK(bound.stats().misses == 1);
}

TEST_CASE("the decision cache is bounded and keyed on every field of the query", "[cache]") {
  detail::decision_cache cache(5);
  CHECK(cache.size() == 8);
  const detail::feature_vocabulary vocabulary(std::vector<std::string>{"sinks", "alibi"});
  REQUIRE(vocabulary.by_value());
  const auto key_of = [&vocabulary](const query& x) {
    std::uint64_t features = 0;
    REQUIRE(vocabulary.word_of(x.required, features));
    return detail::key_of(x, features);
  };
  std::uint64_t value = 0;
  query q;
  q.required.insert("sinks");
  CHECK_FALSE(cache.find(key_of(q), value));
  cache.store(q, key_of(q), 77);
  REQUIRE(cache.find(key_of(q), value));
  CHECK(value == 77);
  const query copy = q;  // shares the feature list: the same key
  CHECK(cache.find(key_of(copy), value));
  query fresh;  // equal names in a list of its own: the same key (features are keyed by value)
  fresh.required = feature_set{"sinks"};
  CHECK_FALSE(fresh.required.shares_storage_with(q.required));
  CHECK(cache.find(key_of(fresh), value));
  // A name outside the vocabulary has no key.
  std::uint64_t word = 0;
  CHECK_FALSE(vocabulary.word_of(feature_set{"sinks", "softcap"}, word));
  // A query that differs in any one field is another key.
  const std::vector<void (*)(query&)> changes{
      [](query& x) { x.domain = attention_domain::encoder; },
      [](query& x) { x.head_size = 64; },
      [](query& x) { x.head_size_v = 64; },
      [](query& x) { x.dtype = data_type::float16; },
      [](query& x) { x.kv_cache_dtype = cache_dtype::fp8; },
      [](query& x) { x.block_size = 16; },
      [](query& x) { x.attn_type = attention_type::encoder_decoder; },
      [](query& x) { x.mode = attention_mode::mla; },
      [](query& x) { x.num_heads = 8; },
      [](query& x) { x.required = feature_set{"alibi"}; },
      [](query& x) { x.required = feature_set{}; },
      [](query& x) { x.phase = attention_phase::decode; },
      [](query& x) { x.seq_len_q = 5; },
      [](query& x) { x.seq_len_kv = 5; },
      [](query& x) { x.batch_size = 3; },
      [](query& x) { x.num_kv_heads = 2; },
      // every field at its largest: no field spills into a neighbour's place in the key
      [](query& x) { x.head_size = limits::head_size; },
      [](query& x) { x.block_size = limits::block_size; },
      [](query& x) { x.num_heads = limits::num_heads; },
      [](query& x) { x.seq_len_q = limits::seq_len; },
      [](query& x) { x.batch_size = limits::batch_size; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    INFO("change " << i);
    query other = q;
    changes[i](other);
    CHECK_FALSE(cache.find(key_of(other), value));
  }
  for (std::uint32_t i = 0; i < 100; ++i) {
    query x;
    x.head_size = 8 * (i + 1);
    cache.store(x, key_of(x), i + 1);
  }
  std::size_t kept = 0;
  for (std::uint32_t i = 0; i < 100; ++i) {
    query x;
    x.head_size = 8 * (i + 1);
    if (cache.find(key_of(x), value)) {
      CHECK(value == i + 1);
      ++kept;
    }
  }
  CHECK(kept <= cache.size());
  CHECK(kept > 0);
}

TEST_CASE("threads selecting through one cached selector all get the free select's answers",
          "[bound][cache][concurrency]") {
  const auto reg = reference_registry();
  auto p = platform::rocm("gfx942");
  for (const char* c : {"aiter", "aiter_enabled", "aiter_mha"}) p.add_component(c);
  selector_options options;
  options.cache_slots = 8;  // many queries share few slots: readers race writers on the same slots
  const selector bound(reg, p, override_request{}, options);
  std::mt19937 rng(7);
  std::vector<query> queries;
  std::vector<std::string> expected;
  for (int i = 0; i < 64; ++i) {
    queries.push_back(random_query(rng));
    expected.push_back(describe(select(reg, queries.back(), p)));
  }
  std::atomic<std::size_t> wrong{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < 4000; ++i) {
        const std::size_t k = (i * 7 + t * 13) % queries.size();
        const auto r = bound.select(queries[k]);
        // Successes are compared in full; errors only by code, to keep the loop fast.
        const bool same = r.ok() ? describe(r) == expected[k]
                                 : expected[k].rfind("error " + std::string(to_string(r.error().code)), 0) == 0;
        if (!same) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
  CHECK(bound.stats().hits > 0);
}

TEST_CASE("selectors of different catalogs sharing query feature lists across threads stay exact",
          "[bound][cache][concurrency]") {
  // Every query's feature list remembers the bits of the selector that looked it up last; two selectors
  // with different dictionaries (and one without a cache) take turns on the same lists from four threads.
  const auto vllm = reference_registry();
  const auto sdpa = torch_sdpa_registry();
  const auto p = platform::cuda(9, 0);
  const selector a(vllm, p);
  const selector b(sdpa, p);
  const selector c(vllm, p, override_request{}, cached(false));
  std::mt19937 rng(11);
  std::vector<query> queries;
  std::vector<std::string> expected_a, expected_b;
  for (int i = 0; i < 48; ++i) {
    queries.push_back(random_query(rng));
    expected_a.push_back(describe(select(vllm, queries.back(), p)));
    expected_b.push_back(describe(select(sdpa, queries.back(), p)));
  }
  const auto same = [](const selection_result& r, const std::string& expected) {
    return r.ok() ? describe(r) == expected : expected.rfind("error " + std::string(to_string(r.error().code)), 0) == 0;
  };
  std::atomic<std::size_t> wrong{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < 3000; ++i) {
        const std::size_t k = (i * 5 + t * 11) % queries.size();
        const auto& q = queries[k];  // the same list objects in every thread
        const auto from_a = a.select(q);
        const bool decided_alike = a.decide(q).name() == (from_a.ok() ? from_a->name() : "");
        if (!same(from_a, expected_a[k]) || !same(b.select(q), expected_b[k]) || !same(c.select(q), expected_a[k]) ||
            !decided_alike)
          ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
  CHECK(a.stats().hits > 0);
  CHECK(b.stats().hits > 0);
}

TEST_CASE("docs/reasons.md lists the check gates in the order they run", "[docs][gates]") {
  std::ifstream in(std::string(ATTNSEL_SOURCE_DIR) + "/docs/reasons.md");
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = text.str();
  std::size_t last = 0;
  for (const auto& g : check_gates) {
    INFO(g.name);
    CHECK(g.name == to_string(g.code));
    const auto at = doc.find("| `" + std::string(g.name) + "` |");
    REQUIRE(at != std::string::npos);
    CHECK(at > last);
    last = at;
  }
}

TEST_CASE("the gates a bound selector decides once read nothing of the query but its domain", "[gates]") {
  // Every gate before the first query gate is platform or domain; none after it is.
  bool query_seen = false;
  for (const auto& g : check_gates) {
    if (g.reads == gate_input::query) query_seen = true;
    CHECK((query_seen == (g.reads == gate_input::query)));
  }
  CHECK(query_seen);
}

TEST_CASE("fresh equal queries hit the cache whoever built them", "[cache]") {
  const auto reg = reference_registry();
  const selector bound(reg, platform::rocm("gfx942"));
  std::size_t answered = 0;
  for (int i = 0; i < 2000; ++i) {
    query q;  // built afresh each time, as an engine building each layer's query does
    q.head_size = 64;
    q.required = feature_set{"sinks"};
    const auto r = bound.select(q);
    REQUIRE(r);
    answered += r->name() == select(reg, q, platform::rocm("gfx942"))->name() ? 1 : 0;
  }
  CHECK(answered == 2000);
  CHECK(bound.stats().misses == 1);
  CHECK(bound.stats().hits == 1999);
  // A feature no backend or rule names is answered by the walk, the same as the free select, and
  // leaves the cache alone.
  query odd;
  odd.required = feature_set{"no_such_feature"};
  const auto before = bound.stats();
  CHECK(static_cast<bool>(bound.select(odd)) == static_cast<bool>(select(reg, odd, platform::rocm("gfx942"))));
  CHECK(bound.stats().hits == before.hits);
  CHECK(bound.stats().misses == before.misses);
}
