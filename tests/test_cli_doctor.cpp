// SPDX-License-Identifier: Apache-2.0
// CLI tests of detection: `attnsel doctor`, detected platforms in select/explain, `--no-detect`, implied components.
#include "catch.hpp"
#include "cli_run.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <attnsel/catalog/reference.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using run_result = cli_run::result;
using cli_run::shell_quote;

// Runs the tool with `args`; `env` entries ("VAR=value") are set, the engine switches unset otherwise.
run_result run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  std::string command =
      "env -u ATTNSEL_BACKEND -u ATTNSEL_ENCODER_BACKEND -u NO_COLOR -u VLLM_ROCM_USE_AITER "
      "-u TORCH_CUDNN_SDPA_DEPRIORITIZED";
  for (const auto& e : env) command += " " + shell_quote(e);
  return cli_run::run_in(command, args);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const nlohmann::json* fact(const nlohmann::json& facts, const std::string& name) {
  for (const auto& f : facts)
    if (f["fact"] == name) return &f;
  return nullptr;
}

const nlohmann::json& catalog_entry(const nlohmann::json& report, const std::string& name) {
  for (const auto& c : report["catalogs"])
    if (c["name"] == name) return c;
  FAIL("no catalog " << name);
  return report;
}

}  // namespace

TEST_CASE("doctor --json reports every fact with a source and each built-in catalog's backends", "[cli][doctor]") {
  const auto r = run({"doctor", "--json"});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  for (const auto& f : j["facts"]) {
    CHECK(f["source"].is_string());
    CHECK_FALSE(f["source"].get<std::string>().empty());
  }
  REQUIRE(fact(j["facts"], "cpu.arch") != nullptr);
  REQUIRE(j["catalogs"].size() == attnsel::builtin_catalog_names.size());
  const auto vllm = catalog_entry(j, "vllm");  // copies: gcc 13 flags a reference as dangling
  const auto sdpa = catalog_entry(j, "torch_sdpa");
  // Every backend of each catalog is in exactly one of the two lists.
  CHECK(vllm["runs"].size() + vllm["cannot_run"].size() == attnsel::reference_registry().size());
  CHECK(sdpa["runs"].size() + sdpa["cannot_run"].size() == attnsel::torch_sdpa_registry().size());
  for (const auto& c : vllm["cannot_run"]) {
    REQUIRE_FALSE(c["reasons"].empty());
    const auto code = c["reasons"][0]["code"].get<std::string>();
    CHECK((code == "platform" || code == "capability" || code == "component"));
  }
  if (!j["gpu"].get<bool>()) {
    // The machine the suite runs on has no GPU: the CPU backends run, the GPU ones do not.
    CHECK(j["platform"]["vendor"] == "cpu");
    CHECK(contains(j["summary"].get<std::string>(), "NO GPU FOUND"));
    bool cpu_attn = false;
    for (const auto& b : vllm["runs"]) cpu_attn = cpu_attn || b["backend"] == "CPU_ATTN";
    CHECK(cpu_attn);
    bool flash_rejected = false;
    for (const auto& b : vllm["cannot_run"])
      if (b["backend"] == "FLASH_ATTN") flash_rejected = b["reasons"][0]["code"] == "platform";
    CHECK(flash_rejected);
    bool math = false;
    for (const auto& b : sdpa["runs"]) math = math || b["backend"] == "MATH";
    CHECK(math);
  }
}

TEST_CASE("doctor without a GPU says so plainly and lists the CPU facts; exit 0", "[cli][doctor]") {
  const auto j = nlohmann::json::parse(run({"doctor", "--json"}).out);
  const auto r = run({"doctor"});
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "facts (name, value, source):"));
  CHECK(contains(r.out, "cpu.arch"));
  CHECK(contains(r.out, "catalog vllm:"));
  CHECK(contains(r.out, "catalog torch_sdpa:"));
  CHECK(contains(r.out, "cannot run:"));
  if (!j["gpu"].get<bool>()) {
    CHECK(contains(r.out, "gpu:      NO GPU FOUND"));
    struct stat st {};
    if (::stat("/dev/nvidia0", &st) != 0) CHECK(contains(r.out, "not found: libcuda.so.1"));
  }
  CHECK(r.err.empty());
}

