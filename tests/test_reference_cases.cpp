// SPDX-License-Identifier: Apache-2.0
// Table-driven selection cases reproduced from vLLM's and PyTorch's own tests (tests/data/*.json).
#include "builtin_registries.hpp"
#include "catch.hpp"
#include "fixtures.hpp"

#include <fstream>
#include <map>

using namespace attnsel;
using nlohmann::json;

namespace {

json load_cases(const std::string& file) {
  std::ifstream in(std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/" + file);
  REQUIRE(in);
  return json::parse(in);
}

using fixtures::catalog_registry;

std::set<std::string> code_set(const json& codes) {
  std::set<std::string> out;
  for (const auto& c : codes) out.insert(c.get<std::string>());
  return out;
}

void run_cases(const std::string& file) {
  const auto doc = load_cases(file);
  REQUIRE(doc.at("cases").size() > 10);
  for (const auto& c : doc.at("cases")) {
    const auto name = c.at("name").get<std::string>();
    INFO(file << ": " << name << "\n  source: " << c.value("source", ""));
    const auto& reg = catalog_registry(c.at("catalog").get<std::string>());
    const auto p = platform_from_json(c.at("platform"));
    const auto q = query_from_json(c.value("query", json::object()));
    const auto spec = c.value("override", std::string());
    const auto ex = explain(reg, q, p, override_request{spec, override_source::api});
    const auto& expect = c.at("expect");
    if (expect.contains("backend")) {
      INFO((ex.result ? "" : ex.result.error().message));
      REQUIRE(ex.result);
      CHECK(ex.result->name() == expect.at("backend").get<std::string>());
    } else {
      REQUIRE_FALSE(ex.result);
      CHECK(to_string(ex.result.error().code) == expect.at("error").get<std::string>());
    }
    // Reason codes per candidate, exactly as listed.
    const auto reasons = expect.value("reasons", json::object());
    for (const auto& item : reasons.items()) {
      INFO("candidate " << item.key());
      const auto& candidates = ex.result ? ex.candidates : ex.result.error().candidates;
      const auto* cand = fixtures::find_candidate(candidates, item.key());
      REQUIRE(cand);
      CHECK(fixtures::codes(cand->reasons) == code_set(item.value()));
    }
  }
}

}  // namespace

TEST_CASE("vLLM's published selection cases pass on the reference catalog", "[reference][vllm]") {
  run_cases("vllm_cases.json");
}

TEST_CASE("PyTorch SDPA's selection rules pass on the torch_sdpa catalog", "[reference][torch_sdpa]") {
  run_cases("torch_sdpa_cases.json");
}

TEST_CASE("SGLang's automatic choice passes on the sglang catalog", "[reference][sglang]") {
  run_cases("sglang_cases.json");
}

TEST_CASE("ROCm puts ROCM_ATTN first and sends sinks elsewhere", "[reference][vllm]") {
  const auto reg = reference_registry();
  auto p = platform::rocm("gfx942");
  query q;
  CHECK(select(reg, q, p)->name() == "ROCM_ATTN");
  q.required.insert("sinks");
  const auto ex = explain(reg, q, p);
  REQUIRE(ex.result);
  CHECK(ex.result->name() != "ROCM_ATTN");
  const auto* rocm_attn = fixtures::find_candidate(ex.candidates, "ROCM_ATTN");
  REQUIRE(rocm_attn);
  CHECK(rocm_attn->outcome == verdict::rejected);
  CHECK(fixtures::codes(rocm_attn->reasons) == std::set<std::string>{"feature"});
}

TEST_CASE("an encoder override is honoured even when a faster backend is installed", "[reference][vllm][domain]") {
  const auto reg = reference_registry();
  auto p = platform::rocm("gfx942");
  for (const char* c : {"aiter", "aiter_enabled", "aiter_mha", "flash_attn"}) p.add_component_spec(c);
  query q;
  q.domain = attention_domain::encoder;
  q.attn_type = attention_type::encoder_only;
  q.head_size = 80;
  const auto automatic = select(reg, q, p);
  REQUIRE(automatic);
  CHECK(automatic->name() != "TORCH_SDPA");
  override_set overrides;
  overrides.encoder = {"TORCH_SDPA", override_source::flag};
  overrides.decoder = {"TRITON_ATTN", override_source::flag};
  const auto forced = select(reg, q, p, overrides);
  REQUIRE(forced);
  CHECK(forced->name() == "TORCH_SDPA");
  CHECK(forced->overridden);
}
