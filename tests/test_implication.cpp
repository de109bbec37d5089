// SPDX-License-Identifier: Apache-2.0
// Component implications: validation, closure, catalog round trip and merge, and their effect on selection.
#include "catch.hpp"
#include "fixtures.hpp"

using namespace attnsel;
using nlohmann::json;

namespace {

std::vector<component_implication> aiter_table() {
  return {{"aiter_mha", {"aiter_enabled"}}, {"aiter_enabled", {"aiter"}}, {"aiter_mla", {"aiter_enabled"}}};
}

registry with_aiter_table() {
  registry reg = fixtures::small_registry();
  reg.set_implications(aiter_table());
  return reg;
}

json overlay_with(json implications) {
  return json{{"format", "attnsel-catalog"},
              {"version", 1},
              {"name", "o"},
              {"backends", json::array()},
              {"implications", std::move(implications)}};
}

}  // namespace

TEST_CASE("A platform is closed transitively and records what implied each component", "[implication]") {
  const auto reg = with_aiter_table();
  auto p = platform::rocm("gfx942");
  p.add_component("aiter_mha");
  CHECK_FALSE(is_closed(reg, p));
  const auto closed = close_platform(reg, p);
  CHECK(closed.value.has_component("aiter_enabled"));
  CHECK(closed.value.has_component("aiter"));
  CHECK_FALSE(closed.value.has_component("aiter_mla"));
  REQUIRE(closed.implied.size() == 2);
  CHECK(closed.implied[0] == implied_component{"aiter_enabled", "aiter_mha"});
  CHECK(closed.implied[1] == implied_component{"aiter", "aiter_enabled"});
  CHECK(is_closed(reg, closed.value));
  CHECK(close_platform(reg, closed.value).implied.empty());
}

TEST_CASE("Closure keeps a given component's version and adds implied ones without a version", "[implication]") {
  registry reg = fixtures::small_registry();
  reg.set_implications({{"flashinfer_jit", {"flashinfer"}}});
  platform p = platform::cuda(9, 0);
  p.add_component_spec("flashinfer=0.2.5");
  p.add_component("flashinfer_jit");
  CHECK(is_closed(reg, p));
  CHECK(close_platform(reg, p).value.find_component("flashinfer")->version == parse_component_version("0.2.5"));
  platform q = platform::cuda(9, 0);
  q.add_component("flashinfer_jit");
  CHECK_FALSE(close_platform(reg, q).value.find_component("flashinfer")->version.has_value());
}

TEST_CASE("Malformed implication tables are refused and leave the registry unchanged", "[implication]") {
  registry reg = with_aiter_table();
  const auto before = reg;
  const std::vector<std::pair<std::vector<component_implication>, std::string>> bad = {
      {{{"Aiter", {"x"}}}, "not a lower_snake name"},
      {{{"a", {"b"}}, {"a", {"c"}}}, "listed twice"},
      {{{"a", {"a"}}}, "implies itself"},
      {{{"a", {}}}, "implies nothing"},
      {{{"a", {"b", "b"}}}, "implies b twice"},
      {{{"a", {"bad-name"}}}, "not a lower_snake name"},
  };
  for (const auto& [table, text] : bad) {
    CHECK_THROWS_WITH(reg.set_implications(table), ATTNSEL_CONTAINS(text));
    CHECK(reg == before);
  }
  std::vector<component_implication> too_many;
  for (std::size_t i = 0; i <= implication_limits::max_entries; ++i)
    too_many.push_back({"c" + std::to_string(i), {"x"}});
  CHECK_THROWS_WITH(reg.set_implications(too_many), ATTNSEL_CONTAINS("the limit is 256"));
  component_implication wide{"a", {}};
  for (std::size_t i = 0; i <= implication_limits::max_implied; ++i) wide.implies.push_back("n" + std::to_string(i));
  CHECK_THROWS_WITH(reg.set_implications({wide}), ATTNSEL_CONTAINS("the limit is 16"));
}

