// SPDX-License-Identifier: Apache-2.0
// Advisories (known-bad combinations, backend_descriptor::advisories): the catalog key, the gate that
// demotes, the warning a selection carries, the opt-in refusal, and both selectors agreeing on all three.
#include "catch.hpp"
#include "fixtures.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/catalog/diff.hpp>
#include <attnsel/catalog/report.hpp>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace attnsel;

namespace {

// FAST: the first choice on CUDA, two variants. Its NEW variant (SM10x) is demoted with sinks and warned
// about with an fp8 KV cache in the prefill phase. SLOW: the fallback, never advised against.
std::string catalog_json(const std::string& advisories_key = "", int version = 2) {
  const std::string advisories = advisories_key.empty() ? R"(, "advisories": [
       {"id": "fast-new-sinks", "variant": "NEW", "when": {"features": ["sinks"]}, "action": "demote",
        "message": "the new kernel drops sinks", "upstream": ["https://example.org/issues/1"]},
       {"id": "fast-fp8-prefill", "platforms": [{"vendor": "cuda", "min_capability": "10.0"}],
        "kv_cache_dtypes": ["fp8"], "when": {"phases": ["prefill"]}, "action": "warn",
        "message": "fp8 prefill is slow here", "upstream": ["https://example.org/issues/2", "https://example.org/pull/3"]}])"
                                                        : advisories_key;
  return std::string(R"({"format": "attnsel-catalog", "version": )") + std::to_string(version) +
         R"(, "name": "advisory-test", "backends": [
    {"name": "FAST", "domains": ["decoder"], "dtypes": ["float16", "bfloat16"], "head_sizes": [64, 128],
     "kv_cache_dtypes": ["auto", "fp8"], "features": ["sinks"],
     "variants": [{"name": "OLD", "platforms": [{"vendor": "cuda", "min_capability": "8.0", "max_capability": "9.9"}]},
                  {"name": "NEW", "platforms": [{"vendor": "cuda", "min_capability": "10.0"}]}])" +
         advisories + R"(},
    {"name": "SLOW", "domains": ["decoder"], "dtypes": ["float16", "bfloat16"], "head_sizes": [64, 128],
     "kv_cache_dtypes": ["auto", "fp8"], "features": ["sinks"], "platforms": [{"vendor": "cuda"}]}],
  "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["FAST", "SLOW"]}]})";
}

query layer(std::initializer_list<std::string_view> features = {}) {
  query q;
  q.head_size = 128;
  q.dtype = data_type::bfloat16;
  q.required = feature_set(features);
  return q;
}

query fp8_prefill() {
  auto q = layer();
  q.kv_cache_dtype = cache_dtype::fp8;
  q.phase = attention_phase::prefill;
  return q;
}

// The free select, the bound one with and without its cache, and decide() agree on the backend, the
// warning and the error code.
selection_result both(const registry& reg, const platform& p, const query& q, const override_request& ovr = {},
                      bool refuse = false) {
  select_options options;
  options.refuse_advisories = refuse;
  auto free_result = select(reg, q, p, ovr, options);
  for (const bool cache : {true, false}) {
    selector_options so;
    so.select = options;
    so.cache = cache;
    const selector bound(reg, p, ovr, so);
    for (int round = 0; round < 2; ++round) {  // the second round reads the cache
      const auto bound_result = bound.select(q);
      fixtures::check_same_answer(free_result, bound_result);
      if (!free_result.ok()) continue;
      CHECK(free_result->warning == bound_result->warning);
      const auto d = bound.decide(q);
      CHECK(d.backend == bound_result->backend);
      CHECK(d.warning == bound_result->warning);
    }
  }
  return free_result;
}

const candidate_report* candidate(const explanation& ex, std::string_view name) {
  const auto it = std::find_if(ex.candidates.begin(), ex.candidates.end(),
                               [&](const candidate_report& c) { return c.name == name; });
  return it == ex.candidates.end() ? nullptr : &*it;
}

}  // namespace

