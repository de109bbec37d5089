// SPDX-License-Identifier: Apache-2.0
// Regression tests of issue 9: bounded work on hostile catalogs, strict JSON, one set of limits.
#include "catch.hpp"
#include "fixtures.hpp"

#include <string>

using namespace attnsel;
using nlohmann::json;

namespace {

std::string backend_text(const std::string& name, const std::string& extra = "") {
  return R"({"name": ")" + name + R"(", "domains": ["decoder"])" + extra + "}";
}

std::string catalog_text(const std::string& backends, const std::string& policies = "[]") {
  return R"({"format": "attnsel-catalog", "version": 1, "name": "t", "backends": [)" + backends + R"(], "policies": )" +
         policies + "}";
}

// The loader's error for `text` as {pointer, problem}; {"", ""} when it loads.
std::pair<std::string, std::string> text_error(const std::string& text, const catalog_limits& limits = {}) {
  try {
    (void)parse_catalog_text(text, "t.json", limits);
    return {"", ""};
  } catch (const catalog_error& e) {
    return {e.pointer(), e.problem()};
  }
}

std::string feature_list(std::size_t n, std::size_t start = 0) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) out += (i ? ",\"f" : "\"f") + std::to_string(start + i) + "\"";
  return out + "]";
}

}  // namespace

TEST_CASE("variants share their backend's feature list instead of copying it (defect 1)", "[hardening]") {
  std::string variants;
  for (int i = 0; i < 50; ++i) variants += std::string(i ? "," : "") + R"({"name": "V)" + std::to_string(i) + R"("})";
  const auto c = parse_catalog_text(
      catalog_text(backend_text("A", R"(, "features": )" + feature_list(100) + R"(, "variants": [)" + variants + "]")));
  const auto& b = c.registry.backends().at(0);
  REQUIRE(b.variants.size() == 50);
  CHECK(b.variants[0].features.size() == 100);
  for (const auto& v : b.variants) CHECK(v.features.shares_storage_with(b.caps.features));
}

TEST_CASE("catalog_limits bound variants, list elements and inherited elements (defect 1)", "[hardening]") {
  catalog_limits small;
  small.max_variants_per_backend = 3;
  small.max_list_elements = 10;
  small.max_total_elements = 40;
  std::string four = R"({"name": "A"}, {"name": "B"}, {"name": "C"}, {"name": "D"})";
  auto [ptr, problem] = text_error(catalog_text(backend_text("X", R"(, "variants": [)" + four + "]")), small);
  CHECK(ptr == "/backends/0/variants");
  CHECK_THAT(problem, ATTNSEL_CONTAINS("max_variants_per_backend"));

  std::tie(ptr, problem) = text_error(catalog_text(backend_text("X", R"(, "features": )" + feature_list(11))), small);
  CHECK(ptr == "/backends/0/features");
  CHECK_THAT(problem, ATTNSEL_CONTAINS("max_list_elements"));

  // The document's lists hold 15 elements (1 backend, 1 domain, 10 block sizes, 3 variants) and each
  // variant copies the 10 block sizes: the third variant takes the total to 45.
  std::string copies = R"({"name": "A"}, {"name": "B"}, {"name": "C"})";
  const std::string sizes = R"(, "block_size_multiples": [1,2,3,4,5,6,7,8,9,10], "variants": [)" + copies + "]";
  std::tie(ptr, problem) = text_error(catalog_text(backend_text("X", sizes)), small);
  CHECK(ptr == "/backends/0/variants/2");
  CHECK_THAT(problem, ATTNSEL_CONTAINS("max_total_elements"));
  small.max_total_elements = 45;
  CHECK(text_error(catalog_text(backend_text("X", sizes)), small).first.empty());
}

TEST_CASE("features in any order load into one sorted set (defect 3)", "[hardening]") {
  std::string desc = "[";
  for (int i = 999; i >= 0; --i) desc += "\"f" + std::to_string(i) + "\"" + (i ? "," : "");
  desc += ",\"f5\"]";
  const auto c = parse_catalog_text(catalog_text(backend_text("A", R"(, "features": )" + desc)));
  const auto& f = c.registry.backends()[0].caps.features;
  CHECK(f.size() == 1000);
  CHECK(std::is_sorted(f.begin(), f.end()));
  const auto q = query_from_json(json{{"features", {"b", "a", "b"}}});
  CHECK(q.required == feature_set{"a", "b"});
}

