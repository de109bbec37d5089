// SPDX-License-Identifier: Apache-2.0
// Tests of the attnsel command-line tool: runs the built executable, checks stdout, stderr and status.
#include "catch.hpp"
#include "cli_run.hpp"

#include <attnsel/all.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

using run_result = cli_run::result;
using cli_run::shell_quote;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Runs the tool with `args` (cli_run::run_clean: the override variables unset, then `env` set).
run_result run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  return cli_run::run_clean(args, env);
}

using cli_run::squash;

// Whitespace-separated fields of a table row.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> out;
  std::istringstream in(line);
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

nlohmann::json parse_json(const std::string& text) {
  INFO(text);
  REQUIRE(nlohmann::json::accept(text));
  return nlohmann::json::parse(text);
}

const nlohmann::json& candidate(const nlohmann::json& report, const std::string& name) {
  for (const auto& c : report.at("candidates"))
    if (c.at("name") == name) return c;
  FAIL("no candidate " << name << " in " << report.dump());
  throw std::logic_error("unreachable");
}

bool has_reason(const nlohmann::json& c, const std::string& code) {
  for (const auto& r : c.at("reasons"))
    if (r.at("code") == code) return true;
  return false;
}

/// A temporary file removed at scope exit.
struct temp_file {
  std::string path;
  explicit temp_file(const std::string& text) {
    char name[] = "/tmp/attnsel_cli_catalog_XXXXXX";
    const int fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    ::close(fd);
    path = name;
    std::ofstream(path, std::ios::binary) << text;
  }
  ~temp_file() { std::remove(path.c_str()); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
};

const std::string vllm_catalog = std::string(ATTNSEL_SOURCE_DIR) + "/catalog/vllm@0.33.0.json";

// A backend the reference catalog lacks, put first for ROCm decoders; it names ROCM_ATTN, so it only
// loads layered on the vllm catalog.
const char* overlay_json = R"({
  "format": "attnsel-catalog", "version": 1, "name": "overlay",
  "backends": [{"name": "MY_ATTN", "domains": ["decoder"], "features": ["sinks", "my_feature"],
                "platforms": [{"vendor": "rocm"}]}],
  "policies": [{"domain": "decoder", "vendor": "rocm", "note": "my engine prefers its own kernel",
                "order": ["MY_ATTN", "ROCM_ATTN"]}]
})";