TEST_CASE("a demoting advisory moves automatic selection on and refuses the forced backend", "[advisory]") {
  const auto c = parse_catalog_text(catalog_json(), "advisory.json");
  const auto blackwell = platform::cuda(10, 0);
  const auto hopper = platform::cuda(9, 0);

  // Only the NEW variant is advised against: Hopper runs OLD with sinks.
  CHECK(both(c.registry, hopper, layer({"sinks"}))->name() == "FAST");
  CHECK(both(c.registry, blackwell, layer())->name() == "FAST");
  const auto moved = both(c.registry, blackwell, layer({"sinks"}));
  CHECK(moved->name() == "SLOW");
  CHECK(moved->rank == 2);

  const auto ex = explain(c.registry, layer({"sinks"}), blackwell);
  const auto* fast = candidate(ex, "FAST");
  REQUIRE(fast != nullptr);
  CHECK(fast->outcome == verdict::rejected);
  REQUIRE(fast->reasons.size() == 1);
  CHECK(fast->reasons[0].code == reason_code::advisory);
  CHECK(fast->reasons[0].message ==
        "advisory fast-new-sinks: the new kernel drops sinks (https://example.org/issues/1)");

  const auto refused = both(c.registry, blackwell, layer({"sinks"}), override_request{"FAST", override_source::flag});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == error_code::backend_rejected);
  CHECK(refused.error().message.find("advisory fast-new-sinks") != std::string::npos);
  CHECK(std::find(refused.error().suggestions.begin(), refused.error().suggestions.end(), "SLOW") !=
        refused.error().suggestions.end());
  CHECK(first_failure(c.registry.backends()[0], layer({"sinks"}), blackwell) == reason_code::advisory);
}

TEST_CASE("a warning advisory rides on the selection, and refuse_advisories refuses it", "[advisory]") {
  const auto c = parse_catalog_text(catalog_json(), "advisory.json");
  const auto blackwell = platform::cuda(10, 0);
  const auto& fast = c.registry.backends()[0];
  REQUIRE(fast.advisories.size() == 2);

  const auto warned = both(c.registry, blackwell, fp8_prefill());
  CHECK(warned->name() == "FAST");
  CHECK(warned->warning == &fast.advisories[1]);

  // Another phase, KV dtype or device: no warning. An unstated phase does not apply it either.
  auto decode = fp8_prefill();
  decode.phase = attention_phase::decode;
  CHECK(both(c.registry, blackwell, decode)->warning == nullptr);
  auto unstated = fp8_prefill();
  unstated.phase = attention_phase::unstated;
  CHECK(both(c.registry, blackwell, unstated)->warning == nullptr);
  auto bf16 = fp8_prefill();
  bf16.kv_cache_dtype = cache_dtype::automatic;
  CHECK(both(c.registry, blackwell, bf16)->warning == nullptr);
  CHECK(both(c.registry, platform::cuda(9, 0), fp8_prefill())->warning == nullptr);

  const auto ex = explain(c.registry, fp8_prefill(), blackwell);
  const auto* chosen = candidate(ex, "FAST");
  REQUIRE(chosen != nullptr);
  CHECK(chosen->outcome == verdict::selected);
  REQUIRE(chosen->warnings.size() == 1);
  CHECK(chosen->warnings[0].message ==
        "advisory fast-fp8-prefill: fp8 prefill is slow here (https://example.org/issues/2)");
  const auto report = to_json(ex, fp8_prefill(), blackwell, {});
  CHECK(report["advisory"]["id"] == "fast-fp8-prefill");
  CHECK(report["advisory"]["upstream"].size() == 2);
  CHECK(report["candidates"][0]["warnings"].size() == 1);

  // Opt-in refusal: the warning becomes a reason, the next backend runs, and a forced FAST fails.
  const auto refused = both(c.registry, blackwell, fp8_prefill(), {}, true);
  CHECK(refused->name() == "SLOW");
  CHECK(refused->warning == nullptr);
  select_options refuse;
  refuse.refuse_advisories = true;
  const auto strict = explain(c.registry, fp8_prefill(), blackwell, {}, refuse);
  const auto* passed_over = candidate(strict, "FAST");
  REQUIRE(passed_over != nullptr);
  CHECK(passed_over->outcome == verdict::rejected);
  REQUIRE(passed_over->reasons.size() == 1);
  CHECK(passed_over->reasons[0].code == reason_code::advisory);
  CHECK(passed_over->warnings.empty());
  const auto forced = both(c.registry, blackwell, fp8_prefill(), override_request{"FAST", override_source::api}, true);
  REQUIRE_FALSE(forced.ok());
  CHECK(forced.error().code == error_code::backend_rejected);
  CHECK(forced.error().suggestions == std::vector<std::string>{"SLOW"});  // never the refused backend

  // With the phase unstated the warning does not apply, and explain says what it hangs on.
  const auto open = explain(c.registry, unstated, blackwell);
  CHECK(std::any_of(open.unstated.begin(), open.unstated.end(), [](const unstated_dependency& u) {
    return u.subject == "FAST/NEW" && u.fields == "phase" && u.condition.rfind("advisory fast-fp8-prefill", 0) == 0;
  }));
}