TEST_CASE("a backend added in bulk or one by one lands in the same index (defect 2)", "[hardening]") {
  registry one_by_one;
  std::vector<backend_descriptor> list;
  for (int i = 0; i < 300; ++i) {
    backend_descriptor b;
    b.name = "B" + std::to_string((i * 7919) % 300);
    b.aliases = {"ALIAS_" + b.name};
    list.push_back(b);
    one_by_one.add(b);
  }
  registry bulk;
  bulk.add_or_replace_all(list);
  CHECK(bulk == one_by_one);
  CHECK(bulk.all_names() == one_by_one.all_names());
  const auto names = bulk.all_names();
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(bulk.find("alias_b17") == bulk.find("B17"));
  backend_descriptor clash;
  clash.name = "NEW";
  clash.aliases = {"B5"};
  const auto before = one_by_one;
  CHECK_THROWS_WITH(one_by_one.add(clash), ATTNSEL_CONTAINS("name B5 is used by both"));
  CHECK_THROWS_AS(bulk.add_or_replace_all({clash}), registry_error);
  CHECK(one_by_one == before);
  CHECK(bulk == before);
}

TEST_CASE("repeated JSON keys are refused at their pointer, in catalogs, queries and platforms (defect 4)",
          "[hardening]") {
  auto [ptr, problem] = text_error(R"({"format": "attnsel-catalog", "version": 1, "name": "t",
      "backends": [{"name": "A", "domains": ["decoder"]}], "backends": []})");
  CHECK(ptr == "/backends");
  CHECK_THAT(problem, ATTNSEL_CONTAINS("repeated key \"backends\""));
  std::tie(ptr, problem) = text_error(catalog_text(R"({"name": "AAA", "domains": ["decoder"]},
      {"name": "AAA2", "name": "BBB", "domains": ["decoder"]})"));
  CHECK(ptr == "/backends/1/name");
  std::tie(ptr, problem) = text_error(catalog_text(backend_text("A", R"(, "platforms": [{"vendor": "cuda"},
      {"vendor": "rocm", "archs": ["gfx942"], "archs": ["gfx90a"]}])")));
  CHECK(ptr == "/backends/0/platforms/1/archs");
  // Keys repeated in different objects are fine.
  CHECK(text_error(catalog_text(backend_text("A") + "," + backend_text("B"))).first.empty());
  CHECK_THROWS_WITH(parse_json_document(R"({"head_size": 64, "head_size": 128})", "query.json"),
                    ATTNSEL_CONTAINS("query.json: /head_size: repeated key"));
  CHECK_THROWS_AS(parse_json_document(R"({"vendor": "cuda", "components": [{"name": "a", "name": "b"}]})"),
                  catalog_error);
}

TEST_CASE("a catalog path with a NUL byte is refused, not cut at the NUL (issue 22)", "[hardening]") {
  // "catalog/vllm@0.33.0.json\0.bak" would open catalog/vllm@0.33.0.json if the path were handed to the OS as is.
  const std::string path =
      std::string(ATTNSEL_SOURCE_DIR) + "/catalog/vllm@0.33.0.json" + std::string(1, '\0') + ".bak";
  CHECK_THROWS_WITH(read_catalog_file(path), ATTNSEL_CONTAINS("the path contains a NUL byte"));
  CHECK_THROWS_WITH(read_catalog_file(path), ATTNSEL_CONTAINS("vllm@0.33.0.json\\x00.bak"));
  registry reg;
  CHECK_THROWS_AS(merge_catalog_file(reg, path), catalog_error);
  CHECK(reg.size() == 0);
}

TEST_CASE("bad_query messages are escaped, bounded and valid UTF-8 in JSON (defect 8)", "[hardening]") {
  query q;
  // 65 bytes with an ESC inside: a 64-byte cut would land inside the two-byte "é" at the end.
  std::string name = std::string(10, 'a') + "\x1b" + std::string(52, 'a') + "\xc3\xa9";
  q.required = feature_set{name};
  const auto ex = explain(fixtures::small_registry(), q, platform::cuda(9, 0));
  REQUIRE(!ex.result.ok());
  CHECK(ex.result.error().code == error_code::bad_query);
  const auto& message = ex.result.error().message;
  CHECK(message.find('\x1b') == std::string::npos);
  CHECK(std::all_of(message.begin(), message.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; }));
  CHECK_NOTHROW(to_json(ex, q, platform::cuda(9, 0), {}).dump());
}