TEST_CASE("doctor --library-dir finds cuDNN in torch's lib directory", "[cli][doctor]") {
  const auto r = run({"doctor", "--json", "--library-dir", ATTNSEL_FAKE_TORCH_LIB});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto* cudnn = fact(j["facts"], "cudnn.version");
  REQUIRE(cudnn != nullptr);
  CHECK((*cudnn)["value"] == "9.19.0");
  CHECK(contains((*cudnn)["source"].get<std::string>(), std::string("cudnnGetVersion via ") + ATTNSEL_FAKE_TORCH_LIB));
  bool listed = false;
  for (const auto& c : j["platform"]["components"])
    listed = listed || (c["name"] == "cudnn" && c["version"] == "9.19.0");
  CHECK(listed);
}

TEST_CASE("doctor passes --component to the engine switches", "[cli][doctor]") {
  const auto r = run({"doctor", "--json", "--component", "aiter"}, {"VLLM_ROCM_USE_AITER=1"});
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto* sw = fact(j["facts"], "switch.aiter_enabled");
  REQUIRE(sw != nullptr);
  if (j["platform"]["vendor"] != "rocm") {
    CHECK_FALSE((*sw)["found"].get<bool>());
    CHECK(contains((*sw)["source"].get<std::string>(), "for rocm, this platform is"));
  }
  REQUIRE(fact(j["facts"], "component.aiter") != nullptr);
}

TEST_CASE("doctor refuses malformed flags with status 2", "[cli][doctor]") {
  for (const auto& args : std::vector<std::vector<std::string>>{{"doctor", "--device", "x"},
                                                                {"doctor", "--device", "5000"},
                                                                {"doctor", "--component", "Bad Name"},
                                                                {"doctor", "--colour"}}) {
    const auto r = run(args);
    CHECK(r.status == 2);
    CHECK(contains(r.err, "attnsel: usage error:"));
    CHECK(r.out.empty());
  }
}

TEST_CASE("explain without --platform shows where each fact came from; --no-detect turns it off", "[cli][doctor]") {
  const auto detected = run({"explain", "--domain", "encoder"});
  CHECK(contains(detected.out, "detected (--no-detect turns this off"));
  CHECK(contains(detected.out, "cpu.arch"));
  const auto plain = run({"explain", "--no-detect", "--domain", "encoder"});
  CHECK(plain.status == 0);
  CHECK_FALSE(contains(plain.out, "detected ("));
  CHECK(contains(plain.out, "platform:  cpu"));

  const auto j = nlohmann::json::parse(run({"explain", "--json"}).out);
  REQUIRE(j.contains("detection"));
  CHECK(fact(j["detection"], "cpu.arch") != nullptr);
  const auto none = nlohmann::json::parse(run({"explain", "--json", "--no-detect", "--component", "flashinfer"}).out);
  CHECK_FALSE(none.contains("detection"));
  CHECK(none["platform"]["vendor"] == "cpu");
  CHECK(none["platform"]["components"] == nlohmann::json::parse(R"([{"name": "flashinfer", "version": null}])"));
  // An explicit platform probes nothing either.
  CHECK_FALSE(nlohmann::json::parse(run({"explain", "--json", "--platform", "cuda", "--arch", "9.0"}).out)
                  .contains("detection"));
}

TEST_CASE("explain shows the components a catalog implies and selects as vLLM does", "[cli][doctor]") {
  // --no-stock: the stock ROCm install has AITER already, which the closure would not add.
  const std::vector<std::string> args{"explain",     "--platform",   "rocm",        "--arch",   "gfx942",
                                      "--no-stock",  "--component",  "aiter_mha",   "--domain", "encoder",
                                      "--attn-type", "encoder_only", "--head-size", "64"};
  const auto r = run(args);
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "implied:   aiter_enabled (from aiter_mha), aiter (from aiter_enabled)"));
  CHECK(contains(r.out, "selected:  ROCM_AITER_FA"));
  auto json_args = args;
  json_args.push_back("--json");
  const auto j = nlohmann::json::parse(run(json_args).out);
  CHECK(j["backend"] == "ROCM_AITER_FA");
  CHECK(j["implied"][0] == nlohmann::json({{"component", "aiter_enabled"}, {"because", "aiter_mha"}}));
}

