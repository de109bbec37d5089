// SPDX-License-Identifier: Apache-2.0
// Tests of `attnsel diff`, `attnsel lint`, `list --catalogs` and `--catalog-name` through the built tool.
#include "catch.hpp"
#include "cli_run.hpp"
#include "wide_catalog.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

using cli_run::run;

namespace {

std::string lint_file(const std::string& name) { return std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/lint/" + name; }

}  // namespace

TEST_CASE("attnsel diff exits 1 with the ROCm refactor's changes and 0 for identical catalogs", "[cli][diff]") {
  const auto changed = run({"diff", "vllm-rocm-env@e2a00c7b", "vllm@main-2026-12", "--domain", "decoder"});
  CHECK(changed.status == 1);
  CHECK(changed.err.empty());
  CHECK(changed.out.find("attnsel diff vllm-rocm-env@e2a00c7b -> vllm@main-2026-12\n") == 0);
  CHECK(changed.out.find("space: ") != std::string::npos);
  CHECK(changed.out.find("rocm gfx942, decoder") != std::string::npos);
  CHECK(changed.out.find("TRITON_ATTN -> ROCM_ATTN") != std::string::npos);
  CHECK(changed.out.find("cuda 0/") != std::string::npos);

  const auto same = run({"diff", "torch_sdpa", "torch_sdpa"});
  CHECK(same.status == 0);
  CHECK(same.out.find("no decision differs") != std::string::npos);
}

TEST_CASE("attnsel diff --json reports counts tools can read", "[cli][diff]") {
  // Automatic choice only: the forced space (every backend forced at every configuration) adds nothing
  // to what this test reads and takes minutes under the sanitizers.
  const auto r = run({"diff", "vllm@0013943", "vllm", "--domain", "encoder", "--json", "--no-overrides"});
  REQUIRE(r.status == 1);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("a") == "vllm@0013943");
  CHECK(j.at("b") == "vllm@0.33.0");  // an alias diffs as the catalog it stands for
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
  for (const char* name :
       {"vllm ", "vllm@0.33.0", "vllm@main-2026-12", "vllm@00159db", "vllm@0013943", "vllm-rocm-env@e2a00c7b",
        "torch_sdpa", "torch_sdpa@2.14.0", "sglang ", "sglang@0.5.23", "sglang@main-2026-12"})
    CHECK(r.out.find(name) != std::string::npos);
  CHECK(r.out.find("vllm  alias of vllm@0.33.0") != std::string::npos);
  CHECK(r.out.find("vllm-project/vllm@e2a00c7b342a") != std::string::npos);
  CHECK(r.out.find("sgl-project/sglang@001067fffe33") != std::string::npos);
  const auto j = nlohmann::json::parse(run({"list", "--catalogs", "--json"}).out);
  REQUIRE(j.size() == 11);
  CHECK(j[0].at("name") == "vllm");
  CHECK(j[0].at("alias_of") == "vllm@0.33.0");
  CHECK(j[1].at("name") == "vllm@0.33.0");
  CHECK_FALSE(j[1].at("commits").empty());
  // A stock install the catalog states: the same object as in the catalog file, and a line of text.
  CHECK(j[1].at("stock").at("cuda").at("components") == nlohmann::json{"cuda_runtime=13.0", "flashinfer=0.7.2"});
  CHECK(r.out.find("  stock on cuda: cuda_runtime=13.0, flashinfer=0.7.2\n") != std::string::npos);
  CHECK(j[2].at("name") == "vllm@main-2026-12");
  CHECK(j[2].at("stock") == nlohmann::json::object());
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
  CHECK(r.err.find("--catalog-name: 'vllm@nope' is not one of vllm, vllm@0.33.0, vllm@main-2026-12, vllm@00159db") !=
        std::string::npos);
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

// ---- Issue 22: hardening round three, through the tool ----

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A temporary file removed at scope end.
class temp_file {
 public:
  explicit temp_file(const std::string& text, const std::string& suffix = ".json") {
    static int counter = 0;
    path_ = "/tmp/attnsel_cli22_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + suffix;
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~temp_file() { std::remove(path_.c_str()); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

TEST_CASE("every integer option is decimal only: no octal, hex or signs (issue 22)", "[cli][usage]") {
  const std::vector<std::vector<std::string>> options = {{"select", "--head-size"},  {"select", "--head-size-v"},
                                                         {"select", "--block-size"}, {"select", "--num-heads"},
                                                         {"explain", "--head-size"}, {"doctor", "--device"}};
  for (const auto& o : options) {
    for (const std::string bad : {"0x40", "+5", "1e2", "64.0", "0b1", "6 4", "１"}) {
      INFO(o[0] << " " << o[1] << " " << bad);
      auto args = o;
      args.push_back(bad);
      if (o[0] != "doctor") args.insert(args.end(), {"--platform", "cuda", "--arch", "9.0"});
      const auto r = run(args);
      CHECK(r.status == 2);
      CHECK(has(r.err, "is not a decimal integer in"));
      CHECK(r.out.empty());
    }
  }
  // Leading zeros are decimal: 0100 is 100, never 64.
  const auto r = run({"select", "--platform", "cuda", "--arch", "9.0", "--head-size", "0100", "--json"});
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j.at("query").at("head_size") == 100);
  const auto over = run({"select", "--head-size", "00000000000000000000065537"});
  CHECK(over.status == 2);
  CHECK(has(over.err, "is outside 1..65536"));
}

// AddressSanitizer's operator new never throws: out of memory, it reports and aborts the process, so the
// tool's own handler cannot run there. The uninstrumented legs (dev) run this test.
#if defined(__SANITIZE_ADDRESS__)
#  define ATTNSEL_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define ATTNSEL_TEST_UNDER_ASAN 1
#  endif
#endif

#ifndef ATTNSEL_TEST_UNDER_ASAN
TEST_CASE("an internal error has its own exit status, never diff's or lint's 1 (issue 22)", "[cli][robustness]") {
  // A catalog the loader accepts but whose parse needs far more memory than the limit allows.
  std::string backends;
  for (int k = 0; k < 60000; ++k)
    backends += (k ? "," : "") + std::string(R"({"name": "B)") + std::to_string(k) +
                R"(", "domains": ["decoder"], "description": ")" + std::string(100, 'x') + "\"}";
  const temp_file big(R"({"format": "attnsel-catalog", "version": 1, "name": "big", "backends": [)" + backends +
                      R"(], "policies": []})");
  const std::vector<std::vector<std::string>> calls = {
      {"lint", big.path()}, {"validate", big.path()}, {"diff", big.path(), big.path()}};
  for (const auto& args : calls) {
    const auto& command = args.front();
    const auto r = cli_run::run_in("sh -c 'ulimit -v 90000; exec \"$0\" \"$@\"'", args);
    INFO(command << ": " << r.err);
    CHECK(r.status == 70);
    CHECK(has(r.err, "attnsel: internal error: out of memory"));
  }
}
#endif

TEST_CASE("diff's text report escapes catalog text (issue 22)", "[cli][diff]") {
  const auto catalog = [](const std::string& name, const std::string& first) {
    return R"({"format": "attnsel-catalog", "version": 1, "name": ")" + name +
           R"(", "backends": [{"name": "A", "domains": ["decoder"]}, {"name": "B", "domains": ["decoder"]}],
           "policies": [{"domain": "decoder", "vendor": "cuda", "order": [")" +
           first + R"("]}]})";
  };
  const temp_file a(catalog("before\\u001b[31m\\u0000cut", "A"));
  const temp_file b(catalog("after\\nforged line", "B"));
  const auto r = run({"diff", a.path(), b.path(), "--no-overrides"});
  CHECK(r.status == 1);
  CHECK(r.out.find('\x1b') == std::string::npos);
  CHECK(r.out.find('\0') == std::string::npos);
  CHECK(has(r.out, "attnsel diff before\\x1b[31m\\x00cut -> after\\x0aforged line\n"));
  CHECK(has(r.out, "A -> B"));  // the report goes on past the NUL
}