std::vector<std::string> cat(std::vector<std::string> a, std::initializer_list<std::string> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<std::string> joined(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("select prints the chosen backend alone on stdout", "[cli][select]") {
  const auto r = run(cat({"select"}, {"--platform", "rocm", "--arch", "gfx942", "--no-stock"}));
  CHECK(r.status == 0);
  CHECK(r.out == "ROCM_ATTN\n");
  CHECK(r.err.empty());
}

TEST_CASE("select serves the encoder domain with a forced backend", "[cli][select][encoder]") {
  const auto r =
      run(cat({"select"}, {"--platform", "rocm", "--arch", "gfx942", "--no-stock", "--component", "aiter_mha",
                           "--component", "flash_attn", "--domain", "encoder", "--backend", "TORCH_SDPA"}));
  CHECK(r.status == 0);
  CHECK(r.out == "TORCH_SDPA\n");
  const auto automatic = run(cat({"select"}, {"--platform", "rocm", "--arch", "gfx942", "--no-stock", "--component",
                                              "aiter_mha", "--component", "flash_attn", "--domain", "encoder"}));
  CHECK(automatic.status == 0);
  // aiter_mha implies aiter_enabled (vllm catalog implications): the ViT path takes AITER FA, as vLLM does.
  CHECK(automatic.out == "ROCM_AITER_FA\n");
}

TEST_CASE("select accepts every arch spelling and infers the vendor from --arch", "[cli][select][platform]") {
  for (const std::string arch : {"9.0", "sm_90", "sm90"}) {
    const auto r = run({"select", "--json", "--platform", "cuda", "--arch", arch});
    CHECK(r.status == 0);
    CHECK(parse_json(r.out).at("platform").at("arch") == "9.0");
  }
  const auto gfx = run({"select", "--json", "--arch", "gfx942", "--no-stock"});
  const auto j = parse_json(gfx.out);
  CHECK(j.at("platform").at("vendor") == "rocm");
  CHECK(j.at("backend") == "ROCM_ATTN");
  const auto components =
      parse_json(run({"select", "--json", "--platform", "cuda", "--component", "flashinfer=0.2.5,flash_attn"}).out);
  // With vLLM's stock install's cuda_runtime (flashinfer given keeps its version), sorted by name.
  CHECK(components.at("platform").at("components").size() == 3);
  CHECK(components.at("platform").at("components").at(0).at("name") == "cuda_runtime");
  CHECK(components.at("platform").at("components").at(2).at("version") == "0.2.5");
}

TEST_CASE("without --platform the tool detects the machine's vendor, and the arch only with a GPU",
          "[cli][select][platform]") {
  struct stat st {};
  std::string expected = "cpu";
  if (::stat("/proc/driver/nvidia/gpus", &st) == 0 || ::stat("/dev/nvidia0", &st) == 0)
    expected = "cuda";
  else if (::stat("/dev/kfd", &st) == 0)
    expected = "rocm";
  const auto r = run({"explain", "--json"});
  const auto j = parse_json(r.out);
  // With device nodes present the driver may still refuse to start (an ASan build cannot init CUDA):
  // detection then falls back to cpu, and says so in the report.
  const auto vendor = j.at("platform").at("vendor").get<std::string>();
  CHECK((vendor == expected || vendor == "cpu"));
  if (vendor == "cpu")
    CHECK(j.at("platform").at("arch").is_null());
  else
    CHECK(j.at("platform").at("arch").is_string());  // read from the driver (docs/detection.md)
}

TEST_CASE("a required feature the preferred backend lacks moves selection on", "[cli][explain][json]") {
  const auto plain = run({"select", "--platform", "rocm", "--arch", "gfx942", "--no-stock", "--feature", "sinks"});
  CHECK(plain.status == 0);
  CHECK(plain.out != "ROCM_ATTN\n");
  CHECK(plain.out == "TRITON_ATTN\n");

  const auto r =
      run({"explain", "--json", "--platform", "rocm", "--arch", "gfx942", "--no-stock", "--feature", "sinks"});
  CHECK(r.status == 0);
  const auto j = parse_json(r.out);
  CHECK(j.at("backend") == "TRITON_ATTN");
  CHECK(j.at("error").is_null());
  CHECK(j.at("override").at("source") == "none");
  CHECK(j.at("override").at("spec").is_null());
  CHECK(j.at("query").at("features") == nlohmann::json::array({"sinks"}));
  const auto& rocm_attn = candidate(j, "ROCM_ATTN");
  CHECK(rocm_attn.at("verdict") == "rejected");
  CHECK(rocm_attn.at("rank") == 1);
  CHECK(has_reason(rocm_attn, "feature"));
  CHECK(candidate(j, "TRITON_ATTN").at("verdict") == "selected");
  CHECK(has_reason(candidate(j, "ROCM_AITER_FA"), "policy_condition"));
}

TEST_CASE("the JSON report has the documented shape", "[cli][json]") {
  const auto r = run({"select", "--json", "--platform", "rocm", "--arch", "gfx942", "--no-stock", "--head-size", "64",
                      "--dtype", "fp16", "--kv-cache-dtype", "fp8", "--block-size", "32", "--num-heads", "8"});
  CHECK(r.status == 0);
  CHECK(r.err.empty());
  const auto j = parse_json(r.out);
  for (const char* key :
       {"backend", "variant", "domain", "platform", "query", "override", "rule", "candidates", "error"})
    CHECK(j.contains(key));
  CHECK(j.at("backend") == "ROCM_ATTN");
  CHECK(j.at("domain") == "decoder");
  CHECK(j.at("platform") ==
        nlohmann::json({{"vendor", "rocm"}, {"arch", "gfx942"}, {"components", nlohmann::json::array()}}));
  const auto& q = j.at("query");
  CHECK(q.at("head_size") == 64);
  CHECK(q.at("dtype") == "float16");
  CHECK(q.at("kv_cache_dtype") == "fp8");
  CHECK(q.at("block_size") == 32);
  CHECK(q.at("num_heads") == 8);
  CHECK(j.at("rule").is_string());
  for (const auto& c : j.at("candidates"))
    for (const char* key : {"name", "variant", "rank", "verdict", "forced", "reasons"}) CHECK(c.contains(key));
}

TEST_CASE("--mla and --sparse set the attention mode", "[cli][json]") {
  CHECK(parse_json(run({"explain", "--json", "--platform", "cuda", "--arch", "9.0", "--mla"}).out)
            .at("query")
            .at("mode") == "mla");
  CHECK(parse_json(run({"explain", "--json", "--platform", "cuda", "--arch", "9.0", "--sparse"}).out)
            .at("query")
            .at("mode") == "sparse_mla");
}

TEST_CASE("the --backend flag wins over ATTNSEL_BACKEND and says so on stderr", "[cli][override]") {
  const auto env_only = run({"select", "--json", "--platform", "rocm", "--arch", "gfx942", "--no-stock"},
                            {"ATTNSEL_BACKEND=TRITON_ATTN"});
  CHECK(env_only.status == 0);
  CHECK(env_only.err.empty());
  const auto e = parse_json(env_only.out);
  CHECK(e.at("backend") == "TRITON_ATTN");
  CHECK(e.at("override") == nlohmann::json({{"spec", "TRITON_ATTN"}, {"source", "env"}}));

  const auto both =
      run({"select", "--json", "--platform", "rocm", "--arch", "gfx942", "--no-stock", "--backend", "ROCM_ATTN"},
          {"ATTNSEL_BACKEND=TRITON_ATTN"});
  CHECK(both.status == 0);
  const auto b = parse_json(both.out);
  CHECK(b.at("backend") == "ROCM_ATTN");
  CHECK(b.at("override").at("source") == "flag");
  CHECK(b.at("candidates").at(0).at("forced") == true);
  CHECK(both.err.find("ATTNSEL_BACKEND") != std::string::npos);
  CHECK(both.err.find("note") != std::string::npos);

  const auto flag_only =
      run({"select", "--platform", "rocm", "--arch", "gfx942", "--no-stock", "--backend", "TRITON_ATTN"});
  CHECK(flag_only.out == "TRITON_ATTN\n");
  CHECK(flag_only.err.empty());
}

TEST_CASE("each domain reads only its own override variable", "[cli][override][encoder]") {
  const auto decoder = run({"select", "--json", "--platform", "rocm", "--arch", "gfx942", "--no-stock"},
                           {"ATTNSEL_ENCODER_BACKEND=TORCH_SDPA"});
  const auto d = parse_json(decoder.out);
  CHECK(d.at("backend") == "ROCM_ATTN");
  CHECK(d.at("override").at("source") == "none");

  const std::vector<std::string> encoder_args = {"select", "--json",      "--platform", "rocm",     "--arch",
                                                 "gfx942", "--component", "flash_attn", "--domain", "encoder"};
  const auto encoder = parse_json(run(encoder_args, {"ATTNSEL_BACKEND=TORCH_SDPA"}).out);
  CHECK(encoder.at("backend") == "FLASH_ATTN");
  CHECK(encoder.at("override").at("source") == "none");

  const auto encoder_env = parse_json(run(encoder_args, {"ATTNSEL_ENCODER_BACKEND=TORCH_SDPA"}).out);
  CHECK(encoder_env.at("backend") == "TORCH_SDPA");
  CHECK(encoder_env.at("override").at("source") == "env");

  // The encoder flag-over-env note names the encoder variable.
  const auto both = run({"select", "--platform", "cpu", "--domain", "encoder", "--backend", "TORCH_SDPA"},
                        {"ATTNSEL_ENCODER_BACKEND=FLASH_ATTN"});
  CHECK(both.out == "TORCH_SDPA\n");
  CHECK(both.err.find("ATTNSEL_ENCODER_BACKEND") != std::string::npos);
}

TEST_CASE("an unknown backend fails with status 1 and a suggestion", "[cli][errors]") {
  const auto r = run({"select", "--platform", "cuda", "--arch", "9.0", "--backend", "FLASH_ATN"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(squash(r.err).find("Did you mean FLASH_ATTN?") != std::string::npos);

  const auto j_run = run({"select", "--json", "--platform", "cuda", "--arch", "9.0", "--backend", "FLASH_ATN"});
  CHECK(j_run.status == 1);
  CHECK(!j_run.err.empty());
  const auto j = parse_json(j_run.out);
  CHECK(j.at("backend").is_null());
  CHECK(j.at("error").at("code") == "unknown_backend");
  CHECK(j.at("error").at("suggestions") == nlohmann::json::array({"FLASH_ATTN"}));
}

TEST_CASE("a rejected forced backend fails unless --prefer falls back", "[cli][errors][override]") {
  const std::vector<std::string> args = {"--platform", "rocm",      "--arch",    "gfx942", "--no-stock",
                                         "--backend",  "ROCM_ATTN", "--feature", "sinks"};
  const auto strict = run(cat({"select"}, {"--platform", "rocm", "--arch", "gfx942", "--no-stock", "--backend",
                                           "ROCM_ATTN", "--feature", "sinks"}));
  CHECK(strict.status == 1);
  CHECK(strict.out.empty());
  CHECK(strict.err.find("backend_rejected") != std::string::npos);

  std::vector<std::string> json_args = {"explain", "--json"};
  json_args.insert(json_args.end(), args.begin(), args.end());
  const auto j_run = run(json_args);
  CHECK(j_run.status == 1);
  const auto j = parse_json(j_run.out);
  CHECK(j.at("error").at("code") == "backend_rejected");
  const auto& c = candidate(j, "ROCM_ATTN");
  CHECK(c.at("forced") == true);
  CHECK(c.at("verdict") == "rejected");
  CHECK(has_reason(c, "feature"));

  std::vector<std::string> prefer_args = {"select", "--prefer"};
  prefer_args.insert(prefer_args.end(), args.begin(), args.end());
  const auto prefer = run(prefer_args);
  CHECK(prefer.status == 0);
  CHECK(prefer.out == "TRITON_ATTN\n");
  CHECK(prefer.err.find("--prefer") != std::string::npos);
}

TEST_CASE("no backend for the query is status 1 with every reason on stderr", "[cli][errors]") {
  const auto r = run({"select", "--platform", "cuda", "--arch", "9.0", "--feature", "alibi", "--feature", "dcp"});
  CHECK(r.status == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("no_backend") != std::string::npos);
  CHECK(r.err.find("FLASH_ATTN") != std::string::npos);
  for (const auto& line : lines_of(r.err)) CHECK(line.size() <= 100);
}

TEST_CASE("bad values are usage errors: status 2 and one stderr line naming the flag", "[cli][usage]") {
  struct bad {
    std::vector<std::string> args;
    std::string flag;
    std::string accepted;
  };
  const std::vector<bad> cases = {
      {{"--head-size", "-3"}, "--head-size", "1..65536"},
      {{"--head-size=-3"}, "--head-size", "1..65536"},
      {{"--head-size", "0"}, "--head-size", "1..65536"},
      {{"--head-size", "65537"}, "--head-size", "1..65536"},
      {{"--head-size", "12x"}, "--head-size", "1..65536"},
      {{"--head-size-v", "0"}, "--head-size-v", "1..65536"},
      {{"--block-size", "0"}, "--block-size", "1..1048576"},
      {{"--block-size", "99999999999"}, "--block-size", "1..1048576"},
      {{"--num-heads", "-1"}, "--num-heads", "1..1048576"},
      {{"--dtype", "float17"}, "--dtype", "bfloat16"},
      {{"--kv-cache-dtype", "fp9"}, "--kv-cache-dtype", "fp8_e4m3"},
      {{"--attn-type", "sideways"}, "--attn-type", "encoder_decoder"},
      {{"--domain", "middle"}, "--domain", "encoder"},
      {{"--platform", "quantum"}, "--platform", "rocm"},
      {{"--platform", "tpu"}, "--platform", "xpu"},
      {{"--arch", "sm_"}, "--arch", "sm_90"},
      {{"--platform", "cuda", "--arch", "gfx942"}, "--arch", "9.0"},
      {{"--platform", "rocm", "--arch", "9.0"}, "--arch", "gfx942"},
      {{"--platform", "cpu", "--arch", "9.0"}, "--arch", "cuda"},
      {{"--component", "bad name"}, "--component", "NAME=VERSION"},
      {{"--component", "flashinfer=x.y"}, "--component", "NAME=VERSION"},
      {{"--feature", "nonsense"}, "--feature", "sinks"},
      {{"--feature", "dropout"}, "--feature", "sliding_window"},
      {{"--bogus"}, "--bogus", "--help"},
      {{"--catalog", "vllm", "--catalog", "torch_sdpa"}, "--catalog", "torch_sdpa"},
  };
  for (const char* command : {"select", "explain"}) {
    for (const auto& c : cases) {
      std::vector<std::string> args = {command};
      args.insert(args.end(), c.args.begin(), c.args.end());
      const auto r = run(args);
      INFO(command << " " << c.args.front() << " -> " << r.err);
      CHECK(r.status == 2);
      CHECK(r.out.empty());
      CHECK(lines_of(r.err).size() == 1);
      CHECK(r.err.find(c.flag) != std::string::npos);
      CHECK(r.err.find(c.accepted) != std::string::npos);
    }
  }
}

TEST_CASE("command-line structure errors are status 2", "[cli][usage]") {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{},
                                             {"frobnicate"},
                                             {"select", "--head-size"},
                                             {"validate"},
                                             {"matrix", "--format", "yaml"},
                                             {"list", "--domain", "middle"},
                                             {"list", "--catalog", "vllm", "--catalog-only", "x.json"}}) {
    const auto r = run(args);
    INFO((args.empty() ? std::string("(none)") : args.front()) << " -> " << r.err);
    CHECK(r.status == 2);
    CHECK(lines_of(r.err).size() == 1);
  }
}

TEST_CASE("catalog-declared features are accepted with that catalog", "[cli][catalog]") {
  const auto r = run({"select", "--catalog", "torch_sdpa", "--platform", "cuda", "--arch", "9.0", "--domain", "encoder",
                      "--feature", "dropout"});
  CHECK(r.status == 0);
  CHECK(r.out == "FLASH_ATTENTION\n");
}

TEST_CASE("explain prints a table within 100 columns with the winner marked and the rule", "[cli][explain]") {
  const auto r = run({"explain", "--platform", "rocm", "--arch", "gfx942", "--no-stock", "--feature", "sinks"});
  CHECK(r.status == 0);
  CHECK(r.out.find('\033') == std::string::npos);  // not a terminal: no colour
  bool winner = false;
  bool rejected = false;
  bool rule = false;
  for (const auto& line : lines_of(r.out)) {
    CHECK(line.size() <= 100);
    const auto fields = fields_of(line);
    if (line.rfind("*", 0) == 0) {
      winner = true;
      REQUIRE(fields.size() >= 5);
      CHECK(fields[1] == "2");
      CHECK(fields[2] == "TRITON_ATTN");
      CHECK(fields[4] == "selected");
    }
    if (fields.size() >= 5 && fields[1] == "ROCM_ATTN") {
      rejected = true;
      CHECK(fields[0] == "1");
      CHECK(fields[3] == "rejected");
      CHECK(fields[4] == "feature:");
    }
    if (line.rfind("rule:", 0) == 0) {
      rule = true;
      CHECK(line.find("decoder rocm") != std::string::npos);
    }
  }
  CHECK(winner);
  CHECK(rejected);
  CHECK(rule);
  CHECK(r.out.find("note:") != std::string::npos);
}

TEST_CASE("explain of a failed selection prints the table and fails with status 1", "[cli][explain][errors]") {
  const auto r = run({"explain", "--platform", "cuda", "--arch", "9.0", "--no-stock", "--backend", "FLASHINFER"});
  CHECK(r.status == 1);
  CHECK(r.out.find("FLASHINFER") != std::string::npos);
  CHECK(r.out.find("component:") != std::string::npos);
  CHECK(r.err.find("backend_rejected") != std::string::npos);
}

TEST_CASE("untrusted override text is printed escaped", "[cli][errors]") {
  const auto r = run({"select", "--platform", "cpu"}, {std::string("ATTNSEL_BACKEND=EVIL\033[31m")});
  CHECK(r.status == 1);
  CHECK(r.err.find('\033') == std::string::npos);
  CHECK(r.err.find("\\x1b") != std::string::npos);
}

TEST_CASE("list shows names, aliases, domains and platforms", "[cli][list]") {
  const auto r = run({"list"});
  CHECK(r.status == 0);
  CHECK(r.out.rfind("NAME", 0) == 0);
  CHECK(r.out.find("ROCM_ATTN") != std::string::npos);
  CHECK(r.out.find("TORCH_SDPA") != std::string::npos);
  for (const auto& line : lines_of(r.out)) CHECK(line.size() <= 100);

  const auto encoder = run({"list", "--domain", "encoder"});
  CHECK(encoder.out.find("TORCH_SDPA") != std::string::npos);
  CHECK(encoder.out.find("ROCM_ATTN ") == std::string::npos);

  const auto j = parse_json(run({"list", "--json"}).out);
  REQUIRE(j.is_array());
  CHECK(j.size() == attnsel::reference_registry().size());
  bool found = false;
  for (const auto& b : j) {
    for (const char* key : {"name", "aliases", "domains", "platforms", "description", "variants"})
      CHECK(b.contains(key));
    if (b.at("name") == "ROCM_ATTN") {
      found = true;
      CHECK(b.at("domains") == nlohmann::json::array({"decoder"}));
      CHECK(b.at("platforms") == nlohmann::json::array({"rocm"}));
    }
  }
  CHECK(found);

  const auto sdpa = parse_json(run({"list", "--catalog", "torch_sdpa", "--json"}).out);
  CHECK(sdpa.size() == attnsel::torch_sdpa_registry().size());
  CHECK(sdpa.at(0).at("name") == attnsel::torch_sdpa_registry().backends().at(0).name);
}

TEST_CASE("matrix defaults to the vllm catalog and is the library's generator", "[cli][matrix]") {
  const auto plain = run({"matrix"});
  const auto vllm = run({"matrix", "--catalog", "vllm", "--format", "markdown"});
  CHECK(plain.status == 0);
  CHECK(plain.out == vllm.out);
  CHECK(plain.out == attnsel::matrix_markdown(attnsel::builtin_catalog("vllm")));

  const auto sdpa = run({"matrix", "--catalog", "torch_sdpa", "--format", "markdown"});
  CHECK(sdpa.out == attnsel::matrix_markdown(attnsel::builtin_catalog("torch_sdpa")));
  CHECK(read_file(std::string(ATTNSEL_SOURCE_DIR) + "/docs/backends.md") == vllm.out + "\n" + sdpa.out);

  const auto json = run({"matrix", "--catalog", "torch_sdpa", "--format", "json"});
  CHECK(json.status == 0);
  CHECK(parse_json(json.out) == attnsel::matrix_json(attnsel::builtin_catalog("torch_sdpa")));
}

TEST_CASE("validate reports ok with counts, or the loader's error with its JSON pointer", "[cli][validate]") {
  const auto good = run({"validate", vllm_catalog});
  CHECK(good.status == 0);
  const auto c = attnsel::read_catalog_file(vllm_catalog);
  CHECK(good.out == vllm_catalog + ": ok (" + std::to_string(c.registry.size()) + " backends, " +
                        std::to_string(c.registry.policy().rules.size()) + " rules)\n");

  const temp_file broken(R"({"format": "attnsel-catalog", "version": 1, "name": "x",
                             "backends": [{"name": "FINE_ATTN", "domains": ["decoder"]},
                                          {"name": "bad name", "domains": ["decoder"]}],
                             "policies": []})");
  const auto bad = run({"validate", broken.path});
  CHECK(bad.status == 1);
  CHECK(bad.out.empty());
  CHECK(bad.err.find(broken.path) != std::string::npos);
  CHECK(bad.err.find("/backends/1/name") != std::string::npos);

  const temp_file truncated(R"({"format": )");
  const auto trunc = run({"validate", truncated.path});
  CHECK(trunc.status == 1);
  CHECK(trunc.err.find("malformed JSON") != std::string::npos);

  const auto missing = run({"validate", "/nonexistent/attnsel.json"});
  CHECK(missing.status == 1);
  CHECK(missing.err.find("/nonexistent/attnsel.json") != std::string::npos);
}

TEST_CASE("a catalog file given with --catalog is layered on the reference catalog", "[cli][catalog]") {
  const temp_file overlay(overlay_json);
  const auto r = run({"select", "--platform", "rocm", "--arch", "gfx942", "--catalog", overlay.path});
  CHECK(r.status == 0);
  CHECK(r.out == "MY_ATTN\n");
  // The reference backends are still there, and the file's own feature is accepted.
  const auto forced = run({"select", "--platform", "rocm", "--arch", "gfx942", "--catalog", overlay.path, "--backend",
                           "TRITON_ATTN", "--feature", "my_feature"});
  CHECK(forced.status == 1);
  CHECK(forced.err.find("backend_rejected") != std::string::npos);
  const auto j =
      parse_json(run({"explain", "--json", "--platform", "rocm", "--arch", "gfx942", "--catalog", overlay.path}).out);
  CHECK(j.at("backend") == "MY_ATTN");
  CHECK(candidate(j, "ROCM_ATTN").at("verdict") == "supported");
  const auto listed = parse_json(run({"list", "--json", "--catalog", overlay.path}).out);
  CHECK(listed.size() == attnsel::reference_registry().size() + 1);
  // Without the overlay the feature is unknown.
  CHECK(run({"select", "--platform", "rocm", "--feature", "my_feature"}).status == 2);
}

TEST_CASE("--catalog-only uses the file alone; a bad catalog is status 1", "[cli][catalog]") {
  const temp_file overlay(overlay_json);
  const auto alone = run({"select", "--platform", "rocm", "--catalog-only", overlay.path});
  CHECK(alone.status == 1);
  CHECK(alone.err.find("/policies/0/order/1") != std::string::npos);

  const temp_file standalone(R"({"format": "attnsel-catalog", "version": 1, "name": "solo",
    "backends": [{"name": "MY_ATTN", "domains": ["decoder"], "platforms": [{"vendor": "rocm"}]}],
    "policies": []})");
  const auto solo = parse_json(run({"list", "--json", "--catalog-only", standalone.path}).out);
  REQUIRE(solo.size() == 1);
  CHECK(solo.at(0).at("name") == "MY_ATTN");

  const auto missing = run({"select", "--catalog", "/nonexistent/overlay.json"});
  CHECK(missing.status == 1);
  CHECK(missing.out.empty());
  CHECK(missing.err.find("/nonexistent/overlay.json") != std::string::npos);
}

