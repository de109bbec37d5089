// SPDX-License-Identifier: Apache-2.0
// Catalog files: strict loading with pointer-precise errors, round trips, merging, hostile input.
#include "catch.hpp"
#include "fixtures.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace attnsel;
using nlohmann::json;

namespace {

json minimal() {
  return json::parse(R"({
    "format": "attnsel-catalog", "version": 1, "name": "mini",
    "backends": [
      {"name": "ALPHA", "domains": ["decoder"], "head_sizes": [64, 128], "platforms": [{"vendor": "cuda"}]},
      {"name": "BETA", "domains": ["decoder", "encoder"], "head_sizes": {"min": 32, "max": 256, "multiple_of": 8}}
    ],
    "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["ALPHA", {"backend": "BETA", "when": ["x"]}]}]
  })");
}

// Applies `edit` to the minimal catalog and returns the loader's error, or "" when it loads.
template <class Edit>
std::pair<std::string, std::string> load_error(Edit edit) {
  auto doc = minimal();
  edit(doc);
  try {
    (void)parse_catalog(doc, "test.json");
    return {"", ""};
  } catch (const catalog_error& e) {
    return {e.pointer(), e.problem()};
  }
}

// The header-only and compiled suites run at the same time under `ctest -j`: names carry the pid so
// one suite never reads or removes the other's file.
std::string temp_file(const std::string& name, const std::string& content) {
  const auto path =
      (std::filesystem::temp_directory_path() / ("attnsel_test_" + std::to_string(::getpid()) + "_" + name)).string();
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

}  // namespace

TEST_CASE("a minimal catalog loads into a working registry", "[catalog]") {
  const auto c = parse_catalog(minimal(), "mini.json");
  CHECK(c.info.name == "mini");
  CHECK(c.registry.size() == 2);
  query q;
  q.head_size = 64;
  CHECK(select(c.registry, q, platform::cuda(8, 0))->name() == "ALPHA");
}