TEST_CASE("list --json and matrix --format json print a JSON error object when the catalog fails (issue 22)",
          "[cli][catalog]") {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"list", "--json", "--catalog-only", "/nonexistent/x.json"},
                                             {"matrix", "--format", "json", "--catalog-only", "/nonexistent/x.json"},
                                             {"list", "--json", "--catalog", "vlm"}}) {
    const auto r = run(args);
    INFO(args[0] << " " << r.out);
    CHECK(r.status == 1);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j.at("error").at("code") == "catalog");
    CHECK(!j.at("error").at("message").get<std::string>().empty());
  }
}

TEST_CASE("an unknown catalog name is named as such, with the built-in names (issue 22)", "[cli][catalog]") {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"list", "--catalog", "vlm"}, {"lint", "vlm"}, {"diff", "vlm", "vllm"}}) {
    const auto r = run(args);
    INFO(r.err);
    CHECK(r.status == (args[0] == "list" ? 1 : 2));
    CHECK(has(r.err, "unknown catalog name 'vlm'; did you mean 'vllm'? Built-in catalogs: "));
    CHECK(has(r.err, "vllm"));
    CHECK_FALSE(has(r.err, "no such file"));
  }
  // A path is still a path.
  CHECK(has(run({"lint", "./vlm"}).err, "no such file"));
  CHECK(has(run({"lint", "vlm.json"}).err, "no such file"));
}

