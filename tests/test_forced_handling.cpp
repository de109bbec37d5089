// SPDX-License-Identifier: Apache-2.0
// An engine that substitutes for a forced backend (policy_rule::forced) and a backend only an override
// reaches (backend_descriptor::forced_only): the catalog keys, both selectors, explain and lint.
#include "catch.hpp"
#include "fixtures.hpp"

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/catalog/lint.hpp>

#include <algorithm>
#include <string>

using namespace attnsel;

namespace {

// CPU_A: the CPU's own backend (heads 64 and 128). CPU_C: runs on the CPU, but only when forced.
// GPU_B: CUDA only. On the CPU a float32 query ignores any forced backend; any other query falls back
// from a forced backend that cannot run.
std::string catalog_json(const char* cpu_c_extra = R"(, "forced_only": true)", int version = 2) {
  return std::string(R"({"format": "attnsel-catalog", "version": )") + std::to_string(version) +
         R"(, "name": "forced-test", "backends": [
    {"name": "CPU_A", "domains": ["decoder"], "dtypes": ["float16", "bfloat16", "float32"], "head_sizes": [64, 128],
     "platforms": [{"vendor": "cpu"}]},
    {"name": "GPU_B", "domains": ["decoder"], "dtypes": ["float16", "bfloat16", "float32"], "head_sizes": [64, 128],
     "platforms": [{"vendor": "cuda", "min_capability": "8.0"}]},
    {"name": "CPU_C", "domains": ["decoder"], "dtypes": ["float16", "bfloat16", "float32"], "head_sizes": [64, 128],
     "platforms": [{"vendor": "cpu"}])" +
         cpu_c_extra + R"(}],
  "policies": [
    {"domain": "decoder", "vendor": "cpu", "dtypes": ["float32"], "forced": "ignored",
     "note": "float32 runs CPU_A before the override is read", "order": ["CPU_A"]},
    {"domain": "decoder", "vendor": "cpu", "forced": "fallback", "note": "logs and runs its own", "order": ["CPU_A"]},
    {"domain": "decoder", "vendor": "cuda", "order": ["GPU_B"]}]})";
}

query half(std::uint32_t head = 128) {
  query q;
  q.head_size = head;
  q.dtype = data_type::float16;
  return q;
}

query fp32() {
  query q;
  q.dtype = data_type::float32;
  return q;
}

override_request forced(const char* spec) { return override_request{spec, override_source::flag}; }

// The free and the bound selector give the same answer (the bound one delegates these queries).
selection_result both(const registry& reg, const platform& p, const query& q, const char* spec) {
  auto free_result = select(reg, q, p, forced(spec));
  const selector bound(reg, p, forced(spec));
  const auto bound_result = bound.select(q);
  fixtures::check_same_answer(free_result, bound_result);
  if (bound_result.ok()) {
    const auto d = bound.decide(q);
    CHECK(d.backend == bound_result->backend);
    CHECK(d.fell_back == bound_result->fell_back);
  }
  return free_result;
}

}  // namespace

TEST_CASE("a rule with forced fallback replaces a forced backend that cannot run, and says so", "[forced]") {
  const auto c = parse_catalog_text(catalog_json(), "forced.json");
  const auto& reg = c.registry;
  // GPU_B cannot run on the CPU: the engine logs it and runs its own choice.
  const auto r = both(reg, platform::cpu(), half(), "GPU_B");
  REQUIRE(r.ok());
  CHECK(r->name() == "CPU_A");
  CHECK_FALSE(r->overridden);
  CHECK(r->fell_back);
  CHECK(r->source == override_source::flag);
  REQUIRE(r->fallback.size() == 1);
  CHECK(r->fallback[0].name == "GPU_B");
  CHECK(r->fallback[0].forced);
  CHECK(r->fallback[0].reasons.front().code == reason_code::platform);
  // A forced backend that runs is honoured.
  const auto honoured = both(reg, platform::cpu(), half(), "CPU_C");
  REQUIRE(honoured.ok());
  CHECK(honoured->name() == "CPU_C");
  CHECK(honoured->overridden);
  CHECK_FALSE(honoured->fell_back);
  // Where no rule substitutes (CUDA), the override stays strict: a forced backend that cannot run fails.
  const auto strict = both(reg, platform::cuda(9, 0), half(), "CPU_A");
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.error().code == error_code::backend_rejected);
  // Falling back does not make a query the automatic order cannot run succeed.
  const auto none = both(reg, platform::cpu(), half(72), "GPU_B");
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code == error_code::backend_rejected);
}