TEST_CASE("every malformed field is reported at its JSON pointer with what was expected", "[catalog]") {
  struct row {
    const char* what;
    std::function<void(json&)> edit;
    const char* pointer;
    const char* problem_part;
  };
  const std::vector<row> rows = {
      {"not an object", [](json& d) { d = json::array(); }, "", "expected an object, got an array"},
      {"wrong format", [](json& d) { d["format"] = "other"; }, "/format", "expected \"attnsel-catalog\""},
      {"future version", [](json& d) { d["version"] = 3; }, "/version", "unsupported catalog version 3"},
      {"unknown top key", [](json& d) { d["extra"] = 1; }, "/extra", "unknown key \"extra\""},
      {"unknown backend key", [](json& d) { d["backends"][0]["head_size"] = 64; }, "/backends/0/head_size",
       "unknown key \"head_size\"; expected one of"},
      {"missing name", [](json& d) { d["backends"][1].erase("name"); }, "/backends/1", "missing required key \"name\""},
      {"lowercase name", [](json& d) { d["backends"][0]["name"] = "alpha"; }, "/backends/0/name", "UPPER_SNAKE"},
      {"duplicate name", [](json& d) { d["backends"][1]["name"] = "ALPHA"; }, "/backends/1/name",
       "duplicate backend name ALPHA"},
      {"alias clash", [](json& d) { d["backends"][1]["aliases"] = {"ALPHA"}; }, "/backends/1",
       "name ALPHA is used by both"},
      {"wrong type", [](json& d) { d["backends"][0]["dtypes"] = "float16"; }, "/backends/0/dtypes",
       "expected a non-empty array of dtype names or \"any\", got the string \"float16\""},
      {"unknown dtype",
       [](json& d) {
         d["backends"][0]["dtypes"] = {"float16", "float17"};
       },
       "/backends/0/dtypes/1", "expected one of float16, bfloat16, float32"},
      {"negative head size",
       [](json& d) {
         d["backends"][0]["head_sizes"] = {64, -3};
       },
       "/backends/0/head_sizes/1", "expected an integer in [1, 65536], got -3"},
      {"zero head size", [](json& d) { d["backends"][0]["head_sizes"] = {0}; }, "/backends/0/head_sizes/0", "got 0"},
      {"huge number", [](json& d) { d["backends"][0]["head_sizes"] = {9223372036854775808ULL}; },
       "/backends/0/head_sizes/0", "got 9223372036854775808"},
      {"float head size", [](json& d) { d["backends"][0]["head_sizes"] = {64.5}; }, "/backends/0/head_sizes/0",
       "got the number 64.5"},
      {"inverted range",
       [](json& d) {
         d["backends"][1]["head_sizes"] = {{"min", 256}, {"max", 32}};
       },
       "/backends/1/head_sizes/min", "min 256 > max 32"},
      {"empty list", [](json& d) { d["backends"][0]["head_sizes"] = json::array(); }, "/backends/0/head_sizes",
       "non-empty array"},
      {"bad capability", [](json& d) { d["backends"][0]["platforms"][0]["min_capability"] = "sm_"; },
       "/backends/0/platforms/0/min_capability", "compute capability"},
      {"inverted capability",
       [](json& d) {
         d["backends"][0]["platforms"][0]["min_capability"] = "9.0";
         d["backends"][0]["platforms"][0]["max_capability"] = "8.0";
       },
       "/backends/0/platforms/0/max_capability", "inverted"},
      {"bad gfx",
       [](json& d) {
         d["backends"][0]["platforms"] = {{{"vendor", "rocm"}, {"archs", {"gfx"}}}};
       },
       "/backends/0/platforms/0/archs/0", "gfx target"},
      {"bad version",
       [](json& d) {
         d["backends"][0]["requires"] = {{{"component", "fi"}, {"min_version", "1.x"}}};
       },
       "/backends/0/requires/0/min_version", "version"},
      {"bad feature", [](json& d) { d["backends"][0]["features"] = {"Sinks"}; }, "/backends/0/features/0",
       "lower_snake"},
      {"unknown policy backend", [](json& d) { d["policies"][0]["order"][0] = "GAMMA"; }, "/policies/0/order/0",
       "unknown backend \"GAMMA\"; known backends: ALPHA, BETA"},
      {"backend twice in order", [](json& d) { d["policies"][0]["order"][1] = "ALPHA"; }, "/policies", "twice"},
      {"empty order", [](json& d) { d["policies"][0]["order"] = json::array(); }, "/policies/0/order", "non-empty"},
      {"unknown rule key", [](json& d) { d["policies"][0]["priority"] = 1; }, "/policies/0/priority", "unknown key"},
      {"variant domain outside backend",
       [](json& d) {
         d["backends"][0]["variants"] = {{{"name", "V"}, {"domains", {"encoder"}}}};
       },
       "/backends/0/variants/0/domains", "a domain its backend does not"},
      {"duplicate variant",
       [](json& d) {
         d["backends"][0]["variants"] = {{{"name", "V"}}, {{"name", "V"}}};
       },
       "/backends/0/variants/1/name", "duplicate variant"},
      {"key with slash", [](json& d) { d["backends"][0]["a/b~c"] = 1; }, "/backends/0/a~1b~0c", "unknown key"},
  };
  for (const auto& r : rows) {
    INFO(r.what);
    const auto [pointer, problem] = load_error(r.edit);
    CHECK(pointer == r.pointer);
    CHECK_THAT(problem, ATTNSEL_CONTAINS(r.problem_part));
  }
}

TEST_CASE("the error text names the file, the pointer and the problem", "[catalog]") {
  auto doc = minimal();
  doc["backends"][1]["head_sizes"]["min"] = -3;
  try {
    (void)parse_catalog(doc, "engine.json");
    FAIL("expected catalog_error");
  } catch (const catalog_error& e) {
    CHECK(std::string(e.what()) ==
          "engine.json: /backends/1/head_sizes/min: expected an integer in [1, 65536], got -3");
  }
}