TEST_CASE("select and explain --json print one JSON error object when the catalog fails (issue 9, defect 5)",
          "[cli][catalog]") {
  for (const char* command : {"select", "explain"}) {
    const auto r = run({command, "--platform", "cuda", "--arch", "9.0", "--json", "--catalog", "/nonexistent/x.json"});
    INFO(command << " -> " << r.err);
    CHECK(r.status == 1);
    const auto j = parse_json(r.out);
    CHECK(j.at("backend").is_null());
    CHECK(j.at("error").at("code") == "catalog");
    CHECK(j.at("error").at("message").get<std::string>().find("/nonexistent/x.json") != std::string::npos);
  }
}

TEST_CASE("the CLI and the library share one limit per count flag (issue 8)", "[cli][usage]") {
  const std::pair<const char*, std::uint32_t> flags[] = {{"--num-heads", attnsel::limits::num_heads},
                                                         {"--head-size", attnsel::limits::head_size},
                                                         {"--head-size-v", attnsel::limits::head_size},
                                                         {"--block-size", attnsel::limits::block_size}};
  for (const auto& [flag, limit] : flags) {
    INFO(flag);
    const auto at_limit =
        run({"explain", "--json", "--platform", "cuda", "--arch", "9.0", flag, std::to_string(limit)});
    CHECK(at_limit.status != 2);  // selection may fail (no backend takes head size 65536), parsing may not
    CHECK(parse_json(at_limit.out).at("query").dump().find(std::to_string(limit)) != std::string::npos);
    const auto past = run({"select", "--platform", "cuda", "--arch", "9.0", flag, std::to_string(limit + 1)});
    CHECK(past.status == 2);
    CHECK(past.err.find(std::string(flag) + ": '" + std::to_string(limit + 1) + "' is outside 1.." +
                        std::to_string(limit)) != std::string::npos);
  }
}