TEST_CASE("a rule with forced ignored runs the automatic order even for a forced backend that runs", "[forced]") {
  const auto c = parse_catalog_text(catalog_json(), "forced.json");
  const auto& reg = c.registry;
  const auto r = both(reg, platform::cpu(), fp32(), "CPU_C");
  REQUIRE(r.ok());
  CHECK(r->name() == "CPU_A");
  CHECK_FALSE(r->overridden);
  CHECK(r->fell_back);
  REQUIRE(r->fallback.size() == 1);
  CHECK(r->fallback[0].name == "CPU_C");
  REQUIRE(r->fallback[0].reasons.size() == 1);
  CHECK(r->fallback[0].reasons[0].code == reason_code::forced_ignored);
  CHECK_THAT(r->fallback[0].reasons[0].message, ATTNSEL_CONTAINS("before the override is read"));
  // explain names the rule and lists the passed-over backend before the automatic walk.
  const auto ex = explain(reg, fp32(), platform::cpu(), forced("CPU_C"));
  CHECK_THAT(ex.rule, ATTNSEL_CONTAINS("forced ignored"));
  CHECK(ex.note == "float32 runs CPU_A before the override is read");
  REQUIRE(ex.candidates.size() >= 2);
  CHECK(ex.candidates[0].name == "CPU_C");
  CHECK(ex.candidates[0].reasons[0].code == reason_code::forced_ignored);
  const auto winner = std::find_if(ex.candidates.begin(), ex.candidates.end(),
                                   [](const candidate_report& cr) { return cr.outcome == verdict::selected; });
  REQUIRE(winner != ex.candidates.end());
  CHECK(winner->name == "CPU_A");
  // Without an override nothing is reported as passed over.
  const auto plain = select(reg, fp32(), platform::cpu());
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->fell_back);
  CHECK(plain->fallback.empty());
}

TEST_CASE("forced and forced_only round-trip through the catalog and need format 2", "[forced][catalog]") {
  const auto c = parse_catalog_text(catalog_json(), "forced.json");
  const auto j = to_json(c);
  CHECK(j.at("policies").at(0).at("forced") == "ignored");
  CHECK(j.at("policies").at(1).at("forced") == "fallback");
  CHECK_FALSE(j.at("policies").at(2).contains("forced"));
  CHECK(j.at("backends").at(2).at("forced_only") == true);
  CHECK_FALSE(j.at("backends").at(0).contains("forced_only"));
  const auto again = parse_catalog_text(j.dump(), "again.json");
  CHECK(again.registry.policy() == c.registry.policy());
  CHECK(again.registry.backends() == c.registry.backends());
  CHECK_THROWS_WITH(parse_catalog_text(catalog_json(R"(, "forced_only": "yes")"), "bad.json"),
                    ATTNSEL_CONTAINS("forced_only"));
  CHECK_THROWS_WITH(parse_catalog_text(catalog_json(R"(, "forced_only": true)", 1), "v1.json"),
                    ATTNSEL_CONTAINS("version 2"));
}

TEST_CASE("lint does not call a forced_only backend unreachable, and still catches one not marked", "[forced][lint]") {
  const auto marked = lint_catalog(parse_catalog_text(catalog_json(), "forced.json"));
  CHECK(std::none_of(marked.begin(), marked.end(),
                     [](const lint_finding& f) { return f.code == lint_code::unreachable_backend; }));
  const auto unmarked = lint_catalog(parse_catalog_text(catalog_json(""), "forced.json"));
  CHECK(std::count_if(unmarked.begin(), unmarked.end(), [](const lint_finding& f) {
          return f.code == lint_code::unreachable_backend && f.message.find("CPU_C") != std::string::npos;
        }) == 1);
}

TEST_CASE("vLLM 0.33.0 substitutes on CPU and XPU as its platforms do", "[forced][reference][vllm]") {
  const auto reg = builtin_registry("vllm@0.33.0");
  // platforms/cpu.py: a forced GPU backend is logged and CPU_ATTN runs.
  const auto cpu = select(reg, half(), platform::cpu(), forced("FLASH_ATTN"));
  REQUIRE(cpu.ok());
  CHECK(cpu->name() == "CPU_ATTN");
  CHECK(cpu->fell_back);
  // platforms/xpu.py: a float32 vision tower runs TRITON_ATTN whatever was forced.
  query vit = fp32();
  vit.domain = attention_domain::encoder;
  vit.head_size = 64;
  const auto xpu = select(reg, vit, platform(device_vendor::xpu), forced("TORCH_SDPA"));
  REQUIRE(xpu.ok());
  CHECK(xpu->name() == "TRITON_ATTN");
  REQUIRE_FALSE(xpu->fallback.empty());
  CHECK(xpu->fallback[0].reasons[0].code == reason_code::forced_ignored);
  // On CUDA the override stays strict.
  CHECK_FALSE(select(reg, half(), platform::cuda(9, 0), forced("CPU_ATTN")).ok());
}