TEST_CASE("load, dump, load gives an equal catalog", "[catalog]") {
  for (auto name : builtin_catalog_names) {
    INFO(name);
    const auto first = builtin_catalog(name);
    const auto dumped = to_json(first);
    const auto second = parse_catalog(dumped, "dump");
    CHECK(second == first);
    CHECK(to_json(second) == dumped);
  }
  const auto mini = parse_catalog(minimal());
  CHECK(parse_catalog(to_json(mini)) == mini);
}

TEST_CASE("hostile catalog text ends in one clear error", "[catalog][hostile]") {
  struct row {
    const char* what;
    std::string text;
    const char* problem_part;
  };
  std::string deep(200000, '[');
  std::string blob(3 << 20, '\0');
  for (std::size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>((i * 7919) & 0xff);
  const std::vector<row> rows = {
      {"empty", "", "malformed JSON"},
      {"truncated", minimal().dump().substr(0, 40), "malformed JSON"},
      {"deep nesting", deep, "nesting deeper than 32 levels"},
      {"binary blob", blob, "malformed JSON"},
      {"invalid utf-8", "{\"format\": \"attnsel-catalog\xff\"}", "malformed JSON"},
      {"not an object", "[1, 2, 3]", "expected an object"},
      {"number overflow (found by fuzz_catalog)", "1e999", "malformed JSON: number overflow"},
      {"number overflow inside a catalog", R"({"format": "attnsel-catalog", "version": 1e400})",
       "malformed JSON: number overflow"},
      {"too large", std::string(17u << 20, ' '), "the limit is"},
  };
  for (const auto& r : rows) {
    INFO(r.what);
    try {
      (void)parse_catalog_text(r.text, "hostile.json");
      FAIL("expected catalog_error");
    } catch (const catalog_error& e) {
      CHECK(e.origin() == "hostile.json");
      CHECK_THAT(e.problem(), ATTNSEL_CONTAINS(r.problem_part));
    }
  }
}

TEST_CASE("missing files and directories are catalog errors", "[catalog][hostile]") {
  CHECK_THROWS_WITH(read_catalog_file("/nonexistent/attnsel.json"), ATTNSEL_CONTAINS("no such file"));
  CHECK_THROWS_WITH(read_catalog_file(std::filesystem::temp_directory_path().string()),
                    ATTNSEL_CONTAINS("is a directory"));
  const auto path = temp_file("good.json", minimal().dump());
  CHECK(read_catalog_file(path).registry.size() == 2);
  std::remove(path.c_str());
}

TEST_CASE("merging a catalog file layers it on the registry, or changes nothing", "[catalog]") {
  auto reg = reference_registry();
  const auto before = reg;
  const auto overlay = temp_file("overlay.json", R"({
    "format": "attnsel-catalog", "version": 1, "name": "engine",
    "backends": [{"name": "MY_KERNEL", "domains": ["decoder"], "head_sizes": [72],
                  "platforms": [{"vendor": "cuda", "min_capability": "9.0"}]}],
    "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["MY_KERNEL", "FLASH_ATTN"]}]
  })");
  merge_catalog_file(reg, overlay);
  query q;
  q.head_size = 72;
  CHECK(select(reg, q, platform::cuda(9, 0))->name() == "MY_KERNEL");
  q.head_size = 128;
  CHECK(select(reg, q, platform::cuda(9, 0))->name() == "FLASH_ATTN");
  CHECK(reg.size() == before.size() + 1);

  auto untouched = before;
  const auto broken = temp_file("broken.json", R"({"format": "attnsel-catalog", "version": 1, "name": "x",
    "backends": [], "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["NOPE"]}]})");
  CHECK_THROWS_AS(merge_catalog_file(untouched, broken), catalog_error);
  CHECK(untouched == before);
  std::remove(overlay.c_str());
  std::remove(broken.c_str());
}

