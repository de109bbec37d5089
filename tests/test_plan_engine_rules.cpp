// SPDX-License-Identifier: Apache-2.0
// The engine's rules beyond one layer in a model plan: a model rule (vLLM's Gemma 4 backend) and the block
// size that holds a hybrid model's linear state (vLLM's hybrid paging). The expected figures are vLLM
// 0.33.0's own, as tools/oracle/plan_rules.py runs it (scripts/oracle.sh): its Gemma4Config and its
// update_block_size_for_backend on the real models built on the meta device.
#include "builtin_registries.hpp"
#include "catch.hpp"

#include <attnsel/all.hpp>

#include <string>
#include <vector>

using namespace attnsel;

namespace {

model_config fixture(const std::string& name) {
  return read_model_config_file(std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/" + name);
}

const catalog_info& vllm_info() {
  static const catalog c = builtin_catalog("vllm");
  return c.info;
}

const layer_group& group(const model_plan& plan, layer_kind kind) {
  for (const auto& g : plan.groups)
    if (g.kind == kind) return g;
  FAIL("no " << to_string(kind) << " group");
  return plan.groups.front();
}

model_plan plan_with_engine(const model_config& m, const platform& p, query q, const override_set& overrides = {},
                            std::optional<bool> prefix_caching = std::nullopt, std::uint32_t tp = 1) {
  model_plan_options options;
  options.engine = &vllm_info();
  options.prefix_caching = prefix_caching;
  options.tensor_parallel = tp;
  return plan_model(fixtures::catalog_registry("vllm"), m, q, p, overrides, {}, options);
}

// ai21labs/Jamba-v0.1 and nvidia/NVIDIA-Nemotron-Nano-9B-v2: the keys their vLLM model classes read.
const char* const jamba = R"({"architectures": ["JambaForCausalLM"], "model_type": "jamba", "torch_dtype": "bfloat16",
  "attn_layer_offset": 4, "attn_layer_period": 8, "hidden_size": 4096, "num_hidden_layers": 32,
  "num_attention_heads": 32, "num_key_value_heads": 8, "mamba_d_conv": 4, "mamba_d_state": 16, "mamba_expand": 2})";
const char* const nemotron = R"({"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
  "torch_dtype": "bfloat16", "hidden_size": 4480, "num_hidden_layers": 56,
  "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
  "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "mamba_num_heads": 128,
  "mamba_head_dim": 80, "n_groups": 8, "ssm_state_size": 128, "conv_kernel": 4})";

}  // namespace

TEST_CASE("Gemma 4 in vLLM: TRITON_ATTN on every layer where FlashAttention 4 is not available", "[model_plan]") {
  const auto m = fixture("gemma-4-26b-a4b.json");
  REQUIRE(m.architecture == "Gemma4ForConditionalGeneration");
  struct row {
    platform p;
    const char* rule;
    bool forced;
  };
  const row rows[] = {
      {platform::cuda(8, 0), "vllm-gemma4-mixed-heads-triton", true},  // A100: no FA4
      {platform::cuda(12, 0), "vllm-gemma4-mixed-heads-triton", true},
      {platform::rocm("gfx942"), "vllm-gemma4-mixed-heads-triton", true},
      {platform::cpu(), "vllm-gemma4-mixed-heads-triton", true},
      {platform::cuda(9, 0), "vllm-gemma4-mixed-heads-fa4", false},
      {platform::cuda(10, 0), "vllm-gemma4-mixed-heads-fa4", false},
      {platform::xpu(), "vllm-gemma4-mixed-heads-xpu", false},
  };
  for (const auto& r : rows) {
    INFO(to_string(r.p));
    const auto plan = plan_with_engine(m, r.p, m.to_query());
    CHECK(plan.model_rule == r.rule);
    for (const auto& g : plan.groups) {
      if (g.kind == layer_kind::encoder) continue;  // the vision tower reads its own override
      CHECK((g.overrides.decoder.source == override_source::engine) == r.forced);
      if (r.forced) CHECK(g.overrides.decoder.spec == "TRITON_ATTN");
    }
    const auto said = std::string(r.forced ? "the engine forces TRITON_ATTN on every attention layer ("
                                           : "the engine keeps each attention layer's own backend (") +
                      r.rule + ")";
    REQUIRE(!plan.notes.empty());
    CHECK(plan.notes.front().rfind(said, 0) == 0);
  }
  // On the A100 the forced backend serves both groups; on the CPU vLLM runs its own in its place.
  const auto a100 = plan_with_engine(m, platform::cuda(8, 0), m.to_query());
  REQUIRE(group(a100, layer_kind::full).plan.decode.ok());
  CHECK(group(a100, layer_kind::full).plan.decode->name() == "TRITON_ATTN");
  CHECK(group(a100, layer_kind::sliding).plan.decode->name() == "TRITON_ATTN");
  // A backend the user forces stands: vLLM's rule runs only where attention_config.backend is unset.
  override_set mine;
  mine.decoder = override_request{"FLEX_ATTENTION", override_source::flag};
  const auto forced = plan_with_engine(m, platform::cuda(8, 0), m.to_query(), mine);
  CHECK(forced.model_rule.empty());
  CHECK(group(forced, layer_kind::full).overrides.decoder.spec == "FLEX_ATTENTION");
  CHECK(plan_with_engine(m, platform::cuda(9, 0), m.to_query(), mine).model_rule.empty());
  CHECK(plan_with_engine(m, platform::cuda(9, 0), m.to_query(), mine).notes.empty());
  // Without the engine's rules (a plan of the registry alone) nothing is forced.
  const auto bare = plan_model(fixtures::catalog_registry("vllm"), m, m.to_query(), platform::cuda(8, 0));
  CHECK(bare.model_rule.empty());
  CHECK(group(bare, layer_kind::full).overrides.decoder.spec.empty());
}