TEST_CASE("enum flags take the library's names and aliases in any case, never an enumerator's number (issue 8)",
          "[cli][usage]") {
  const auto j = parse_json(run({"explain", "--json", "--platform", "NVIDIA", "--arch", "9.0", "--dtype", "FP16",
                                 "--kv-cache-dtype", "Fp8_E4m3", "--attn-type", "cross", "--domain", "vit"})
                                .out);
  CHECK(j.at("platform").at("vendor") == "cuda");
  CHECK(j.at("query").at("dtype") == "float16");
  CHECK(j.at("query").at("kv_cache_dtype") == "fp8_e4m3");
  CHECK(j.at("query").at("attn_type") == "encoder_decoder");
  CHECK(j.at("query").at("domain") == "encoder");
  // CLI11's CheckedTransformer alone would let the enumerator's number through.
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"select", "--dtype", "0"}, {"select", "--platform", "1"}, {"list", "--domain", "1"}}) {
    const auto r = run(args);
    INFO(args[1] << " " << args[2] << " -> " << r.err);
    CHECK(r.status == 2);
    CHECK(r.err.find(args[1] + ": '" + args[2] + "' is not one of ") != std::string::npos);
  }
}

TEST_CASE("help lists the values and ranges of the library's tables (issue 8)", "[cli][help]") {
  const auto sel = squash(run({"select", "--help"}).out);
  for (const auto v : attnsel::enum_values<attnsel::cache_dtype>())
    CHECK(sel.find(std::string(attnsel::to_string(v))) != std::string::npos);
  CHECK(sel.find("Compute dtype: " + attnsel::enum_names<attnsel::data_type>()) != std::string::npos);
  CHECK(sel.find("Attention type: " + attnsel::enum_names<attnsel::attention_type>()) != std::string::npos);
  CHECK(sel.find("Query and key head size, 1.." + std::to_string(attnsel::limits::head_size)) != std::string::npos);
  CHECK(sel.find("KV-cache block size, 1.." + std::to_string(attnsel::limits::block_size)) != std::string::npos);
  CHECK(sel.find("Query heads per rank, 1.." + std::to_string(attnsel::limits::num_heads)) != std::string::npos);
  for (const auto& f : attnsel::features::known) CHECK(sel.find(std::string(f.name)) != std::string::npos);
  CHECK(sel.find("tpu") == std::string::npos);  // the enum knows it, the tool's --platform does not
  // Every query field but the features (the repeatable --feature) is a flag made from the field list: its
  // name with dashes, its text, and what leaving it out means.
  attnsel::field_list<attnsel::query>::members([&sel](const attnsel::query_field& f, auto) {
    if (f.name == "features") return;
    std::string flag = "--" + std::string(f.name);
    std::replace(flag.begin(), flag.end(), '_', '-');
    INFO(flag);
    const auto at = sel.find(flag + " ");
    REQUIRE(at != std::string::npos);
    const auto line = sel.substr(at, sel.find("--", at + flag.size()) - at);
    CHECK(line.find(std::string(f.doc)) != std::string::npos);
    if (!f.unstated.empty()) CHECK(line.find("(default: " + std::string(f.unstated)) != std::string::npos);
  });
  const auto list = squash(run({"list", "--help"}).out);
  for (const auto name : attnsel::builtin_catalog_names) CHECK(list.find(std::string(name)) != std::string::npos);
}

TEST_CASE("--catalog-only and --catalog exclude each other", "[cli][usage]") {
  const auto r = run({"select", "--catalog-only", "a.json", "--catalog", "b.json"});
  CHECK(r.status == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find("--catalog excludes --catalog-only") != std::string::npos);
}

TEST_CASE("an empty catalog path is a usage error for every path option (issue 9, defect 6)", "[cli][usage]") {
  for (const auto& args : std::vector<std::vector<std::string>>{{"select", "--catalog-only", ""},
                                                                {"select", "--catalog", ""},
                                                                {"list", "--catalog-only", ""},
                                                                {"matrix", "--catalog", ""},
                                                                {"validate", ""}}) {
    const auto r = run(args);
    INFO(args.front() << " " << args[1] << " -> " << r.err);
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("empty path") != std::string::npos);
  }
}

TEST_CASE("an unknown command is named and the commands are listed (issue 9, defect 13)", "[cli][usage]") {
  const auto r = run({"frobnicate"});
  CHECK(r.status == 2);
  CHECK(r.err.find("'frobnicate' is not an attnsel command") != std::string::npos);
  CHECK(r.err.find("select, explain, plan, list, matrix, validate") != std::string::npos);
}

TEST_CASE("a binary file is reported as not JSON text (issue 9, defect 13)", "[cli][catalog]") {
  std::string blob;
  for (int i = 0; i < 2000; ++i) blob += static_cast<char>((i * 131 + 7) % 256);
  const temp_file binary(blob);
  const auto r = run({"validate", binary.path});
  CHECK(r.status == 1);
  CHECK(r.err.find("not JSON text") != std::string::npos);
}

TEST_CASE("a line break in a catalog's component name cannot forge a diagnostic line (issue 9, defect 10)",
          "[cli][catalog]") {
  const temp_file forged(R"({"format": "attnsel-catalog", "version": 1, "name": "f",
    "backends": [{"name": "MY_ATTN", "domains": ["decoder"], "requires": [{"component": "x\nattnsel: error: forged"}]}]})");
  const auto r = run({"select", "--platform", "cuda", "--arch", "9.0", "--catalog-only", forged.path});
  CHECK(r.status == 1);
  std::size_t diagnostics = 0;
  for (const auto& line : lines_of(r.err)) diagnostics += line.rfind("attnsel:", 0) == 0 ? 1 : 0;
  CHECK(diagnostics == 1);
  CHECK(r.err.find("\nattnsel: error: forged") == std::string::npos);
}

TEST_CASE("--version prints the library version", "[cli][help]") {
  const auto r = run({"--version"});
  CHECK(r.status == 0);
  CHECK(r.out == std::string(ATTNSEL_VERSION_STRING) + "\n");
}

