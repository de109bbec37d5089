// SPDX-License-Identifier: Apache-2.0
// Tests of `attnsel diff`, `attnsel lint`, `list --catalogs` and `--catalog-name` through the built tool.
#include "catch.hpp"
#include "cli_run.hpp"

#include <nlohmann/json.hpp>

#include <string>

using cli_run::run;

namespace {

std::string lint_file(const std::string& name) { return std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/lint/" + name; }

}  // namespace

TEST_CASE("attnsel diff exits 1 with the ROCm refactor's changes and 0 for identical catalogs", "[cli][diff]") {
  const auto changed = run({"diff", "vllm-rocm-env@e2a00c7b", "vllm", "--domain", "decoder"});
  CHECK(changed.status == 1);
  CHECK(changed.err.empty());
  CHECK(changed.out.find("attnsel diff vllm-rocm-env@e2a00c7b -> vllm") == 0);
  CHECK(changed.out.find("space: ") != std::string::npos);
  CHECK(changed.out.find("rocm gfx942, decoder") != std::string::npos);
  CHECK(changed.out.find("TRITON_ATTN -> ROCM_ATTN") != std::string::npos);
  CHECK(changed.out.find("cuda 0/") != std::string::npos);

  const auto same = run({"diff", "torch_sdpa", "torch_sdpa"});
  CHECK(same.status == 0);
  CHECK(same.out.find("no decision differs") != std::string::npos);
}

TEST_CASE("attnsel diff --json reports counts tools can read", "[cli][diff]") {
  const auto r = run({"diff", "vllm@0013943", "vllm", "--domain", "encoder", "--json"});
  REQUIRE(r.status == 1);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("a") == "vllm@0013943");
  CHECK(j.at("b") == "vllm");
  CHECK(j.at("changed").get<std::size_t>() > 0);
  std::size_t total = 0;
  for (const auto& g : j.at("groups")) total += g.at("count").get<std::size_t>();
  CHECK(total == j.at("changed").get<std::size_t>());
  // gfx90a lost the AITER ViT path (AITER needs CDNA3+).
  bool gfx90a = false;
  for (const auto& g : j.at("groups"))
    if (g.at("platform") == "rocm gfx90a") gfx90a = true;
  CHECK(gfx90a);
}

TEST_CASE("attnsel diff usage errors exit 2", "[cli][diff]") {
  CHECK(run({"diff", "vllm"}).status == 2);
  const auto missing = run({"diff", "vllm", "/nonexistent/catalog.json"});
  CHECK(missing.status == 2);
  CHECK(missing.err.find("/nonexistent/catalog.json") != std::string::npos);
  CHECK(run({"diff", "vllm", "vllm", "--domain", "nowhere"}).status == 2);
}

TEST_CASE("attnsel lint exits 0 on built-ins, 1 with pointed findings, 2 on unreadable input", "[cli][lint]") {
  const auto clean = run({"lint", "vllm"});
  CHECK(clean.status == 0);
  CHECK(clean.out == "vllm: clean\n");

  const auto dirty = run({"lint", lint_file("unknown_component.json")});
  CHECK(dirty.status == 1);
  CHECK(dirty.out.find(": /policies/0/order/0/when/0: unknown_component: component 'aiter_mah'") != std::string::npos);
  CHECK(dirty.out.find("1 finding\n") != std::string::npos);

  const auto json = run({"lint", lint_file("shadowed_rule.json"), "--json"});
  CHECK(json.status == 1);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j.size() == 1);
  CHECK(j[0].at("code") == "shadowed_rule");
  CHECK(j[0].at("pointer") == "/policies/1");

  CHECK(run({"lint", lint_file("unknown_component.json"), "--component", "aiter_mah"}).status == 0);
  CHECK(run({"lint", "/nonexistent/catalog.json"}).status == 2);
}

TEST_CASE("list --catalogs names every built-in catalog with its source commits", "[cli][catalogs]") {
  const auto r = run({"list", "--catalogs"});
  CHECK(r.status == 0);
  for (const char* name : {"vllm ", "vllm@0013943", "vllm-rocm-env@e2a00c7b", "torch_sdpa", "sglang"})
    CHECK(r.out.find(name) != std::string::npos);
  CHECK(r.out.find("vllm-project/vllm@e2a00c7b342a") != std::string::npos);
  CHECK(r.out.find("sgl-project/sglang@001067fffe33") != std::string::npos);
  const auto j = nlohmann::json::parse(run({"list", "--catalogs", "--json"}).out);
  REQUIRE(j.size() == 5);
  CHECK(j[0].at("name") == "vllm");
  CHECK_FALSE(j[0].at("commits").empty());
}

TEST_CASE("--catalog-name picks a built-in catalog and refuses unknown names", "[cli][catalogs]") {
  // gfx90a with AITER: the pre-refactor order falls to Triton (AITER FA is MI3xx-only), the newest starts at ROCM_ATTN.
  const std::vector<std::string> query = {
      "select", "--platform", "rocm", "--arch", "gfx90a", "--component", "aiter,aiter_enabled,aiter_mha"};
  auto legacy = query;
  legacy.insert(legacy.end(), {"--catalog-name", "vllm-rocm-env@e2a00c7b"});
  CHECK(run(legacy).out == "TRITON_ATTN\n");
  CHECK(run(query).out == "ROCM_ATTN\n");
  auto unknown = query;
  unknown.insert(unknown.end(), {"--catalog-name", "vllm@nope"});
  const auto r = run(unknown);
  CHECK(r.status == 2);
  CHECK(r.err.find("--catalog-name: 'vllm@nope' is not one of vllm, vllm@0013943") != std::string::npos);
}

TEST_CASE("diff and lint help has examples and fits 100 columns", "[cli][help]") {
  for (const char* command : {"diff", "lint"}) {
    const auto r = run({command, "--help"});
    CHECK(r.status == 0);
    CHECK(r.out.find("Examples:") != std::string::npos);
    CHECK(r.out.find("Exit status: 0") != std::string::npos);
    std::size_t start = 0;
    while (start < r.out.size()) {
      const auto end = r.out.find('\n', start);
      const auto line = r.out.substr(start, end == std::string::npos ? std::string::npos : end - start);
      INFO(line);
      CHECK(line.size() <= 100);
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  const auto top = run({"--help"});
  for (const char* word : {"diff", "lint"}) CHECK(top.out.find(word) != std::string::npos);
}