TEST_CASE("advisories round-trip through the catalog writer and need format 2", "[advisory]") {
  const auto c = parse_catalog_text(catalog_json(), "advisory.json");
  const auto again = parse_catalog_text(json_text(to_json(c)), "again.json");
  CHECK(again.registry == c.registry);
  CHECK(again.registry.backends()[0].advisories == c.registry.backends()[0].advisories);
  CHECK(to_string(c.registry.backends()[0].advisories[0]) == "fast-new-sinks (demote NEW when +sinks)");
  CHECK_THROWS_WITH(
      parse_catalog_text(catalog_json("", 1), "v1.json"),
      Catch::Matchers::Contains("/backends/0/advisories") && Catch::Matchers::Contains("needs catalog version 2"));
}

TEST_CASE("a malformed advisory is refused with its JSON pointer", "[advisory]") {
  const auto refuse = [](const std::string& entry, const char* expected) {
    INFO(entry);
    CHECK_THROWS_WITH(parse_catalog_text(catalog_json(R"(, "advisories": [)" + entry + "]"), "bad.json"),
                      Catch::Matchers::Contains(expected));
  };
  const std::string ok_tail = R"("action": "warn", "message": "m", "upstream": ["https://example.org/1"])";
  refuse(R"({"id": "Bad_Id", )" + ok_tail + "}", "/advisories/0/id");
  refuse(R"({"id": "a", "variant": "MISSING", )" + ok_tail + "}", "has no variant \"MISSING\"");
  refuse(R"({"id": "a", "action": "warn", "message": "m"})", "/advisories/0");
  refuse(R"({"id": "a", "action": "warn", "message": "m", "upstream": ["http://example.org/1"]})",
         "/advisories/0/upstream/0");
  refuse(R"({"id": "a", "action": "warn", "message": "m", "upstream": []})", "/advisories/0/upstream");
  refuse(R"({"id": "a", "action": "warn", "message": "", "upstream": ["https://example.org/1"]})",
         "/advisories/0/message");
  refuse(R"({"id": "a", "action": "maybe", "message": "m", "upstream": ["https://example.org/1"]})",
         "/advisories/0/action");
  refuse(R"({"id": "a", )" + ok_tail + R"(}, {"id": "a", )" + ok_tail + "}", "duplicate advisory id");
  refuse(R"({"id": "a", "typo": 1, )" + ok_tail + "}", "typo");
}