TEST_CASE("help documents every flag with examples and fits 100 columns", "[cli][help]") {
  const auto top = run({"--help"});
  CHECK(top.status == 0);
  for (const char* word : {"select", "explain", "list", "matrix", "validate", "Examples:", "ATTNSEL_BACKEND",
                           "ATTNSEL_ENCODER_BACKEND", "--version"})
    CHECK(top.out.find(word) != std::string::npos);
  const auto sel = run({"select", "--help"});
  CHECK(sel.status == 0);
  for (const char* flag : {"--platform",
                           "--arch",
                           "--component",
                           "--domain",
                           "--head-size",
                           "--head-size-v",
                           "--dtype",
                           "--kv-cache-dtype",
                           "--block-size",
                           "--attn-type",
                           "--mla",
                           "--sparse",
                           "--num-heads",
                           "--feature",
                           "--catalog",
                           "--catalog-only",
                           "--backend",
                           "--prefer",
                           "--json",
                           "Examples:",
                           "attnsel select --platform"})
    CHECK(sel.out.find(flag) != std::string::npos);
  for (const auto& args : std::vector<std::vector<std::string>>{{"--help"},
                                                                {"select", "--help"},
                                                                {"explain", "--help"},
                                                                {"list", "--help"},
                                                                {"matrix", "--help"},
                                                                {"validate", "--help"}}) {
    const auto r = run(args);
    CHECK(r.status == 0);
    CHECK(r.out.find("Examples:") != std::string::npos);
    for (const auto& line : lines_of(r.out)) {
      INFO(line);
      CHECK(line.size() <= 100);
    }
  }
}

TEST_CASE("a closed output pipe does not kill the tool by a signal", "[cli][robustness]") {
  // stdout goes to a pipe whose reader has gone; the exit status is written to a file.
  char path[] = "/tmp/attnsel_cli_pipe_XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  ::close(fd);
  const std::string script =
      "(sleep 0.3; " + shell_quote(ATTNSEL_CLI) + " matrix 2>/dev/null; echo $? > " + shell_quote(path) + ") | true";
  REQUIRE(std::system(script.c_str()) != -1);
  const auto status = read_file(path);
  std::remove(path);
  // Not 141 (128 + SIGPIPE): the tool notices the failed write and exits 1.
  CHECK(status == "1\n");
}

TEST_CASE("colour is used on a terminal unless NO_COLOR is set", "[cli][colour]") {
  // util-linux `script` gives the tool a pseudo-terminal; without it this case has nothing to drive.
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    WARN("script(1) not found: terminal colour not tested");
    return;
  }
  const std::string tool = shell_quote(std::string(ATTNSEL_CLI) + " explain --platform rocm --arch gfx942");
  const auto capture = [](const std::string& cmd) {
    std::string out;
    FILE* pipe = ::popen(cmd.c_str(), "r");
    REQUIRE(pipe != nullptr);
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
    ::pclose(pipe);
    return out;
  };
  const auto coloured = capture("env -u NO_COLOR script -qc " + tool + " /dev/null </dev/null");
  CHECK(coloured.find("ROCM_ATTN") != std::string::npos);
  CHECK(coloured.find("\033[32m") != std::string::npos);
  const auto plain = capture("NO_COLOR=1 script -qc " + tool + " /dev/null </dev/null");
  CHECK(plain.find("ROCM_ATTN") != std::string::npos);
  CHECK(plain.find('\033') == std::string::npos);
}

TEST_CASE("docs/cli.md's usage-error examples are what the tool prints", "[cli][docs]") {
  const auto doc = read_file(std::string(ATTNSEL_SOURCE_DIR) + "/docs/cli.md");
  const auto section = doc.find("## Usage errors");
  REQUIRE(section != std::string::npos);
  const auto fence = doc.find("```console\n", section);
  REQUIRE(fence != std::string::npos);
  const auto begin = fence + 11;
  const auto end = doc.find("```\n", begin);
  const auto lines = lines_of(doc.substr(begin, end - begin));
  std::size_t examples = 0;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].rfind("$ attnsel ", 0) != 0) continue;
    auto args = fields_of(lines[i].substr(10));
    const auto r = run(args);
    INFO(lines[i]);
    CHECK(r.status == 2);
    CHECK(r.err == lines[i + 1] + "\n");
    ++examples;
  }
  CHECK(examples >= 5);
}

TEST_CASE("plan on the sglang catalog gives SGLang's prefill/decode outcome", "[cli][plan][sglang]") {
  const std::string dir = std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/";
  const auto on = [](const char* arch, std::vector<std::string> args) {
    args.insert(args.begin(), {"plan", "--catalog", "sglang", "--platform", "cuda", "--arch", arch, "--component",
                               "cuda_runtime=12.8,flashinfer"});
    return run(args);
  };
  const std::string llama = dir + "llama-3-8b.json";
  // No flags: one backend for both phases; trtllm_mha's page size (SGLang snaps page 1 to 64)
  CHECK(on("10.0", {"--model-config", llama}).out == "prefill: TRTLLM_MHA\ndecode: TRTLLM_MHA\nblock_size: 64\n");
  CHECK(on("9.0", {"--model-config", llama}).out == "prefill: FA3\ndecode: FA3\nblock_size: any\n");
  // overrides.py@003bbaf9 _attention_backend_fa3_fp8_fallback: the automatic fa3 with fp8_e5m2 runs triton
  CHECK(on("9.0", {"--model-config", llama, "--kv-cache-dtype", "fp8_e5m2"}).out ==
        "prefill: TRITON\ndecode: TRITON\nblock_size: any\n");
  // --prefill-attention-backend fa4 --decode-attention-backend trtllm_mha: SGLang snaps trtllm_mha's page to
  // 64, then _fa4_page_constraint sets 128, which trtllm_mha takes (16/32/64/128 @003bbaf9): one KV pool, page 128
  const auto split =
      on("10.0", {"--model-config", llama, "--prefill-backend", "fa4", "--decode-backend", "trtllm_mha"});
  CHECK(split.status == 0);
  CHECK(split.out == "prefill: FA4\ndecode: TRTLLM_MHA\nblock_size: 128\n");
  // attnsel is stricter than SGLang with a pinned page size: SGLang changes 64 to 128, attnsel refuses FA4
  const auto pinned = on("10.0", {"--model-config", llama, "--block-size", "64", "--prefill-backend", "fa4",
                                  "--decode-backend", "trtllm_mha"});
  CHECK(pinned.status == 1);
  CHECK(pinned.out == "prefill: (none)\ndecode: TRTLLM_MHA\n");
  CHECK(squash(pinned.err).find("FA4: block size 64 is not a multiple of any of {128}") != std::string::npos);
  // cutedsl_mla is decode-only (_cutedsl_prefill_backend_fill): with trtllm_mla for prefill, as SGLang fills it
  const std::vector<std::string> deepseek = {"--model-config", dir + "deepseek-v3.json", "--tp", "8"};
  auto mla = deepseek;
  mla.insert(mla.end(), {"--prefill-backend", "trtllm_mla", "--decode-backend", "cutedsl_mla"});
  CHECK(on("10.0", mla).out == "prefill: TRTLLM_MLA\ndecode: CUTEDSL_MLA\nblock_size: 64\n");
  // --attention-backend cutedsl_mla alone: SGLang fills prefill with trtllm_mla; attnsel refuses the prefill
  auto base = deepseek;
  base.insert(base.end(), {"--backend", "cutedsl_mla"});
  const auto refused = on("10.0", base);
  CHECK(refused.status == 1);
  CHECK(refused.out == "prefill: (none)\ndecode: CUTEDSL_MLA\n");
  CHECK(squash(refused.err).find("CUTEDSL_MLA: when phase prefill, requires never") != std::string::npos);
}

TEST_CASE("--model-config reads a Hugging Face config.json into the query", "[cli][select][model_config]") {
  const std::string dir = std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/";
  const std::vector<std::string> hopper = {"--catalog", "sglang", "--platform",  "cuda",
                                           "--arch",    "9.0",    "--component", "cuda_runtime=12.8,flashinfer"};
  const auto on_hopper = [&hopper](std::vector<std::string> args) {
    args.insert(args.end(), hopper.begin(), hopper.end());
    return args;
  };
  CHECK(run(on_hopper({"select", "--model-config", dir + "llama-3-8b.json"})).out == "FA3\n");
  CHECK(run(on_hopper({"select", "--model-config", dir + "deepseek-v3.json", "--tp", "8"})).out == "FA3_MLA\n");
  CHECK(run(on_hopper({"select", "--model-config", dir + "qwen2-vl-7b-instruct.json", "--model-part", "vision"})).out ==
        "FA3\n");
  // gpt-oss needs sinks: on Ampere FlashInfer is passed over for Triton, and explain says why
  const auto ex = run({"explain", "--catalog", "sglang", "--platform", "cuda", "--arch", "8.0", "--component",
                       "flashinfer", "--model-config", dir + "gpt-oss-20b.json", "--json"});
  REQUIRE(ex.status == 0);
  const auto j = nlohmann::json::parse(ex.out);
  CHECK(j.at("backend") == "TRITON");
  CHECK(j.at("query").at("head_size") == 64);
  CHECK(j.at("query").at("num_heads") == 64);
  // an explicit --dtype wins over the config's torch_dtype
  const auto f16 = run({"explain", "--catalog", "sglang", "--platform", "cpu", "--model-config",
                        dir + "gemma-2-9b.json", "--dtype", "float16", "--json"});
  CHECK(nlohmann::json::parse(f16.out).at("query").at("dtype") == "float16");
  // shape flags and the config exclude each other; a broken config is status 2 (bad input) naming the key
  CHECK(run({"select", "--model-config", dir + "llama-3-8b.json", "--head-size", "64"}).status == 2);
  CHECK(run({"select", "--model-part", "vision"}).status == 2);
  const auto missing = run({"select", "--platform", "cpu", "--model-config", dir + "README.md"});
  CHECK(missing.status == 2);
  CHECK(missing.out.empty());
  CHECK(missing.err.find("README.md: /: malformed JSON") != std::string::npos);
}