TEST_CASE("Implications round-trip through catalog JSON in canonical order", "[implication][catalog]") {
  catalog c;
  c.info.name = "t";
  c.registry = with_aiter_table();
  const auto j = to_json(c);
  REQUIRE(j.contains("implications"));
  CHECK(j["implications"]["aiter_mha"] == json::array({"aiter_enabled"}));
  const auto back = parse_catalog(j);
  CHECK(back == c);
  CHECK(back.registry.implications().front().component == "aiter_enabled");
  catalog plain;
  plain.info.name = "p";
  plain.registry = fixtures::small_registry();
  CHECK_FALSE(to_json(plain).contains("implications"));
}

TEST_CASE("Catalog implication errors name the pointer", "[implication][catalog]") {
  auto doc = to_json(catalog{{"t", "", "", {}, {}}, fixtures::small_registry()});
  const std::vector<std::pair<json, std::string>> bad = {
      {json::array(), "/implications: expected an object"},
      {json{{"Bad", json::array({"x"})}}, "/implications/Bad: \"Bad\" is not a lower_snake component name"},
      {json{{"a", json::array()}}, "/implications/a: expected a non-empty array of component names"},
      {json{{"a", json::array({1})}}, "/implications/a/0: expected a string"},
      {json{{"a", json::array({"B"})}}, "/implications/a/0: expected a lower_snake component name"},
      {json{{"a", json::array({"a"})}}, "/implications: implications: component a implies itself"},
  };
  for (const auto& [value, text] : bad) {
    doc["implications"] = value;
    CHECK_THROWS_WITH(parse_catalog(doc, "f.json"), ATTNSEL_CONTAINS("f.json: " + text));
  }
}

TEST_CASE("An overlay's implications replace the base's entry of the same component and add others",
          "[implication][catalog]") {
  registry reg = with_aiter_table();
  registry overlay;
  overlay.set_implications({{"aiter_mha", {"aiter_enabled", "ck"}}, {"fa_jit", {"flash_attn"}}});
  reg.merge(overlay);
  REQUIRE(reg.implications().size() == 4);
  const auto find = [&](const std::string& name) {
    for (const auto& imp : reg.implications())
      if (imp.component == name) return imp.implies;
    return std::vector<std::string>{};
  };
  CHECK(find("aiter_mha") == std::vector<std::string>{"aiter_enabled", "ck"});
  CHECK(find("fa_jit") == std::vector<std::string>{"flash_attn"});
  CHECK(find("aiter_mla") == std::vector<std::string>{"aiter_enabled"});

  // The same through a catalog document layered on the reference one.
  auto ref = reference_registry();
  const auto merged = parse_catalog(overlay_with({{"aiter_mla", {"aiter_enabled", "mla_kernels"}}}));
  ref.merge(merged.registry);
  auto p = platform::rocm("gfx942");
  p.add_component("aiter_mla");
  CHECK(close_platform(ref, p).value.has_component("mla_kernels"));
  CHECK(close_platform(ref, p).value.has_component("aiter"));
}

TEST_CASE("The reference catalog declares vLLM's AITER implications", "[implication][reference]") {
  const auto reg = reference_registry();
  auto p = platform::rocm("gfx942");
  p.add_component("aiter_mla");
  const auto closed = close_platform(reg, p);
  CHECK(closed.value.has_component("aiter_enabled"));
  CHECK(closed.value.has_component("aiter"));
  CHECK_FALSE(closed.value.has_component("aiter_mha"));
}

TEST_CASE("explain lists implied components; select gives the same answer closed or not", "[implication][selector]") {
  const auto reg = reference_registry();
  auto p = platform::rocm("gfx942");
  p.add_component("aiter_mha");
  query q;
  q.domain = attention_domain::encoder;
  q.head_size = 64;
  q.dtype = data_type::bfloat16;
  q.attn_type = attention_type::encoder_only;
  const auto ex = explain(reg, q, p);
  REQUIRE(ex.result.ok());
  CHECK(ex.result->name() == "ROCM_AITER_FA");
  REQUIRE(ex.implied.size() == 2);
  CHECK(ex.implied[0].name == "aiter_enabled");
  CHECK(ex.implied[0].because == "aiter_mha");
  const auto report = to_json(ex, q, p, {});
  CHECK(report["implied"][1] == json({{"component", "aiter"}, {"because", "aiter_enabled"}}));

  const auto closed = close_platform(reg, p).value;
  const auto a = select(reg, q, p);
  const auto b = select(reg, q, closed);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->backend == b->backend);
  CHECK(explain(reg, q, closed).implied.empty());
}