TEST_CASE("Gemma 4 in SGLang: trtllm_mha on SM100 with CUDA 12.8 or newer, triton elsewhere, any head sizes",
          "[model_plan]") {
  const auto m = fixture("gemma-4-26b-a4b.json");
  static const catalog sglang = builtin_catalog("sglang");
  const auto plan_on = [&](const platform& p) {
    model_plan_options options;
    options.engine = &sglang.info;
    return plan_model(fixtures::catalog_registry("sglang"), m, m.to_query(), p, {}, {}, options);
  };
  auto b200 = platform::cuda(10, 0);
  b200.add_component("cuda_runtime", parse_component_version("13.0"));
  const auto on_b200 = plan_on(b200);
  CHECK(on_b200.model_rule == "sglang-gemma4-sm100-trtllm");
  CHECK(group(on_b200, layer_kind::sliding).overrides.decoder.spec == "TRTLLM_MHA");
  // Without a CUDA runtime SGLang's is_sm100 is false: triton.
  CHECK(plan_on(platform::cuda(10, 0)).model_rule == "sglang-gemma4-triton");
  auto old_runtime = platform::cuda(10, 0);
  old_runtime.add_component("cuda_runtime", parse_component_version("12.6"));
  CHECK(plan_on(old_runtime).model_rule == "sglang-gemma4-triton");
  const auto h100 = plan_on(platform::cuda(9, 0));
  CHECK(h100.model_rule == "sglang-gemma4-triton");
  CHECK(group(h100, layer_kind::full).overrides.decoder.spec == "TRITON");
  CHECK(group(h100, layer_kind::full).overrides.decoder.source == override_source::engine);
  // The rule is for every Gemma 4 model, whatever its head sizes; not for the CPU, whose hooks come later.
  auto same = m;
  same.global_head_size = m.head_size;
  model_plan_options options;
  options.engine = &sglang.info;
  CHECK(plan_model(fixtures::catalog_registry("sglang"), same, same.to_query(), platform::cuda(9, 0), {}, {}, options)
            .model_rule == "sglang-gemma4-triton");
  CHECK(plan_on(platform::cpu()).model_rule.empty());
}