TEST_CASE("doctor --device past the visible GPUs says the index is out of range, not that no GPU exists",
          "[cli][doctor]") {
  // The fake libcuda.so.1 lists two devices: 0 is sm_90 ("Fake H200"), 1 is sm_86 ("Fake A10").
  const std::vector<std::string> env = {std::string("LD_LIBRARY_PATH=") + ATTNSEL_FAKE_DRIVER_LIB,
                                        "CUDA_VISIBLE_DEVICES=0,1"};
  const auto second = run({"doctor", "--device", "1"}, env);
  REQUIRE(second.status == 0);
  CHECK(contains(second.out, "gpu:      cuda 8.6 (Fake A10)"));

  const auto r = run({"doctor", "--device", "7"}, env);
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "gpu:      DEVICE INDEX OUT OF RANGE (device index 7 is out of range: 2 visible device(s))"));
  CHECK_FALSE(contains(r.out, "NO GPU FOUND"));
  const auto j = nlohmann::json::parse(run({"doctor", "--json", "--device", "7"}, env).out);
  CHECK_FALSE(j["gpu"].get<bool>());
  CHECK(contains(j["summary"].get<std::string>(), "2 visible device(s)"));
  CHECK(j["platform"]["vendor"] == "cpu");
}

TEST_CASE("doctor --library-dir with a FIFO named like cuDNN refuses it instead of hanging", "[cli][doctor]") {
  char dir_template[] = "/tmp/attnsel_fifo_XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  REQUIRE(dir != nullptr);
  const std::string lib = std::string(dir) + "/libcudnn.so.9";
  REQUIRE(::mkfifo(lib.c_str(), 0600) == 0);
  // `timeout` makes a regression (dlopen blocking on the FIFO) fail with 124 instead of hanging the suite.
  const auto r = cli_run::run_in("timeout 60 env -u ATTNSEL_BACKEND -u ATTNSEL_ENCODER_BACKEND",
                                 {"doctor", "--json", "--library-dir", dir});
  std::remove(lib.c_str());
  ::rmdir(dir);
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  bool refused = false;
  for (const auto& f : j["facts"])
    refused = refused || (f["fact"] == "cudnn.version" &&
                          contains(f["source"].get<std::string>(), "libcudnn.so.9 is a FIFO, not a regular file"));
  CHECK(refused);
}

TEST_CASE("doctor's cuDNN fact is what this machine's loader finds, stated either way", "[cli][doctor]") {
  // A machine may carry a real cuDNN (the CUDA toolkit's, on the loader's path) or none: the test asks
  // the loader itself first and states the answer it expects for that case, so neither kind of
  // machine changes what is checked.
  void* handle = ::dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_LOCAL);
  const bool loadable = handle != nullptr && ::dlsym(handle, "cudnnGetVersion") != nullptr;
  if (handle != nullptr) ::dlclose(handle);
  const auto j = nlohmann::json::parse(run({"doctor", "--json"}).out);
  const auto* cudnn = fact(j["facts"], "cudnn.version");
  REQUIRE(cudnn != nullptr);
  INFO((*cudnn).dump());
  CHECK((*cudnn)["found"].get<bool>() == loadable);
  bool component = false;
  for (const auto& c : j["platform"]["components"]) component = component || c["name"] == "cudnn";
  CHECK(component == loadable);
  if (loadable) {
    CHECK(contains((*cudnn)["source"].get<std::string>(), "cudnnGetVersion via libcudnn.so.9"));
  } else {
    CHECK(contains((*cudnn)["source"].get<std::string>(), "not found"));
  }
  // A cuDNN on a CPU platform runs nothing: the CPU answer is the same with or without it.
  CHECK(run({"select", "--no-detect"}).out == run({"select"}).out);
}