TEST_CASE("the registry refuses what the loader refuses, so every registry round-trips (defect 9)", "[hardening]") {
  const auto refused = [](auto edit) {
    backend_descriptor b;
    b.name = "X";
    edit(b);
    registry reg;
    CHECK_THROWS_AS(reg.add(b), registry_error);
    return reg.empty();
  };
  CHECK(refused([](backend_descriptor& b) { b.caps.head_sizes = head_size_spec::range(8, 70000); }));
  CHECK(refused([](backend_descriptor& b) { b.caps.head_sizes = head_size_spec::set({64, 70000}); }));
  CHECK(refused([](backend_descriptor& b) { b.caps.block_size_multiples = {limits::block_size + 1}; }));
  CHECK(refused([](backend_descriptor& b) { b.caps.preferred_block_size = limits::block_size + 1; }));
  CHECK(refused([](backend_descriptor& b) {
    b.caps.platforms = {fixtures::cuda_from(9, 0)}, b.caps.platforms[0].vendor = device_vendor::rocm;
  }));
  policy_rule r;
  r.max_num_heads = limits::num_heads + 1;
  r.order = {{"FAST", {}, {}, {}}};
  auto reg = fixtures::small_registry();
  CHECK_THROWS_WITH(reg.set_policy(priority_policy{{r}}), ATTNSEL_CONTAINS("num_heads"));
  // What the registry holds, the loader reads back unchanged.
  catalog c{{"rt", "", "", {}, {}}, fixtures::small_registry()};
  for (auto& b : const_cast<std::vector<backend_descriptor>&>(c.registry.backends())) b.extra_check = nullptr;
  CHECK(parse_catalog(to_json(c)) == c);
}

TEST_CASE("constraints that can never match are refused with pointers (defect 12)", "[hardening]") {
  const auto platform_error = [](const std::string& platforms) {
    return text_error(catalog_text(backend_text("A", R"(, "platforms": )" + platforms)));
  };
  CHECK(platform_error(R"([{"vendor": "rocm", "min_capability": "9.0"}])").first ==
        "/backends/0/platforms/0/min_capability");
  CHECK(platform_error(R"([{"vendor": "cuda", "archs": ["gfx942"]}])").first == "/backends/0/platforms/0/archs");
  CHECK(platform_error(R"([{"vendor": "cpu", "families": ["gfx9"]}])").first == "/backends/0/platforms/0/families");
  CHECK(platform_error(R"([{"vendor": "cuda", "min_capability": "sm_90"}])").first ==
        "/backends/0/platforms/0/min_capability");
  CHECK(platform_error(R"([{"vendor": "cuda", "min_capability": "9.0"}])").first.empty());
  const auto [ptr, problem] =
      text_error(catalog_text(backend_text("A"), R"([{"domain": "decoder", "vendor": "cuda", "order": ["a"]}])"));
  CHECK(ptr == "/policies/0/order/0");
  CHECK_THAT(problem, ATTNSEL_CONTAINS("UPPER_SNAKE"));
  CHECK(
      text_error(catalog_text(backend_text("A"),
                              R"([{"domain": "decoder", "vendor": "rocm", "max_capability": "9.0", "order": ["A"]}])"))
          .first == "/policies/0/max_capability");
  CHECK_THROWS_WITH(
      platform_from_json(json::parse(R"({"vendor": "rocm", "components": [{"name": "aiter", "colour": 1}]})")),
      ATTNSEL_CONTAINS("platform.components.0.colour: unknown key"));
}