TEST_CASE("a model rule holds only for its architectures, for layers whose head sizes differ, within its head size",
          "[model_plan]") {
  auto m = fixture("gemma-4-26b-a4b.json");
  const auto a100 = platform::cuda(8, 0);
  // Gemma 3 has one head size: the rule is Gemma 4's and about mixed heads.
  const auto gemma3 = fixture("gemma-3-27b-it.json");
  CHECK(plan_with_engine(gemma3, a100, gemma3.to_query()).model_rule.empty());
  auto same = m;
  same.global_head_size = m.head_size;
  CHECK(plan_with_engine(same, a100, same.to_query()).model_rule.empty());
  auto other = m;
  other.architecture = "Gemma3ForConditionalGeneration";
  CHECK(plan_with_engine(other, a100, other.to_query()).model_rule.empty());
  // Heads over 512 are beyond FA4: on the H100 the FA4 rule no longer holds and Triton's does.
  auto wide = m;
  wide.global_head_size = 640;
  CHECK(plan_with_engine(wide, platform::cuda(9, 0), wide.to_query()).model_rule == "vllm-gemma4-mixed-heads-triton");
}

TEST_CASE("the linear state of each family, in bytes per layer and rank, as vLLM sizes its pages", "[model_plan]") {
  // vLLM 0.33.0's MambaSpec page sizes (unpadded) for these configs, bf16 model, auto cache dtypes.
  const auto qwen = fixture("qwen3.5-35b-a3b.json");
  REQUIRE(qwen.state.known());
  CHECK(qwen.state.ssm_dtype == data_type::float32);  // the config's mamba_ssm_dtype
  CHECK(qwen.state.bytes(data_type::bfloat16, 1) == 2146304);
  CHECK(qwen.state.bytes(data_type::bfloat16, 2) == 1073152);
  const auto j = parse_model_config(jamba);
  CHECK(j.linear_mode == attention_mode::mamba1);
  CHECK(j.state.bytes(data_type::bfloat16, 1) == 311296);
  CHECK(j.state.bytes(data_type::bfloat16, 2) == 155648);
  const auto n = parse_model_config(nemotron);
  CHECK(n.state.ssm_dtype == data_type::float32);  // NemotronHForCausalLMConfig's default
  CHECK(n.state.bytes(data_type::bfloat16, 1) == 5316608);
  CHECK(n.state.bytes(data_type::bfloat16, 2) == 2658304);
  // One group on two ranks: each rank keeps the group (extra_groups_for_head_shards).
  auto one_group = n.state;
  one_group.conv_groups = 1;
  CHECK(one_group.bytes(data_type::bfloat16, 2) ==
        ((one_group.conv_channels + 2 * one_group.conv_group_channels) / 2 * 3 * 2 + 64 * 80 * 128 * 4));
  // A key the family needs is missing: the state is unknown, and says which key.
  const auto partial = parse_model_config(R"({"model_type": "jamba", "num_attention_heads": 8, "head_dim": 64,
    "hidden_size": 512, "num_hidden_layers": 8, "mamba_expand": 2, "mamba_d_conv": 4})");
  CHECK(!partial.state.known());
  CHECK(partial.state.unknown == "mamba_d_state absent (vLLM 0.33.0 jamba.py reads it)");
  CHECK(partial.state.bytes(data_type::bfloat16, 1) == 0);
  // A dense model has no linear state at all.
  CHECK(!fixture("llama-3-8b.json").state.known());
  CHECK(fixture("llama-3-8b.json").state.unknown.empty());
  // A state key of another value leaves the state unknown, saying which; config.json stays readable.
  const auto odd = parse_model_config(R"({"model_type": "qwen3_5_text", "num_attention_heads": 8, "head_dim": 64,
      "num_hidden_layers": 4, "linear_num_key_heads": 4, "linear_num_value_heads": 8, "linear_key_head_dim": 32,
      "linear_value_head_dim": 32, "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "int8"})");
  CHECK(!odd.state.known());
  CHECK(
      odd.state.unknown ==
      R"(mamba_ssm_dtype is "int8", not "float32", "bfloat16", "float16" or "auto" (vLLM 0.33.0 qwen3_5.py reads it))");
  const auto fractional = parse_model_config(R"({"model_type": "falcon_h1", "num_attention_heads": 8, "head_dim": 64,
      "num_hidden_layers": 2, "hidden_size": 512, "mamba_expand": 1.5, "mamba_n_heads": 8, "mamba_d_head": 64,
      "mamba_n_groups": 1, "mamba_d_state": 16, "mamba_d_conv": 4})");
  CHECK(fractional.state.unknown ==
        "mamba_expand is 1.5, not an integer in [1, 2^24] (vLLM 0.33.0 falcon_h1.py reads it)");
  // "auto": the model's dtype, as vLLM's MambaDType "auto" (Nemotron-H's float32 is for an absent key).
  auto nemotron_auto = nlohmann::json::parse(nemotron);
  nemotron_auto["mamba_ssm_cache_dtype"] = "auto";
  CHECK(!parse_model_config(nemotron_auto.dump()).state.ssm_dtype.has_value());
  // Zamba2 without attention_head_dim: 2 x hidden_size / heads, as transformers' Zamba2Config sets it.
  CHECK(parse_model_config(R"({"model_type": "zamba2", "hidden_size": 2560, "num_attention_heads": 32,
      "num_hidden_layers": 2})")
            .head_size == 160);
}