TEST_CASE("--model-config: an empty path, --num-kv-heads, an unknown dtype and JSON errors", "[cli][model_config]") {
  const std::string dir = std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/";
  const std::vector<std::string> cpu = {"--catalog", "sglang", "--platform", "cpu"};
  const auto with = [&cpu](std::vector<std::string> args) {
    args.insert(args.end(), cpu.begin(), cpu.end());
    return args;
  };
  // `--model-config "$CONFIG"` with CONFIG unset: a usage error, never the default query.
  const auto empty = run(with({"select", "--model-config", ""}));
  CHECK(empty.status == 2);
  CHECK(empty.err.find("--model-config: the path is empty") != std::string::npos);
  CHECK(run(with({"plan", "--model-config="})).status == 2);
  // --num-kv-heads over a config: applied when it divides the heads per rank, else refused.
  const auto kv = run(with({"explain", "--model-config", dir + "llama-3-8b.json", "--num-kv-heads", "4", "--json"}));
  REQUIRE(kv.status == 0);
  CHECK(nlohmann::json::parse(kv.out).at("query").at("num_kv_heads") == 4);
  const auto bad_kv = run(with({"select", "--model-config", dir + "llama-3-8b.json", "--num-kv-heads", "5"}));
  CHECK(bad_kv.status == 2);
  CHECK(bad_kv.err.find("--num-kv-heads: 5 does not divide the 32 query heads per rank") != std::string::npos);
  CHECK(run(with({"select", "--model-config", dir + "deepseek-v3.json", "--num-kv-heads", "1"})).status == 2);
  // A dtype attnsel does not know is refused, unless --dtype states the one the engine runs in.
  const temp_file config(R"({"head_dim": 128, "num_attention_heads": 32, "torch_dtype": "float8_e4m3fn", "eps": NaN})");
  const std::string& fp8 = config.path;
  CHECK(run(with({"select", "--model-config", fp8})).status == 2);
  CHECK(run(with({"select", "--model-config", fp8, "--dtype", "bf16"})).status == 0);
  // --json prints one JSON object for a config that does not read, and plan --json for a bad catalog.
  const auto json_err = run(with({"select", "--model-config", fp8, "--json"}));
  CHECK(json_err.status == 2);
  const auto report = nlohmann::json::parse(json_err.out);
  CHECK(report.at("error").at("code") == "model_config");
  CHECK(report.at("error").at("message").get<std::string>().find("/torch_dtype") != std::string::npos);
  const auto plan_err = run({"plan", "--catalog", "/nonexistent/catalog.json", "--platform", "cpu", "--json"});
  CHECK(plan_err.status == 1);
  CHECK(nlohmann::json::parse(plan_err.out).at("error").at("code") == "catalog");
}

TEST_CASE("a bad config.json is status 2 naming the key, with nothing half-written on stdout", "[cli][model_config]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"num_attention_heads": "32", "head_dim": 128})", "/num_attention_heads: expected an integer"},
      {R"({"model_type": "mystery", "hidden_size": 4096})", "/num_attention_heads: missing"},
      {R"({"num_attention_heads": 32})", "/hidden_size: missing (or head_dim)"},
      {R"({"num_attention_heads": 0, "head_dim": 128})", "/num_attention_heads: expected an integer in [1, "},
      {R"({"num_attention_heads": 32, "head_dim": -128})", "/head_dim: expected an integer in [1, "},
      {R"({"num_attention_heads": 32, "num_key_value_heads": 5, "head_dim": 128})",
       "/num_key_value_heads: expected a divisor of num_attention_heads (32), got 5"},
      {R"({"num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 3, "layer_types": ["full_attention"]})",
       "/layer_types: expected 3 entries (num_hidden_layers), got 1"},
      {R"({"text_config": {"num_attention_heads": 8, "head_dim": 64, "sliding_window": true}})",
       "/text_config/sliding_window: expected an integer"},
      {R"({"decoder_attention_heads": 20, "d_model": 1001, "is_encoder_decoder": true})",
       "/d_model: expected a multiple of decoder_attention_heads (20)"},
  };
  for (const auto& [text, key] : bad) {
    const temp_file config(text);
    for (const bool json : {false, true}) {
      std::vector<std::string> args = {"plan", "--platform", "cuda", "--arch", "9.0", "--model-config", config.path};
      if (json) args.emplace_back("--json");
      const auto r = run(args);
      INFO(text << (json ? " --json" : ""));
      CHECK(r.status == 2);
      // stderr wraps long lines at spaces: the pointer, one word, is whole.
      CHECK(r.err.find(key.substr(0, key.find(':') + 1)) != std::string::npos);
      if (json) {
        // Exactly one JSON object, the error: no group of a half-read model before it.
        const auto report = nlohmann::json::parse(r.out);
        CHECK(report.size() == 1);
        CHECK(report.at("error").at("message").get<std::string>().find(key) != std::string::npos);
      } else {
        CHECK(r.out.empty());
      }
    }
  }
}

TEST_CASE("--kv-cache-dtype takes vLLM 0.33.0's newer KV dtypes; a catalog that names none of them says so",
          "[cli][select][issue29]") {
  // vllm/config/cache.py CacheDType in 0.33.0 lists these; the CLI refused them as values before.
  for (const char* dtype :
       {"nvfp4", "nvfp4_4over6", "nvfp4_ds_mla", "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc",
        "turboquant_3bit_nc", "octave_k3v4", "octave_k3v3", "octave_k3v3_compact", "ultraquant_4bit"}) {
    INFO(dtype);
    const auto r = run({"select", "--json", "--platform", "cuda", "--arch", "9.0", "--kv-cache-dtype", dtype});
    CHECK(r.status == 1);  // a data answer (no built-in backend takes it yet), never a usage error (2)
    const auto j = parse_json(r.out);
    CHECK(j.at("query").at("kv_cache_dtype") == dtype);
    CHECK(j.at("error").at("code") == "no_backend");
  }
  const auto typo = run({"select", "--kv-cache-dtype", "nvfp5"});
  CHECK(typo.status == 2);
  CHECK(typo.err.find("did you mean nvfp4?") != std::string::npos);
}

TEST_CASE("a warning advisory is printed, and --refuse-advisories refuses its backend", "[cli][advisory]") {
  const temp_file advised(R"({
    "format": "attnsel-catalog", "version": 2, "name": "advised",
    "backends": [
      {"name": "FAST", "domains": ["decoder"], "kv_cache_dtypes": ["auto", "fp8"], "platforms": [{"vendor": "cuda"}],
       "advisories": [{"id": "fast-fp8", "kv_cache_dtypes": ["fp8"], "action": "warn",
                       "message": "fp8 is slow here", "upstream": ["https://example.org/issues/7"]}]},
      {"name": "SLOW", "domains": ["decoder"], "kv_cache_dtypes": ["auto", "fp8"], "platforms": [{"vendor": "cuda"}]}],
    "policies": [{"domain": "decoder", "vendor": "cuda", "order": ["FAST", "SLOW"]}]})");
  const std::vector<std::string> args = {"--catalog-only", advised.path, "--platform",       "cuda",
                                         "--arch",         "9.0",        "--kv-cache-dtype", "fp8"};
  const auto warned = run(joined({"select"}, args));
  CHECK(warned.status == 0);
  CHECK(warned.out == "FAST\n");
  CHECK(squash(warned.err).find("warning: advisory fast-fp8: fp8 is slow here (https://example.org/issues/7)") !=
        std::string::npos);

  const auto report = run(joined({"explain", "--json"}, args));
  CHECK(report.status == 0);
  const auto j = parse_json(report.out);
  CHECK(j.at("advisory").at("id") == "fast-fp8");
  CHECK(candidate(j, "FAST").at("warnings").size() == 1);
  const auto table = run(joined({"explain"}, args));
  CHECK(squash(table.out).find("warning: advisory fast-fp8") != std::string::npos);

  const auto refused = run(joined({"select", "--refuse-advisories"}, args));
  CHECK(refused.status == 0);
  CHECK(refused.out == "SLOW\n");
  CHECK(refused.err.find("advisory") == std::string::npos);
  const auto forced = run(joined({"select", "--refuse-advisories", "--backend", "FAST"}, args));
  CHECK(forced.status == 1);
  CHECK(forced.err.find("advisory fast-fp8") != std::string::npos);
  const auto without = run(joined({"select"}, {args.begin(), args.end() - 2}));
  CHECK(without.out == "FAST\n");
  CHECK(without.err.empty());
}