TEST_CASE("a stock install is read, written back, and added only where the platform lacks it", "[catalog][stock]") {
  auto doc = minimal();
  doc["version"] = 2;
  doc["stock"] = json::parse(R"({"cuda": {"components": ["flashinfer=0.7.2", "cuda_runtime=13.0"],
                                          "because": "pip install engine brings them"}})");
  const auto c = parse_catalog(doc, "stock.json");
  REQUIRE(c.info.stock.size() == 1);
  const auto& s = c.info.stock[0];
  CHECK(s.vendor == device_vendor::cuda);
  REQUIRE(s.components.size() == 2);
  CHECK(to_string(s.components[0]) == "cuda_runtime=13.0");  // sorted by name, as a platform keeps them
  CHECK(s.because == "pip install engine brings them");
  CHECK(parse_catalog(to_json(c), "again.json") == c);
  CHECK(to_json(c).at("version") == 2);

  // Added where missing; a component the platform has keeps its own version; another vendor gets nothing.
  auto h100 = platform::cuda(9, 0);
  h100.add_component_spec("cuda_runtime=12.8");
  const auto stocked = with_stock(c.info, h100);
  CHECK(stocked.platform.find_component("cuda_runtime")->version == parse_component_version("12.8"));
  CHECK(stocked.platform.has_component("flashinfer"));
  REQUIRE(stocked.added.size() == 1);
  CHECK(to_string(stocked.added[0]) == "flashinfer=0.7.2");
  CHECK(stocked.because == "pip install engine brings them");
  const auto rocm = with_stock(c.info, platform::rocm("gfx942"));
  CHECK(rocm.added.empty());
  CHECK(rocm.because.empty());
  CHECK(rocm.platform == platform::rocm("gfx942"));

  // Each mistake at its pointer.
  const auto error = [](const char* stock, int version = 2) {
    return load_error([&](json& d) {
      d["version"] = version;
      d["stock"] = json::parse(stock);
    });
  };
  CHECK(error(R"({"cuda": {"components": ["flashinfer"], "because": "x"}})", 1) ==
        std::pair<std::string, std::string>{"/stock", "this key needs catalog version 2; the document says version 1"});
  CHECK(error(R"({"gpu": {"components": ["flashinfer"], "because": "x"}})").first == "/stock/gpu");
  CHECK(error(R"({"cuda": {"components": ["flashinfer"]}})").second.find("because") != std::string::npos);
  CHECK(error(R"({"cuda": {"components": [], "because": "x"}})").first == "/stock/cuda/components");
  CHECK(error(R"({"cuda": {"components": ["Flash Infer"], "because": "x"}})").first == "/stock/cuda/components/0");
  CHECK(error(R"({"cuda": {"components": ["flashinfer", "flashinfer=1.0"], "because": "x"}})") ==
        std::pair<std::string, std::string>{"/stock/cuda/components", "names a component twice"});
  CHECK(error(R"({"cuda": {"components": ["flashinfer"], "because": "x", "extra": 1}})").first == "/stock/cuda/extra");

  // The engine catalogs state their PyPI wheels' requirements; the main-branch ones state none.
  const auto vllm = builtin_catalog("vllm");
  REQUIRE(vllm.info.stock.size() == 2);
  CHECK(with_stock(vllm.info, platform::cuda(10, 0)).platform.has_component("flashinfer"));
  // On ROCm, vLLM's image: AITER installed (not switched on) and flash-attention.
  const auto mi300 = with_stock(vllm.info, platform::rocm("gfx942")).platform;
  CHECK(mi300.has_component("aiter"));
  CHECK(mi300.has_component("flash_attn"));
  CHECK(!mi300.has_component("aiter_enabled"));
  CHECK(builtin_catalog("vllm@main-2026-12").info.stock.empty());
}
