// SPDX-License-Identifier: Apache-2.0
// The mistakes people make with the CLI, each answered with the right value or the source of the problem.
#include "catch.hpp"
#include "cli_run.hpp"

#include <attnsel/core/devices.hpp>

#include <string>
#include <vector>

namespace {

cli_run::result run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
  return cli_run::run_clean(args, env);
}

using cli_run::squash;

struct mistake {
  std::vector<std::string> args;
  int status;             ///< expected exit status
  std::string out;        ///< expected stdout ("" for none)
  std::string err_names;  ///< stderr must contain this (after squashing blanks)
};

// Runs each mistake and checks its status, stdout and the words stderr must hold.
void check_all(const std::vector<mistake>& cases) {
  for (const auto& c : cases) {
    std::string line;
    for (const auto& a : c.args) line += a + " ";
    INFO(line);
    const auto r = run(c.args);
    CHECK(r.status == c.status);
    CHECK(r.out == c.out);
    CHECK(squash(r.err).find(c.err_names) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("device names and near-miss archs name the arch meant", "[cli][corrections]") {
  const std::vector<mistake> cases = {
      {{"select", "--arch", "h100"}, 0, "FLASH_ATTN\n", ""},
      {{"select", "--arch", "H100"}, 0, "FLASH_ATTN\n", ""},
      {{"select", "--arch", "NVIDIA_H100"}, 0, "FLASH_ATTN\n", ""},
      {{"select", "--arch", "mi300x"}, 0, "ROCM_ATTN\n", ""},
      {{"select", "--platform", "rocm", "--arch", "MI300X"}, 0, "ROCM_ATTN\n", ""},
      {{"select", "--arch", "90"}, 2, "", "did you mean '9.0'?"},
      {{"select", "--arch", "9"}, 2, "", "did you mean '9.0'?"},
      {{"select", "--arch", "100"}, 2, "", "did you mean '10.0'?"},
      {{"select", "--platform", "cuda", "--arch", "mi300x"}, 2, "", "is a rocm device (gfx942), not cuda"},
      {{"select", "--arch", "99.0"}, 2, "", "'99.0' is no CUDA compute capability a device has; known: 3.5"},
      {{"select", "--arch", "1.0"}, 2, "", "known: 3.5, 3.7, 5.0"},
      {{"select", "--arch", "gfx999"}, 2, "", "'gfx999' is no gfx target a device has; known: gfx900"},
  };
  check_all(cases);
}

TEST_CASE("every device of the table selects as its arch does", "[cli][corrections]") {
  for (const auto& d : attnsel::known_devices) {
    INFO(d.key);
    const auto by_name = run({"select", "--arch", std::string(d.key), "--json"});
    const auto by_arch = run({"select", "--arch", std::string(d.arch), "--json"});
    CHECK(by_name.status == by_arch.status);
    CHECK(by_name.out == by_arch.out);
  }
}

TEST_CASE("a vendor without an arch warns that capability gates reject", "[cli][corrections]") {
  const auto cuda = run({"select", "--platform", "cuda"});
  CHECK(cuda.status == 0);
  CHECK(squash(cuda.err).find("warning: --platform cuda without --arch") != std::string::npos);
  const auto rocm = run({"select", "--platform", "rocm"});
  CHECK(squash(rocm.err).find("give --arch (e.g. gfx942 or mi300x)") != std::string::npos);
  // cpu takes no arch: no warning.
  CHECK(run({"select", "--platform", "cpu"}).err.empty());
}

TEST_CASE("--dtype auto runs a float32 checkpoint in the platform's half type", "[cli][corrections]") {
  const std::string config = std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/gemma-2-9b.json";
  const auto dtype_of = [](const cli_run::result& r) {
    const auto at = r.out.find("\"dtype\": \"");
    return at == std::string::npos ? std::string() : r.out.substr(at + 10, r.out.find('"', at + 10) - at - 10);
  };
  // Ampere and newer: bfloat16; Turing has no bfloat16, and Gemma refuses float16: float32 stays.
  const auto hopper = run({"explain", "--arch", "h100", "--model-config", config, "--json"});
  CHECK(dtype_of(hopper) == "bfloat16");
  CHECK(squash(hopper.err).find("the float32 checkpoint runs in bfloat16") != std::string::npos);
  CHECK(dtype_of(run({"explain", "--arch", "t4", "--model-config", config, "--json"})) == "float32");
  // An explicit dtype wins; `auto` without a config is the platform's preferred dtype.
  CHECK(dtype_of(run({"explain", "--arch", "h100", "--model-config", config, "--dtype", "float32", "--json"})) ==
        "float32");
  CHECK(dtype_of(run({"explain", "--arch", "t4", "--dtype", "auto", "--json"})) == "float16");
  CHECK(dtype_of(run({"explain", "--arch", "h100", "--dtype", "AUTO", "--json"})) == "bfloat16");
}

TEST_CASE("unknown flags and features name the one meant", "[cli][corrections]") {
  const std::vector<mistake> cases = {
      {{"select", "--arch", "9.0", "--head-dim", "64"},
       2,
       "",
       "'--head-dim' is not a flag of 'attnsel select'; did you mean --head-size?"},
      {{"select", "--arch", "9.0", "--num-attention-heads", "8"}, 2, "", "did you mean --num-heads?"},
      {{"select", "--arch", "9.0", "--head-sise", "64"}, 2, "", "did you mean --head-size?"},
      {{"select", "--arch", "9.0", "--feature", "sink"},
       2,
       "",
       "'sink' is not a feature of this catalog; did you mean 'sinks'?"},
      {{"select", "--arch", "9.0", "--kv-cache-dtype", "fp8e4m3"}, 2, "", "did you mean fp8_e4m3?"},
      {{"select", "--arch", "9.0", "--dtype", "bfloat61"}, 2, "", "did you mean bfloat16?"},
      {{"select", "--arch", "9.0", "--catalog", "sglnag"},
       1,
       "",
       "unknown catalog name 'sglnag'; did you mean 'sglang'?"},
      // vLLM's flag, and argparse's underscore spelling of it, mean --backend.
      {{"select", "--arch", "9.0", "--attention-backend", "TRITON_ATTN"}, 0, "TRITON_ATTN\n", ""},
      {{"select", "--arch", "9.0", "--attention_backend", "TRITON_ATTN"}, 0, "TRITON_ATTN\n", ""},
      {{"select", "--arch", "9.0", "--head_size", "64"}, 0, "FLASH_ATTN\n", ""},
  };
  check_all(cases);
}

TEST_CASE("another engine's backend name points to this catalog's", "[cli][corrections]") {
  const std::vector<mistake> cases = {
      {{"select", "--arch", "9.0", "--backend", "FLASH_ATTENTION"},
       1,
       "",
       "Did you mean FLASH_ATTN? ('FLASH_ATTENTION' is the torch_sdpa catalog's name for FlashAttention"},
      {{"select", "--arch", "9.0", "--backend", "fa3"}, 1, "", "'fa3' is the sglang catalog's name for FlashAttention"},
      {{"select", "--catalog", "torch_sdpa", "--arch", "9.0", "--backend", "FLASH_ATTN"},
       1,
       "",
       "Did you mean FLASH_ATTENTION?"},
      {{"select", "--catalog", "sglang", "--arch", "9.0", "--backend", "TORCH_SDPA"},
       1,
       "",
       "Did you mean TORCH_NATIVE? ('TORCH_SDPA' is the vllm catalog's name for PyTorch SDPA"},
      {{"select", "--catalog", "sglang", "--arch", "9.0", "--backend", "FLASH_ATTN"}, 1, "", "Did you mean FA3?"},
  };
  check_all(cases);
}

TEST_CASE("the environment is named when it is the source", "[cli][corrections][override]") {
  const auto stale = run({"select", "--arch", "9.0"}, {"ATTNSEL_BACKEND=FLASHMLA"});
  CHECK(stale.status == 1);
  CHECK(squash(stale.err).find(
            "(the override came from $ATTNSEL_BACKEND='FLASHMLA'; unset it, or give --backend auto)") !=
        std::string::npos);
  // The same override given as a flag needs no such note.
  CHECK(run({"select", "--arch", "9.0", "--backend", "FLASHMLA"}).err.find("came from") == std::string::npos);

  const auto removed = run({"select", "--arch", "9.0"}, {"VLLM_ATTENTION_BACKEND=FLASHINFER"});
  CHECK(removed.status == 0);
  CHECK(removed.out == "FLASH_ATTN\n");
  CHECK(squash(removed.err).find("VLLM_ATTENTION_BACKEND='FLASHINFER' is ignored: vLLM removed the variable") !=
        std::string::npos);
}

TEST_CASE("head counts that imply GQA imply it, and contradictory ones are refused", "[cli][corrections]") {
  const std::vector<std::string> sdpa = {"explain", "--catalog", "torch_sdpa", "--arch", "9.0", "--json"};
  auto grouped = sdpa;
  grouped.insert(grouped.end(), {"--num-heads", "32", "--num-kv-heads", "8"});
  const auto implied = run(grouped);
  CHECK(implied.status == 0);
  CHECK(implied.out.find("\"gqa\"") != std::string::npos);
  CHECK(squash(implied.err).find("grouped-query attention: --feature gqa added") != std::string::npos);
  // Stated explicitly, the same query: the same answer.
  auto explicit_gqa = grouped;
  explicit_gqa.insert(explicit_gqa.end(), {"--feature", "gqa"});
  CHECK(run(explicit_gqa).out == implied.out);

  auto equal = sdpa;
  equal.insert(equal.end(), {"--num-heads", "32", "--num-kv-heads", "32", "--feature", "gqa"});
  const auto contradiction = run(equal);
  CHECK(contradiction.status == 2);
  CHECK(squash(contradiction.err).find("--feature gqa contradicts --num-heads 32 with --num-kv-heads 32") !=
        std::string::npos);
  // A catalog without a gqa feature (vLLM runs GQA everywhere) is not changed by head counts.
  const auto vllm = run({"explain", "--arch", "9.0", "--json", "--num-heads", "32", "--num-kv-heads", "8"});
  CHECK(vllm.out.find("\"gqa\"") == std::string::npos);
}