TEST_CASE("component names with control characters are refused (defect 10)", "[hardening]") {
  const auto [ptr, problem] =
      text_error(catalog_text(backend_text("A", R"(, "requires": [{"component": "x\nattnsel: error: forged"}])")));
  CHECK(ptr == "/backends/0/requires/0/component");
  CHECK(text_error(
            catalog_text(
                backend_text("A"),
                R"([{"domain": "decoder", "vendor": "cuda", "order": [{"backend": "A", "when": ["a\u001b[31m"]}]}])"))
            .first == "/policies/0/order/0/when/0");
}

TEST_CASE("matrix Markdown escapes table syntax and names layered catalogs honestly (defect 10)", "[hardening]") {
  auto c = parse_catalog_text(
      catalog_text(backend_text("A", R"(, "requires": [{"component": "a|b"}], "variants": [{"name": "v|1"}])")));
  c.info.name = "vllm+overlay";
  const auto md = matrix_markdown(c);
  CHECK_THAT(md, ATTNSEL_CONTAINS("a\\|b"));
  CHECK_THAT(md, ATTNSEL_CONTAINS("v\\|1"));
  CHECK(md.find("catalog/vllm+overlay.json") == std::string::npos);
  CHECK_THAT(md, ATTNSEL_CONTAINS("from the catalog \"vllm+overlay\""));
}

TEST_CASE("error text is bounded however many backends were tried (defect 11)", "[hardening]") {
  registry reg;
  std::vector<backend_descriptor> list;
  for (int i = 0; i < 2000; ++i) {
    backend_descriptor b;
    b.name = "B" + std::to_string(i);
    b.caps.head_sizes = head_size_spec::set({64});
    list.push_back(b);
  }
  reg.add_or_replace_all(list);
  query q;
  q.head_size = 128;
  const auto r = select(reg, q, platform::cuda(9, 0));
  REQUIRE(!r);
  CHECK(r.error().candidates.size() == 2000);
  CHECK(r.error().message.size() < 4000);
  CHECK_THAT(r.error().message, ATTNSEL_CONTAINS("and 1984 more"));
  const auto bad = select(reg, q, platform::cuda(9, 0), override_request{"NOPE", override_source::flag});
  REQUIRE(!bad);
  CHECK(bad.error().message.size() < 2000);
}

TEST_CASE("prefer-mode explain names the rule its fallback used (defect 7)", "[hardening]") {
  const auto reg = fixtures::small_registry();
  query q;
  q.head_size = 100;  // FAST only takes 64/128/256
  select_options prefer;
  prefer.prefer = true;
  const auto ex = explain(reg, q, platform::cuda(9, 0), override_request{"FAST", override_source::flag}, prefer);
  REQUIRE(ex.result.ok());
  CHECK(ex.result->fell_back);
  CHECK(ex.rule == to_string(*reg.policy().match(q, platform::cuda(9, 0))));
}

TEST_CASE("text that is not JSON is reported as such, not as deep nesting (defect 13)", "[hardening]") {
  std::string blob;
  for (int i = 0; i < 4000; ++i) blob += static_cast<char>((i * 131 + 7) % 256);
  const auto [ptr, problem] = text_error(blob);
  CHECK_THAT(problem, ATTNSEL_CONTAINS("not JSON text"));
  CHECK_THAT(text_error(std::string(100, '[')).second, ATTNSEL_CONTAINS("nesting deeper"));
}

TEST_CASE("publish or update inside an update callback is an error, not a deadlock (defect 13)", "[hardening]") {
  shared_registry shared(fixtures::small_registry());
  CHECK_THROWS_AS(shared.update([&](registry&) { shared.publish(registry{}); }), std::logic_error);
  CHECK_THROWS_AS(shared.update([&](registry&) { shared.update([](registry&) {}); }), std::logic_error);
  CHECK(shared.version() == 0);
  shared.update([](registry&) {});
  CHECK(shared.version() == 1);
}