TEST_CASE("an empty --arch or --library-dir is a usage error, not ignored (issue 22)", "[cli][usage]") {
  for (const auto& args : std::vector<std::vector<std::string>>{{"select", "--arch", ""},
                                                                {"select", "--platform", "cuda", "--arch", ""},
                                                                {"explain", "--arch", ""},
                                                                {"doctor", "--library-dir", ""},
                                                                {"select", "--library-dir", ""}}) {
    const auto r = run(args);
    CHECK(r.status == 2);
    CHECK(has(r.err, "attnsel: usage error:"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("an arch-specific CUDA target is refused with the capability to give, as in Python (issue 23)",
          "[cli][usage]") {
  for (const std::string arch : {"sm_100a", "SM_121F", "compute_90a"}) {
    for (const auto& platform : std::vector<std::vector<std::string>>{{}, {"--platform", "cuda"}}) {
      std::vector<std::string> args = {"select", "--arch", arch};
      args.insert(args.end(), platform.begin(), platform.end());
      const auto r = run(args);
      INFO(arch << ": " << r.err);
      CHECK(r.status == 2);
      CHECK(has(r.err, "--arch: '" + arch + "' names an arch-specific target"));
      CHECK(r.out.empty());
    }
  }
  CHECK(has(run({"select", "--arch", "sm_100a"}).err, "without the suffix ('10.0')"));
  CHECK(run({"select", "--arch", "sm_100"}).status == 0);  // no suffix: capability 10.0
}

TEST_CASE("a line break in a path is escaped in messages (issue 22)", "[cli][catalog]") {
  for (const auto& args : std::vector<std::vector<std::string>>{{"validate", "/tmp/no\nsuch.json"},
                                                                {"list", "--catalog-only", "/tmp/no\nsuch.json"},
                                                                {"lint", "/tmp/no\nsuch.json"}}) {
    const auto r = run(args);
    INFO(r.err);
    CHECK(r.status != 0);
    CHECK(has(r.err, "/tmp/no\\x0asuch.json"));
    CHECK(r.err.find('\n') == r.err.size() - 1);  // one line
  }
}

// The diff over torch_sdpa's CUDA decoder space (every cuDNN version its call rules bound, every head size
// they name: 7 M configurations) takes 36 s uninstrumented and 8 minutes under AddressSanitizer; the
// uninstrumented legs (dev) run it, and the ASan leg runs the same diff code on smaller spaces above.
#ifndef ATTNSEL_TEST_UNDER_ASAN
TEST_CASE("attnsel diff --on layers two tuned overlays and shows what changed on the measured machine", "[cli][diff]") {
  // One class as attnsel.tune writes it (llama3-8b prefill 128 on the H200 with cuDNN preferred, flash
  // confirmed ahead of cuDNN), and the same class with the two backends swapped: the diff's space gains
  // the measured machine, switches included, where the class changed.
  auto doc = nlohmann::json::parse(R"({"format": "attnsel-catalog", "version": 2, "name": "measured", "backends": [],
    "policies": [{"domain": "decoder", "vendor": "cuda", "min_capability": "9.0", "max_capability": "9.0",
      "dtypes": ["bfloat16"], "head_sizes": [128], "min_num_heads": 32, "max_num_heads": 32, "features": ["gqa"],
      "without_features": ["dropout", "attn_mask", "attn_mask_3d", "attn_mask_grad", "requires_grad",
                           "deterministic", "nested"],
      "seq_len_q": {"min": 2, "max": 256}, "gqa_group": {"min": 4, "max": 4},
      "order": ["FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION", "MATH"],
      "measured": {"device": "NVIDIA H200", "components": ["torch=2.11.0", "cudnn=9.19.0"],
                   "present": ["cudnn_preferred"],
                   "times": [{"backend": "FLASH_ATTENTION", "median_us": 90.0, "spread_pct": 2.0},
                             {"backend": "CUDNN_ATTENTION", "median_us": 120.0, "spread_pct": 2.5}]}}]})");
  const std::string stem = "/tmp/attnsel_cli_diff_" + std::to_string(::getpid());
  std::ofstream(stem + "_a.json") << doc.dump();
  auto& order = doc["policies"][0]["order"];
  REQUIRE(order.size() >= 2);
  std::swap(order[0], order[1]);
  // The loader refuses an order its own times contradict: the swapped overlay measured them swapped too.
  auto& times = doc["policies"][0]["measured"]["times"];
  REQUIRE(times.size() >= 2);
  std::swap(times[0]["median_us"], times[1]["median_us"]);
  std::ofstream(stem + "_b.json") << doc.dump();
  const auto r = run({"diff", "--on", "torch_sdpa", stem + "_a.json", stem + "_b.json", "--no-overrides"});
  const auto same = run({"diff", "--on", "torch_sdpa", stem + "_a.json", stem + "_a.json", "--no-overrides"});
  const auto unknown = run({"diff", "--on", "nope", stem + "_a.json", stem + "_a.json"});
  std::remove((stem + "_a.json").c_str());
  std::remove((stem + "_b.json").c_str());
  CHECK(r.status == 1);
  CHECK(r.err.empty());
  CHECK(r.out.find("attnsel diff torch_sdpa+attnsel_cli_diff_") == 0);
  CHECK(r.out.find("on NVIDIA H200, decoder") != std::string::npos);
  CHECK(r.out.find(order[1].get<std::string>() + " -> " + order[0].get<std::string>()) != std::string::npos);
  CHECK(same.status == 0);
  CHECK(unknown.status == 2);
  CHECK(unknown.err.find("--on") != std::string::npos);
}
#endif

#ifndef ATTNSEL_TEST_UNDER_ASAN
TEST_CASE("attnsel diff refuses a huge space within 64 MiB, naming the axis sizes (issue 35)", "[cli][diff]") {
  // 100 rules with their own length, batch and GQA-group ranges: 1.7e9 calls. Before, the calls axis
  // was built before the size check (a 15 KB catalog: 17 s and 2.6 GB before the refusal).
  const std::string policies = fixtures::wide_call_policies(100);
  const temp_file wide(R"({"format": "attnsel-catalog", "version": 2, "name": "wide", "backends": [{"name": "A",
      "domains": ["decoder"]}], "policies": [)" +
                       policies + "]}");
  // 64 MiB of address space for the whole tool (the shell execs it, so the limit is the tool's own).
  const auto r = cli_run::run_in("sh -c 'ulimit -v 65536; exec \"$0\" \"$@\"'", {"diff", wide.path(), wide.path()});
  INFO(r.err);
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(has(r.err, "more than 50,000,000 configurations"));
  CHECK(has(r.err, "x calls "));
  // The tool cuts a long message; the calls axis's size and its first factors come before the cut.
  CHECK(has(r.err, "x calls 1,664,966,416 (phases 1 x seq_len_q 202 x seq_len_kv 202"));
}
#endif