TEST_CASE("linear layers read their own phase overrides: flags, then variables, then the linear override",
          "[cli][domains]") {
  const std::vector<std::string> gdn = {"select", "--catalog", "sglang", "--platform", "cuda",       "--arch",
                                        "9.0",    "--domain",  "linear", "--mode",     "gated_delta"};
  const auto prefill = joined(gdn, {"--phase", "prefill"});
  const auto decode = joined(gdn, {"--phase", "decode"});
  const std::string automatic_prefill = run(prefill).out;
  REQUIRE(automatic_prefill != "TRITON_LINEAR\n");  // so that the override below changes the answer
  CHECK(run(joined(prefill, {"--linear-prefill-backend", "TRITON_LINEAR"})).out == "TRITON_LINEAR\n");
  // A phase override is that phase's alone; the other phase keeps its answer.
  CHECK(run(joined(decode, {"--linear-prefill-backend", "TRITON_LINEAR"})).out == run(decode).out);
  CHECK(run(decode, {"ATTNSEL_LINEAR_DECODE_BACKEND=CUTEDSL"}).out == "CUTEDSL\n");
  CHECK(run(joined(decode, {"--linear-decode-backend", "TRITON_LINEAR"}), {"ATTNSEL_LINEAR_DECODE_BACKEND=CUTEDSL"})
            .out == "TRITON_LINEAR\n");  // the flag before the variable
  // Unset, a phase inherits the linear override; the decoder's phase variables never reach linear layers.
  CHECK(run(prefill, {"ATTNSEL_LINEAR_BACKEND=TRITON_LINEAR", "ATTNSEL_LINEAR_DECODE_BACKEND=CUTEDSL"}).out ==
        "TRITON_LINEAR\n");
  CHECK(run(prefill, {"ATTNSEL_PREFILL_BACKEND=TRITON_LINEAR"}).out == automatic_prefill);
  // plan: the linear group's two phases.
  const std::string config = std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/qwen3.5-35b-a3b.json";
  const auto plan = run({"plan", "--catalog", "sglang", "--platform", "cuda", "--arch", "9.0", "--model-config", config,
                         "--linear-prefill-backend", "TRITON_LINEAR", "--linear-decode-backend", "CUTEDSL"});
  CHECK(plan.out.find("linear (30 layers: 0-2, 4-6, 8-10, 12-14, 16-18, 20-22, 24-26, 28-30, 32-34, 36-38)\n"
                      "  prefill: TRITON_LINEAR\n  decode: CUTEDSL\n") != std::string::npos);
}

TEST_CASE("the drafter reads its own variable, else the decoder's; linear layers take --mode", "[cli][domains]") {
  const std::vector<std::string> hopper = {"select", "--platform", "cuda", "--arch", "9.0"};
  CHECK(run(joined(hopper, {"--domain", "drafter"})).out == "FLASH_ATTN\n");
  CHECK(run(joined(hopper, {"--domain", "drafter"}), {"ATTNSEL_BACKEND=TRITON_ATTN"}).out == "TRITON_ATTN\n");
  CHECK(run(joined(hopper, {"--domain", "drafter"}), {"ATTNSEL_BACKEND=TRITON_ATTN", "ATTNSEL_DRAFTER_BACKEND=auto"})
            .out == "FLASH_ATTN\n");
  CHECK(run(joined(hopper, {"--domain", "drafter", "--phase", "prefill"}),
            {"ATTNSEL_BACKEND=TRITON_ATTN", "ATTNSEL_PREFILL_BACKEND=FLEX_ATTENTION"})
            .out == "FLEX_ATTENTION\n");
  CHECK(run(joined(hopper, {"--domain", "decoder"}), {"ATTNSEL_DRAFTER_BACKEND=TRITON_ATTN"}).out == "FLASH_ATTN\n");

  CHECK(run(joined(hopper, {"--domain", "linear", "--mode", "mamba2"})).out == "MAMBA2_ATTN\n");
  CHECK(run(joined(hopper, {"--domain", "linear", "--mode", "gated_delta", "--feature", "kda"})).out == "GDN_ATTN\n");
  const auto ignored = run(joined(hopper, {"--domain", "linear", "--mode", "mamba2", "--backend", "FLASH_ATTN"}));
  CHECK(ignored.status == 0);
  CHECK(ignored.out == "MAMBA2_ATTN\n");
  CHECK(squash(ignored.err)
            .find("note: the engine passes over the forced backend here (FLASH_ATTN: the engine does "
                  "not read a forced backend here") != std::string::npos);
  const auto conflict = run(joined(hopper, {"--mode", "mamba2", "--mla"}));
  CHECK(conflict.status == 2);
  CHECK(conflict.err.find("--mode mamba2 conflicts with --mla") != std::string::npos);
}

TEST_CASE("plan --model-config of a hybrid model plans each group of layers", "[cli][model_plan]") {
  const std::string dir = std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/";
  const auto text = run({"plan", "--model-config", dir + "gpt-oss-20b.json", "--platform", "cuda", "--arch", "9.0"});
  REQUIRE(text.status == 0);
  CHECK(text.out.find("gpt_oss: 24 layers in 2 groups\nsliding 128 (12 layers: 0, 2, 4,") == 0);
  CHECK(text.out.find("\nfull (12 layers: 1, 3, 5,") != std::string::npos);
  const auto json =
      run({"plan", "--model-config", dir + "gemma-3-27b-it.json", "--platform", "cuda", "--arch", "9.0", "--json"});
  REQUIRE(json.status == 0);
  const auto report = nlohmann::json::parse(json.out);
  REQUIRE(report.at("groups").size() == 3);
  CHECK(report.at("groups")[1].at("kind") == "full");
  CHECK(report.at("groups")[1].at("part") == "text");
  CHECK(report.at("groups")[2].at("kind") == "encoder");  // the SigLIP vision tower
  CHECK(report.at("groups")[2].at("part") == "vision");
  CHECK(report.at("groups")[2].at("layers").size() == 27);
  CHECK(report.at("groups")[2].at("prefill").at("query").at("domain") == "encoder");
  CHECK(report.at("groups")[2].at("decode").is_null());
  CHECK(report.at("groups")[1].at("layers") == nlohmann::json({5, 11, 17, 23, 29, 35, 41, 47, 53, 59}));
  CHECK(report.at("groups")[0].at("window") == 1024);
  CHECK(report.at("groups")[0].at("decode").at("query").at("seq_len_q") == 1);
  CHECK(report.at("assumptions").size() == 4);  // the stock install's is the last
  CHECK(report.at("assumptions")[3] ==
        "cuda_runtime=13.0, flashinfer=0.7.2, from a stock vllm@0.33.0 install: vllm==0.33.0 from PyPI requires "
        "flashinfer-python==0.7.2.post1 and torch==2.14.0, a CUDA 13.0 build (--no-stock: none)");
  CHECK(json.err.empty());  // the assumptions are in the JSON, not on stderr
  // An encoder–decoder model: its decoder's self- and cross-attention, and the audio encoder.
  const auto whisper =
      run({"plan", "--model-config", dir + "whisper-large-v3.json", "--platform", "cuda", "--arch", "9.0"});
  REQUIRE(whisper.status == 0);
  CHECK(whisper.out.find("whisper: 32 layers in 3 groups\nfull (32 layers: 0-31)\n") == 0);
  CHECK(whisper.out.find("\ncross (32 layers: 0-31)\n  prefill: FLASH_ATTN\n  decode: FLASH_ATTN\n") !=
        std::string::npos);
  CHECK(whisper.out.find("\naudio encoder (32 layers: 0-31)\n  encoder: FLASH_ATTN\n") != std::string::npos);
  const auto audio = run({"select", "--model-config", dir + "whisper-large-v3.json", "--model-part", "audio",
                          "--platform", "cuda", "--arch", "9.0", "--json"});
  REQUIRE(audio.status == 0);
  CHECK(nlohmann::json::parse(audio.out).at("query").at("attn_type") == "encoder");
  // --backend-per-kind: one kind's override, in place of the decoder's; an unused kind is a note.
  const auto per_kind =
      run({"plan", "--model-config", dir + "gpt-oss-20b.json", "--platform", "cuda", "--arch", "9.0",
           "--backend-per-kind", "sliding=TRITON_ATTN", "--backend-per-kind", "chunked=FLASHINFER", "--json"});
  REQUIRE(per_kind.status == 0);
  const auto kinds = nlohmann::json::parse(per_kind.out);
  CHECK(kinds.at("groups")[0].at("prefill").at("backend") == "TRITON_ATTN");
  CHECK(kinds.at("groups")[0].at("prefill").at("override").at("spec") == "TRITON_ATTN");
  CHECK(kinds.at("groups")[1].at("prefill").at("backend") == "FLASH_ATTN");
  CHECK(kinds.at("notes") ==
        nlohmann::json({"the override for chunked layers (FLASHINFER) is unused: the model has none"}));
  const auto bad_kind = run({"plan", "--model-config", dir + "gpt-oss-20b.json", "--backend-per-kind", "slide=X"});
  CHECK(bad_kind.status == 2);
  CHECK(bad_kind.err.find("is not KIND=SPEC with KIND one of full, sliding") != std::string::npos);
  const auto twice = run({"plan", "--model-config", dir + "gpt-oss-20b.json", "--backend-per-kind", "full=X",
                          "--backend-per-kind", "full=Y"});
  CHECK(twice.status == 2);
  CHECK(twice.err.find("--backend-per-kind: full is given twice") != std::string::npos);
  const auto alone = run({"plan", "--backend-per-kind", "full=X"});
  CHECK(alone.status == 2);
  CHECK(alone.err.find("--backend-per-kind: needs --model-config") != std::string::npos);
  // A uniform model keeps the layer plan's output.
  const auto uniform = run({"plan", "--model-config", dir + "llama-3-8b.json", "--platform", "cuda", "--arch", "9.0"});
  CHECK(uniform.out.find("prefill: ") == 0);
}