TEST_CASE("hybrid models: the block size grows until one attention page holds a linear layer's state", "[model_plan]") {
  const auto h100 = platform::cuda(9, 0);
  const auto qwen = fixture("qwen3.5-35b-a3b.json");
  const auto q = qwen.to_query();
  // vLLM 0.33.0, H100, its default FLASH_ATTN: prefix caching on aligns to the gated delta-rule
  // layers' 64-token checkpoints.
  const auto on = plan_with_engine(qwen, h100, q);
  CHECK(on.block_size == 1088);
  CHECK(on.linear_state_bytes == 2146304);
  CHECK(on.ok());
  REQUIRE(!on.assumptions.empty());
  CHECK(on.assumptions.back().rfind("prefix caching on (vLLM's default for a hybrid model)", 0) == 0);
  CHECK(plan_with_engine(qwen, h100, q, {}, false).block_size == 1056);
  // Stated, prefix caching is no assumption.
  const auto stated = plan_with_engine(qwen, h100, q, {}, true);
  CHECK(stated.block_size == 1088);
  CHECK(stated.assumptions.size() + 1 == on.assumptions.size());
  auto fp8 = q;
  fp8.kv_cache_dtype = cache_dtype::fp8;
  CHECK(plan_with_engine(qwen, h100, fp8).block_size == 2112);
  CHECK(plan_with_engine(qwen, h100, fp8, {}, false).block_size == 2096);
  CHECK(plan_with_engine(qwen, h100, qwen.to_query({}, 2), {}, std::nullopt, 2).block_size == 1088);
  // On an A100 vLLM's gated delta-rule prefill is Triton's: no 64-token alignment.
  CHECK(plan_with_engine(qwen, platform::cuda(8, 0), q).block_size == 1056);
  // Mamba-1 and Mamba-2 families (no checkpoint alignment).
  const auto j = parse_model_config(jamba);
  CHECK(plan_with_engine(j, h100, j.to_query()).block_size == 80);
  auto j8 = j.to_query();
  j8.kv_cache_dtype = cache_dtype::fp8;
  CHECK(plan_with_engine(j, h100, j8).block_size == 160);
  const auto n = parse_model_config(nemotron);
  CHECK(plan_with_engine(n, h100, n.to_query()).block_size == 1312);
  CHECK(plan_with_engine(n, h100, n.to_query({}, 2), {}, std::nullopt, 2).block_size == 1312);
  // Zamba2 (transformers' default config): its shared attention's head is attention_head_dim, 160.
  const auto zamba = parse_model_config(R"({"model_type": "zamba2", "torch_dtype": "bfloat16", "hidden_size": 2560,
    "num_attention_heads": 32, "num_key_value_heads": 32, "attention_head_dim": 160, "mamba_expand": 2,
    "mamba_ngroups": 1, "n_mamba_heads": 8, "mamba_headdim": 640, "mamba_d_state": 64, "mamba_d_conv": 4,
    "layers_block_type": ["linear_attention", "hybrid", "linear_attention", "hybrid"]})");
  CHECK(zamba.head_size == 160);
  CHECK(zamba.state.bytes(data_type::bfloat16, 1) == 686848);
  CHECK(plan_with_engine(zamba, h100, zamba.to_query()).block_size == 48);
  auto z8 = zamba.to_query();
  z8.kv_cache_dtype = cache_dtype::fp8;
  CHECK(plan_with_engine(zamba, h100, z8).block_size == 80);
  CHECK(plan_with_engine(zamba, h100, zamba.to_query({}, 2), {}, std::nullopt, 2).block_size == 48);
  // The attention backends' own block size without the engine's paging, or where the state is unknown.
  CHECK(plan_model(fixtures::catalog_registry("vllm"), qwen, q, h100).block_size == 16);
  const auto partial = parse_model_config(R"({"model_type": "jamba", "num_attention_heads": 8, "head_dim": 64,
    "hidden_size": 512, "num_hidden_layers": 8, "mamba_expand": 2, "mamba_d_conv": 4})");
  const auto unknown = plan_with_engine(partial, h100, partial.to_query());
  CHECK(unknown.block_size == 16);
  CHECK(unknown.linear_state_bytes == 0);
  CHECK(std::find(unknown.notes.begin(), unknown.notes.end(),
                  "the KV-cache block size is the attention backends' own, not raised to hold a linear layer's "
                  "state: mamba_d_state absent (vLLM 0.33.0 jamba.py reads it)") != unknown.notes.end());
}

