// SPDX-License-Identifier: Apache-2.0
// Every layer of a model: config.json's layer kinds (tests/data/model_configs, rules cited in its
// RESEARCH.md) grouped by plan_model, each group selected in both phases.
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

std::vector<std::uint32_t> indices_where(const model_config& m, layer_kind kind) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < m.layers.size(); ++i)
    if (m.layers[i] == kind) out.push_back(i);
  return out;
}

model_plan plan_on_h100(const model_config& m) {
  const auto& reg = fixtures::catalog_registry("vllm");
  return plan_model(reg, m, m.to_query(), platform::cuda(9, 0));
}

const layer_group& group(const model_plan& plan, layer_kind kind) {
  for (const auto& g : plan.groups)
    if (g.kind == kind) return g;
  FAIL("no " << to_string(kind) << " group");
  return plan.groups.front();
}

std::string error_of(const std::string& text) {
  try {
    (void)parse_model_config(text, model_part::text, "config.json");
  } catch (const model_config_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("gpt-oss: layer_types alternate sliding (even) and full (odd) layers; only sliding ones ask for the window",
          "[model_plan]") {
  for (const char* file : {"gpt-oss-20b.json", "gpt-oss-120b.json"}) {
    INFO(file);
    const auto m = fixture(file);
    REQUIRE(!m.layers.empty());
    for (std::uint32_t i = 0; i < m.layers.size(); ++i)
      CHECK(m.layers[i] == (i % 2 == 0 ? layer_kind::sliding : layer_kind::full));
    CHECK(m.assumptions.empty());  // the config lists them
    const auto plan = plan_on_h100(m);
    REQUIRE(plan.groups.size() == 2);
    const auto& sliding = group(plan, layer_kind::sliding);
    const auto& full = group(plan, layer_kind::full);
    CHECK(sliding.window == 128);
    CHECK(sliding.layers == indices_where(m, layer_kind::sliding));
    CHECK(full.layers == indices_where(m, layer_kind::full));
    CHECK(full.window == 0);
    CHECK(sliding.plan.prefill_query.required.contains("sliding_window"));
    CHECK_FALSE(full.plan.prefill_query.required.contains("sliding_window"));
    // Sinks are in every layer.
    CHECK(sliding.plan.decode_query.required.contains("sinks"));
    CHECK(full.plan.decode_query.required.contains("sinks"));
    CHECK(full.plan.decode_query.seq_len_q == 1);
    CHECK(plan.ok());
  }
}

TEST_CASE("Gemma 3: without layer_types, every sixth layer is full and the reader says it assumed so", "[model_plan]") {
  const auto m = fixture("gemma-3-27b-it.json");
  REQUIRE(m.layers.size() == 62);
  const auto full = indices_where(m, layer_kind::full);
  CHECK(full == std::vector<std::uint32_t>{5, 11, 17, 23, 29, 35, 41, 47, 53, 59});
  CHECK(indices_where(m, layer_kind::sliding).size() == 52);
  // A multimodal Gemma 3 is a prefix-LM (vLLM's is_mm_prefix_lm): mm_prefix on every layer.
  CHECK(m.mm_prefix);
  REQUIRE(m.assumptions.size() == 3);
  CHECK(m.assumptions[0].find("prefix-LM") != std::string::npos);
  CHECK(m.assumptions[1].find("default 6") != std::string::npos);
  const auto small = fixture("gemma-3-1b-it.json");  // states sliding_window_pattern 6 itself; text only
  CHECK(indices_where(small, layer_kind::full) == std::vector<std::uint32_t>{5, 11, 17, 23});
  CHECK(small.assumptions.size() == 1);
  CHECK_FALSE(small.mm_prefix);
  const auto plan = plan_on_h100(m);
  CHECK(plan.groups.size() == 2);
  CHECK(group(plan, layer_kind::sliding).window == 1024);
  // vLLM routes an mm-prefix layer's prefill to TRITON_ATTN and its decode to FLASH_ATTN on Hopper.
  for (const auto& g : plan.groups) {
    CHECK(g.plan.prefill_query.required.contains("mm_prefix"));
    REQUIRE(g.plan.prefill.ok());
    CHECK(g.plan.prefill->name() == "TRITON_ATTN");
    CHECK(g.plan.decode->name() == "FLASH_ATTN");
  }
  CHECK(plan.assumptions == m.assumptions);
}

TEST_CASE("Gemma 2: even layers slide, odd layers are full", "[model_plan]") {
  const auto m = fixture("gemma-2-9b.json");
  REQUIRE(m.layers.size() == 42);
  for (std::uint32_t i = 0; i < m.layers.size(); ++i)
    CHECK(m.layers[i] == (i % 2 == 0 ? layer_kind::sliding : layer_kind::full));
  CHECK(m.assumptions.size() == 1);
}

TEST_CASE("Llama 4: chunked local layers, every fourth a NoPE layer with full attention", "[model_plan]") {
  const auto m = fixture("llama-4-scout-17b-16e-instruct.json");
  REQUIRE(m.layers.size() == 48);
  CHECK(m.chunk_size == 8192);
  CHECK(indices_where(m, layer_kind::full).size() == 12);
  CHECK(indices_where(m, layer_kind::chunked).size() == 36);
  CHECK(m.layers[3] == layer_kind::full);
  CHECK(m.layers[4] == layer_kind::chunked);
  const auto plan = plan_on_h100(m);
  CHECK(group(plan, layer_kind::chunked).window == 8192);
  // An explicit no_rope_layers list wins: 1 is a RoPE (chunked) layer, 0 a NoPE (full) one.
  const auto listed = parse_model_config(
      R"({"model_type": "llama4_text", "num_attention_heads": 8, "head_dim": 128, "num_hidden_layers": 3,
          "attention_chunk_size": 4096, "no_rope_layers": [0, 1, 1]})");
  CHECK(listed.layers == std::vector<layer_kind>{layer_kind::full, layer_kind::chunked, layer_kind::chunked});
  CHECK(listed.assumptions.empty());
}

TEST_CASE("Qwen3.5: linear-attention layers select in the linear domain, full ones in the decoder's", "[model_plan]") {
  const auto m = fixture("qwen3.5-35b-a3b.json");
  REQUIRE(m.layers.size() == 40);
  CHECK(indices_where(m, layer_kind::full).size() == 10);
  const auto plan = plan_on_h100(m);
  const auto& linear = group(plan, layer_kind::linear);
  CHECK(linear.plan.prefill_query.domain == attention_domain::linear);
  CHECK(linear.plan.prefill_query.mode == attention_mode::gated_delta);
  REQUIRE(linear.plan.prefill.ok());
  CHECK(linear.plan.prefill->name() == "GDN_ATTN");
  CHECK(group(plan, layer_kind::full).plan.decode_query.domain == attention_domain::decoder);
  // Qwen3-Next without layer_types: full every full_attention_interval (default 4) layers.
  const auto next = parse_model_config(
      R"({"model_type": "qwen3_next", "num_attention_heads": 16, "head_dim": 256, "num_hidden_layers": 8})");
  CHECK(next.layers == std::vector<layer_kind>{layer_kind::linear, layer_kind::linear, layer_kind::linear,
                                               layer_kind::full, layer_kind::linear, layer_kind::linear,
                                               layer_kind::linear, layer_kind::full});
  CHECK(next.assumptions.size() == 1);
}

TEST_CASE("Gemma 4: full layers ask with the global head size", "[model_plan]") {
  const auto m = fixture("gemma-4-26b-a4b.json");
  CHECK(m.global_head_size == 512);
  const auto plan = plan_on_h100(m);
  CHECK(group(plan, layer_kind::full).plan.prefill_query.head_size == 512);
  CHECK(group(plan, layer_kind::sliding).plan.prefill_query.head_size == m.head_size);
  CHECK(m.layers.back() == layer_kind::full);
}

TEST_CASE("uniform models plan as one group of every layer", "[model_plan]") {
  const auto llama = plan_on_h100(fixture("llama-3-8b.json"));
  REQUIRE(llama.groups.size() == 1);
  CHECK(llama.groups[0].kind == layer_kind::full);
  CHECK(llama.groups[0].layers.size() == 32);
  const auto mistral = plan_on_h100(fixture("mistral-7b-v0.1.json"));
  REQUIRE(mistral.groups.size() == 1);
  CHECK(mistral.groups[0].kind == layer_kind::sliding);
  CHECK(mistral.groups[0].window == 4096);
  // MLA: latent decode, per-head prefill (vLLM's MLA prefill selector).
  const auto deepseek = plan_on_h100(fixture("deepseek-v3.json"));
  REQUIRE(deepseek.groups.size() == 1);
  CHECK(deepseek.groups[0].plan.decode_query.head_size == 576);
  CHECK(deepseek.groups[0].plan.prefill_query.head_size == 192);
  CHECK(deepseek.ok());
  // No num_hidden_layers: one group, no layer list.
  const auto bare = parse_model_config(R"({"num_attention_heads": 8, "head_dim": 64})");
  CHECK(bare.layers.empty());
  CHECK(plan_on_h100(bare).groups.size() == 1);
}

TEST_CASE("a layer list that does not fit the model is an error naming the key", "[model_plan]") {
  const std::string head = R"({"num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 2, )";
  CHECK(error_of(head + R"("layer_types": ["full_attention"]})") ==
        "config.json: /layer_types: expected 2 entries (num_hidden_layers), got 1");
  CHECK(error_of(head + R"("layer_types": ["full_attention", "global"]})") ==
        "config.json: /layer_types/1: expected full_attention, sliding_attention, chunked_attention or "
        "linear_attention, got \"global\"");
  CHECK(error_of(head + R"("layer_types": "full_attention"})").find("/layer_types: expected an array") !=
        std::string::npos);
  CHECK(error_of(head + R"("layer_types": ["full_attention", "sliding_attention"]})") ==
        "config.json: /sliding_window: missing: the config has sliding-attention layers but no window");
  CHECK(error_of(head + R"("layer_types": ["chunked_attention", "full_attention"]})") ==
        "config.json: /attention_chunk_size: missing: the config has chunked-attention layers but no chunk size");
  CHECK(error_of(R"({"num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 0})") ==
        "config.json: /num_hidden_layers: expected an integer in [1, 65536], got 0");
  CHECK(error_of(R"({"model_type": "llama4_text", "num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 2,
                     "attention_chunk_size": 64, "no_rope_layers": [1, 2]})") ==
        "config.json: /no_rope_layers/1: expected 0 or 1, got 2");
}