TEST_CASE("descriptors built in C++ get the same advisory checks as catalogs", "[advisory]") {
  backend_descriptor b;
  b.name = "ADVISED";
  advisory a;
  a.id = "x";
  a.message = "m";
  registry reg;
  SECTION("no upstream") {
    b.advisories = {a};
    CHECK_THROWS_WITH(reg.add(b), Catch::Matchers::Contains("cites no upstream issue"));
  }
  SECTION("an unknown variant") {
    a.upstream = {"https://example.org/1"};
    a.variant = "NOPE";
    b.advisories = {a};
    CHECK_THROWS_WITH(reg.add(b), Catch::Matchers::Contains("variant 'NOPE'"));
  }
  SECTION("an upstream that is not https") {
    a.upstream = {"http://example.org/1"};
    b.advisories = {a};
    CHECK_THROWS_WITH(reg.add(b), Catch::Matchers::Contains("is not an https:// URL"));
  }
  SECTION("a condition that can never hold") {
    a.upstream = {"https://example.org/1"};
    a.when.never = true;
    b.advisories = {a};
    CHECK_THROWS_WITH(reg.add(b), Catch::Matchers::Contains("can never hold"));
  }
  SECTION("valid") {
    a.upstream = {"https://example.org/1"};
    b.advisories = {a};
    reg.add(b);
    CHECK(reg.backends()[0].advisories.size() == 1);
  }
}

TEST_CASE("the release catalogs' advisories hold where their engines demote", "[advisory][catalog]") {
  // vLLM 0.33.0 runs FA2 under VLLM_BATCH_INVARIANT on SM10x (fa_utils.py), which has no sinks and
  // no fp8 KV cache there: FLASH_ATTN is demoted, and a forced one refused.
  const auto& vllm = builtin_catalog("vllm@0.33.0").registry;
  const auto b200 = platform::cuda(10, 0);
  auto q = layer({"batch_invariant", "sinks"});
  const auto chosen = both(vllm, b200, q);
  CHECK(chosen->name() != "FLASH_ATTN");
  const auto forced = select(vllm, q, b200, override_request{"FLASH_ATTN", override_source::flag});
  REQUIRE_FALSE(forced.ok());
  CHECK(forced.error().message.find("vllm-fa4-batch-invariant-sinks") != std::string::npos);
  CHECK(both(vllm, b200, layer({"sinks"}))->name() != "TRITON_ATTN");  // without batch invariance: unaffected
  auto fp8 = layer({"batch_invariant"});
  fp8.kv_cache_dtype = cache_dtype::fp8;
  CHECK(select(vllm, fp8, b200, override_request{"FLASH_ATTN", override_source::flag}).ok() == false);
  fp8.kv_cache_dtype = cache_dtype::automatic;
  CHECK(select(vllm, fp8, b200, override_request{"FLASH_ATTN", override_source::flag}).ok());

  // SGLang 0.5.23 refuses trtllm_mha as the prefill backend on SM120 with an fp8_e4m3 KV cache.
  const auto& sglang = builtin_catalog("sglang@0.5.23").registry;
  platform sm120 = platform::cuda(12, 0);
  sm120.add_component_spec("flashinfer");
  sm120.add_component_spec("cuda_runtime=12.8");
  query prefill = layer();
  prefill.kv_cache_dtype = cache_dtype::fp8_e4m3;
  prefill.phase = attention_phase::prefill;
  const auto trtllm = override_request{"TRTLLM_MHA", override_source::flag};
  const auto refused = select(sglang, prefill, sm120, trtllm);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("sglang-sm120-trtllm-prefill-fp8") != std::string::npos);
  auto decode = prefill;
  decode.phase = attention_phase::decode;
  CHECK(select(sglang, decode, sm120, trtllm).ok());
}

TEST_CASE("diff sees an advisory: a demotion changes the backend, a warning the decision", "[advisory][diff]") {
  const auto with = parse_catalog_text(catalog_json(), "with.json");
  const auto without = parse_catalog_text(catalog_json(R"(, "advisories": [])"), "without.json");
  const auto d = diff_catalogs(without, with);
  CHECK(d.changed > 0);
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& g : d.groups)
    for (const auto& t : g.transitions) seen.insert({t.from, t.to});
  CHECK(seen.count({"FAST", "SLOW"}) == 1);                           // NEW with sinks: demoted
  CHECK(seen.count({"FAST", "FAST warning:fast-fp8-prefill"}) == 1);  // fp8 prefill on SM10x: warned
  CHECK(seen.count({"FAST", "error:backend_rejected"}) == 1);         // FAST forced with sinks on SM10x
  CHECK(diff_catalogs(with, with).changed == 0);
}