TEST_CASE("plan --model-config of a model of hybrid layers only plans its attention and its mixer",
          "[cli][model_plan]") {
  // Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side; both are planned.
  const temp_file config(R"({"model_type": "falcon_h1", "num_attention_heads": 8, "num_key_value_heads": 2,
                              "head_dim": 128, "num_hidden_layers": 4, "torch_dtype": "bfloat16"})");
  const auto r = run({"plan", "--model-config", config.path, "--platform", "cuda", "--arch", "9.0", "--no-stock"});
  CHECK(r.status == 0);
  CHECK(r.out ==
        "falcon_h1: 4 layers in 2 groups\nfull (4 layers: 0-3)\n  prefill: FLASH_ATTN\n  decode: FLASH_ATTN\n"
        "linear (4 layers: 0-3)\n  prefill: MAMBA2_ATTN\n  decode: MAMBA2_ATTN\nblock_size: 16\n");
}

TEST_CASE("plan --model-config applies the engine's rules beyond one layer", "[cli][model_plan]") {
  const std::string dir = std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/";
  const std::vector<std::string> qwen = {
      "plan", "--model-config", dir + "qwen3.5-35b-a3b.json", "--platform", "cuda", "--arch", "9.0", "--json"};
  // vLLM 0.33.0 raises a hybrid model's block size until one page holds a linear layer's state.
  const auto on = run(qwen);
  REQUIRE(on.status == 0);
  const auto j = nlohmann::json::parse(on.out);
  CHECK(j.at("block_size") == 1088);
  CHECK(j.at("linear_state_bytes") == 2146304);
  CHECK(j.at("model_rule").is_null());
  CHECK(j.at("assumptions").dump().find("prefix caching on (vLLM's default for a hybrid model)") != std::string::npos);
  const auto off = nlohmann::json::parse(run(joined(qwen, {"--no-prefix-caching"})).out);
  CHECK(off.at("block_size") == 1056);
  CHECK(nlohmann::json::parse(run(joined(qwen, {"--kv-cache-dtype", "fp8"})).out).at("block_size") == 2112);
  // SGLang's catalog states no hybrid paging: the backends' own block size.
  CHECK(nlohmann::json::parse(run(joined(qwen, {"--catalog", "sglang"})).out).at("linear_state_bytes").is_null());
  // --no-prefix-caching is plan's, with a model config.
  CHECK(run({"select", "--no-prefix-caching"}).status == 2);
  const auto alone = run({"plan", "--no-prefix-caching"});
  CHECK(alone.status == 2);
  CHECK(alone.err.find("--no-prefix-caching: needs --model-config") != std::string::npos);
  // vLLM's Gemma 4 rule: on an A100 every attention layer runs TRITON_ATTN, and a note says why.
  const auto gemma =
      run({"plan", "--model-config", dir + "gemma-4-26b-a4b.json", "--platform", "cuda", "--arch", "8.0"});
  REQUIRE(gemma.status == 0);
  CHECK(gemma.out.find("full (5 layers: 5, 11, 17, 23, 29)\n  prefill: TRITON_ATTN\n  decode: TRITON_ATTN\n") !=
        std::string::npos);
  CHECK(squash(gemma.err).find("note: the engine forces TRITON_ATTN on every attention layer "
                               "(vllm-gemma4-mixed-heads-triton): vLLM 0.33.0") != std::string::npos);
  // A backend the user forces stands.
  const auto mine = run({"plan", "--model-config", dir + "gemma-4-26b-a4b.json", "--platform", "cuda", "--arch", "8.0",
                         "--backend", "FLEX_ATTENTION", "--json"});
  CHECK(nlohmann::json::parse(mine.out).at("model_rule").is_null());
}

TEST_CASE("a described platform has the catalog engine's stock install unless --no-stock", "[cli][stock]") {
  // pip install vllm==0.33.0 brings flashinfer-python: a stock vLLM on a B200 runs FlashInfer.
  const auto b200 = run({"select", "--platform", "cuda", "--arch", "10.0"});
  CHECK(b200.status == 0);
  CHECK(b200.out == "FLASHINFER\n");
  CHECK(b200.err ==
        "attnsel: note: assumed vllm@0.33.0's stock cuda_runtime=13.0, flashinfer=0.7.2 "
        "(--no-stock: none)\n");
  const auto bare = run({"select", "--platform", "cuda", "--arch", "10.0", "--no-stock"});
  CHECK(bare.out == "FLASH_ATTN\n");
  CHECK(bare.err.empty());
  // SGLang's wheel brings torch's CUDA 13.0 runtime: its H100 default is fa3 (is_hopper_with_cuda_12_3).
  CHECK(run({"select", "--catalog", "sglang", "--platform", "cuda", "--arch", "9.0"}).out == "FA3\n");
  CHECK(run({"select", "--catalog", "sglang", "--platform", "cuda", "--arch", "9.0", "--no-stock"}).out == "TRITON\n");
  // A component given keeps its version (a CUDA 12.2 runtime is below fa3's 12.3: SGLang's next default is
  // flashinfer), and nothing is noted when the platform already has every stock component.
  const auto old = run({"select", "--catalog", "sglang", "--platform", "cuda", "--arch", "9.0", "--component",
                        "cuda_runtime=12.2,flashinfer"});
  CHECK(old.out == "FLASHINFER\n");
  CHECK(old.err.empty());
  // explain shows the platform the answer is for; other vendors and catalogs without a stock install are as given.
  CHECK(run({"explain", "--platform", "cuda", "--arch", "10.0"}).out.find("cuda_runtime=13.0") != std::string::npos);
  CHECK(run({"select", "--platform", "xpu"}).err.empty());
  // vLLM's ROCm image brings AITER (installed, not switched on) and flash-attention: AITER's unified
  // attention (Triton kernels, no switch) serves sinks on MI300, and the vision tower runs flash-attention.
  const auto rocm = run({"select", "--platform", "rocm", "--arch", "gfx942", "--feature", "sinks"});
  CHECK(rocm.out == "ROCM_AITER_UNIFIED_ATTN\n");
  CHECK(squash(rocm.err).find("note: assumed vllm@0.33.0's stock aiter, flash_attn (--no-stock: none)") !=
        std::string::npos);
  CHECK(run({"select", "--platform", "rocm", "--arch", "gfx942", "--feature", "sinks", "--no-stock"}).out ==
        "TRITON_ATTN\n");
  CHECK(run({"select", "--platform", "rocm", "--arch", "gfx942", "--domain", "encoder"}).out == "FLASH_ATTN\n");
  CHECK(run({"select", "--platform", "rocm", "--arch", "gfx942", "--domain", "encoder", "--no-stock"}).out ==
        "TORCH_SDPA\n");
  CHECK(run({"select", "--catalog", "torch_sdpa", "--platform", "cuda", "--arch", "9.0"}).err.empty());
}