TEST_CASE("model rules and hybrid paging round-trip through the catalog writer, and bad ones are refused",
          "[catalog]") {
  for (const char* name : {"vllm", "sglang"}) {
    INFO(name);
    const auto c = builtin_catalog(name);
    REQUIRE(c.info.model_rules.size() == (std::string(name) == "vllm" ? 3u : 2u));
    CHECK(c.info.hybrid_pages.has_value() == (std::string(name) == "vllm"));
    const auto doc = to_json(c);
    CHECK(doc.at("version") == 2);
    CHECK(parse_catalog(doc) == c);
  }
  const auto error_of = [](const std::string& text) -> std::string {
    try {
      (void)parse_catalog_text(text, "c.json");
    } catch (const catalog_error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string head = R"({"format": "attnsel-catalog", "version": 2, "name": "t", "backends": [{"name": "A",
    "domains": ["decoder"]}], )";
  CHECK(error_of(head + R"("model_rules": [{"id": "r", "architectures": ["X"], "force": "B", "because": "."}]})")
            .find("/model_rules/0/force: unknown backend \"B\"") != std::string::npos);
  CHECK(error_of(head + R"("model_rules": [{"id": "R R", "architectures": ["X"], "because": "."}]})")
            .find("/model_rules/0/id") != std::string::npos);
  CHECK(error_of(head + R"("model_rules": [{"id": "r", "architectures": [], "because": "."}]})")
            .find("/model_rules/0/architectures") != std::string::npos);
  CHECK(error_of(head + R"("model_rules": [{"id": "r", "architectures": ["X"], "because": "."},
    {"id": "r", "architectures": ["Y"], "because": "."}]})")
            .find("/model_rules/1/id: the id r is used twice") != std::string::npos);
  CHECK(error_of(head + R"("hybrid_pages": {"checkpoint_alignments": [{"linear_modes": ["standard"],
    "platforms": [{"vendor": "cuda"}], "tokens": 64}], "because": "."}})")
            .find("/hybrid_pages/checkpoint_alignments/0/linear_modes/0: expected a linear layer's mode") !=
        std::string::npos);
  // "any" platforms: every platform, written back as "any".
  const auto anywhere = parse_catalog_text(head + R"("hybrid_pages": {"checkpoint_alignments": [{"linear_modes":
    ["mamba2"], "platforms": "any", "tokens": 64}], "because": "."}})");
  CHECK(anywhere.info.hybrid_pages->checkpoint_alignments.at(0).platforms.empty());
  CHECK(to_json(anywhere)["hybrid_pages"]["checkpoint_alignments"][0]["platforms"] == "any");
  CHECK(parse_catalog(to_json(anywhere)) == anywhere);
  CHECK(error_of(head + R"("hybrid_pages": {"checkpoint_alignments": [{"linear_modes": ["gated_delta"],
    "platforms": [{"vendor": "cuda"}], "tokens": 0}], "because": "."}})")
            .find("/hybrid_pages/checkpoint_alignments/0/tokens") != std::string::npos);
  CHECK(error_of(R"({"format": "attnsel-catalog", "version": 1, "name": "t", "backends": [{"name": "A",
    "domains": ["decoder"]}], "model_rules": []})")
            .find("/model_rules: this key needs catalog version 2") != std::string::npos);
}
