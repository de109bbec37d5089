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
  REQUIRE(plan.groups.size() == 3);  // sliding, full, and the SigLIP vision tower
  CHECK(group(plan, layer_kind::sliding).window == 1024);
  CHECK(plan.groups[2].part == model_part::vision);
  CHECK_FALSE(plan.groups[2].plan.prefill_query.required.contains("mm_prefix"));
  // vLLM routes an mm-prefix layer's prefill to TRITON_ATTN and its decode to FLASH_ATTN on Hopper.
  for (const auto& g : plan.groups) {
    if (g.part != model_part::text) continue;
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
        "config.json: /layer_types/1: expected one of full_attention, attention, indexed_attention, "
        "deepseek_sparse_attention, sliding_attention, chunked_attention, linear_attention, mamba, conv, hybrid, "
        "mlp, moe, got \"global\"");
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

TEST_CASE("Whisper: decoder self-attention, cross-attention over every decoder layer, and the audio encoder",
          "[model_plan]") {
  // vLLM 0.34 models/whisper.py (RESEARCH.md "Whisper"): decoder layers (decoder_layers,
  // decoder_attention_heads) attend causally with a paged cache and across to the encoder
  // (AttentionType.ENCODER_DECODER); encoder layers (encoder_layers) are an AttentionType.ENCODER tower.
  const auto m = fixture("whisper-large-v3.json");
  CHECK(m.num_heads == 20);
  CHECK(m.head_size == 64);  // d_model 1280 / 20
  CHECK(m.cross_attention);
  CHECK(m.layers == std::vector<layer_kind>(32, layer_kind::full));
  REQUIRE(m.towers.size() == 1);
  const auto& audio = m.towers[0];
  CHECK(audio.part == model_part::audio);
  CHECK(audio.layers == std::vector<layer_kind>(32, layer_kind::encoder));
  CHECK(audio.num_heads == 20);
  CHECK(audio.head_size == 64);

  const auto plan = plan_on_h100(m);
  REQUIRE(plan.groups.size() == 3);
  const auto& self = plan.groups[0];
  CHECK(self.kind == layer_kind::full);
  CHECK(self.plan.prefill_query.attn_type == attention_type::decoder);
  const auto& cross = plan.groups[1];
  CHECK(cross.kind == layer_kind::cross);
  CHECK(cross.part == model_part::text);
  CHECK(cross.layers == self.layers);
  CHECK(cross.plan.prefill_query.attn_type == attention_type::encoder_decoder);
  CHECK(cross.plan.decode_query.seq_len_q == 1);
  const auto& encoder = plan.groups[2];
  CHECK(encoder.kind == layer_kind::encoder);
  CHECK(encoder.part == model_part::audio);
  CHECK(encoder.layers.size() == 32);
  CHECK(encoder.plan.prefill_query.domain == attention_domain::encoder);
  CHECK(encoder.plan.prefill_query.attn_type == attention_type::encoder);
  for (const auto& g : plan.groups) CHECK(g.ok());
  CHECK(plan.ok());
  // The checkpoint's float16 stays (vLLM keeps a supported non-float32 dtype); the tower runs in it too.
  CHECK(encoder.plan.prefill_query.dtype == data_type::float16);

  // The audio part on its own, and its absence named.
  const auto alone = read_model_config_file(
      std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/whisper-large-v3.json", model_part::audio);
  CHECK(alone.to_query().attn_type == attention_type::encoder);
  CHECK(alone.to_query().domain == attention_domain::encoder);
  try {
    (void)parse_model_config(R"({"num_attention_heads": 8, "head_dim": 64})", model_part::audio, "config.json");
    FAIL("no error");
  } catch (const model_config_error& e) {
    CHECK(e.pointer() == "/audio_config");
  }
  CHECK(error_of(R"({"is_encoder_decoder": true, "decoder_attention_heads": 0, "d_model": 64})") ==
        "config.json: /decoder_attention_heads: expected an integer in [1, 65536], got 0");
  CHECK(error_of(R"({"is_encoder_decoder": "yes", "decoder_attention_heads": 2, "d_model": 64})") ==
        "config.json: /is_encoder_decoder: expected true or false, got \"yes\"");
}

TEST_CASE("a vision tower is a group of the plan, in the model's dtype and sharded like the text layers",
          "[model_plan]") {
  const auto m = fixture("qwen2-vl-7b-instruct.json");
  REQUIRE(m.towers.size() == 1);
  const auto& vision = m.towers[0];
  CHECK(vision.part == model_part::vision);
  CHECK(vision.layers.size() == 32);  // vision_config.depth
  const auto& reg = fixtures::catalog_registry("vllm");
  query base;
  base.dtype = data_type::bfloat16;
  const auto tp4 = m.to_query(base, 4);
  model_plan_options four_ranks;
  four_ranks.tensor_parallel = 4;
  const auto plan = plan_model(reg, m, tp4, platform::cuda(9, 0), {}, {}, four_ranks);
  const auto& tower = plan.groups.back();
  CHECK(tower.kind == layer_kind::encoder);
  CHECK(tower.part == model_part::vision);
  CHECK(tower.plan.prefill_query.domain == attention_domain::encoder);
  CHECK(tower.plan.prefill_query.attn_type == attention_type::encoder_only);
  CHECK(tower.plan.prefill_query.head_size == vision.head_size);
  CHECK(tower.plan.prefill_query.num_heads == vision.num_heads / 4);
  CHECK(tower.plan.prefill_query.dtype == data_type::bfloat16);
  CHECK(tower.plan.prefill_query.required.empty());  // the text layers' features stay with them
  // 16 heads over 8 ranks, however the text layers' 28 round: the tower's own division.
  CHECK(tower_query(vision, tp4, 8).num_heads == 2);
  query call = tp4;
  call.seq_len_q = 4096;
  call.batch_size = 8;
  CHECK(tower_query(vision, call, 4).seq_len_q == 0);  // the text call's lengths are not the tower's
  CHECK(tower_query(vision, call, 4).batch_size == 0);
  // A tower is planned as one of the text part's towers, never on its own.
  CHECK_THROWS_AS(plan_model(reg, vision, vision.to_query(), platform::cuda(9, 0)), std::invalid_argument);
  CHECK(tower.ok());
  // Only paged groups share the block size: the tower's answer never makes a conflict.
  CHECK(plan.conflicts.empty());

  // A tower the reader refuses leaves the text part readable, and the plan says it left it out.
  const auto broken = parse_model_config(
      R"({"num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 2, "vision_config": {"hidden_size": 64}})");
  CHECK(broken.towers.empty());
  REQUIRE(broken.assumptions.size() == 1);
  CHECK(broken.assumptions[0] ==
        "the vision tower is left out of the plan: /vision_config/num_attention_heads: missing: needed for the "
        "attention shape");
  CHECK(plan_on_h100(broken).assumptions == broken.assumptions);
}

TEST_CASE("per-kind overrides: a group reads its kind's own in place of its domain's, phases still win",
          "[model_plan]") {
  // vLLM's get_attn_backend: backend_per_kind.get(kind, backend); --attention-decode-backend wins for decode.
  const auto m = fixture("gpt-oss-20b.json");
  const auto& reg = fixtures::catalog_registry("vllm");
  const override_request triton{"TRITON_ATTN", override_source::api};
  const model_plan_options sliding_triton{{{layer_kind::sliding, triton}}};
  const auto plan = plan_model(reg, m, m.to_query(), platform::cuda(9, 0), {}, {}, sliding_triton);
  const auto& sliding = group(plan, layer_kind::sliding);
  const auto& full = group(plan, layer_kind::full);
  REQUIRE(sliding.plan.prefill.ok());
  CHECK(sliding.plan.prefill->name() == "TRITON_ATTN");
  CHECK(sliding.plan.prefill->overridden);
  CHECK(sliding.overrides.decoder.spec == "TRITON_ATTN");
  CHECK(full.plan.prefill->name() == "FLASH_ATTN");
  CHECK_FALSE(full.plan.prefill->overridden);
  CHECK(plan.notes.empty());

  override_set decode_flash;
  decode_flash.decode = override_request{"FLASH_ATTN", override_source::api};
  const auto phases = plan_model(reg, m, m.to_query(), platform::cuda(9, 0), decode_flash, {}, sliding_triton);
  CHECK(group(phases, layer_kind::sliding).plan.prefill->name() == "TRITON_ATTN");
  CHECK(group(phases, layer_kind::sliding).plan.decode->name() == "FLASH_ATTN");

  // A kind the model lacks is a note; a kind named twice is refused; a linear or tower kind replaces its
  // own domain's override.
  const model_plan_options chunked{{{layer_kind::chunked, triton}}};
  const auto unused = plan_model(reg, m, m.to_query(), platform::cuda(9, 0), {}, {}, chunked);
  REQUIRE(unused.notes.size() == 1);
  CHECK(unused.notes[0] == "the override for chunked layers (TRITON_ATTN) is unused: the model has none");
  const model_plan_options twice{{{layer_kind::full, triton}, {layer_kind::full, triton}}};
  CHECK_THROWS_AS(plan_model(reg, m, m.to_query(), platform::cuda(9, 0), {}, {}, twice), std::invalid_argument);
  const auto whisper = fixture("whisper-large-v3.json");
  const model_plan_options tower{{{layer_kind::encoder, override_request{"TORCH_SDPA", override_source::api}}}};
  const auto audio = plan_model(reg, whisper, whisper.to_query(), platform::cuda(9, 0), {}, {}, tower);
  REQUIRE(audio.groups.back().plan.prefill.ok());
  CHECK(audio.groups.back().plan.prefill->name() == "TORCH_SDPA");
  CHECK(group(audio, layer_kind::cross).plan.prefill->name() == "FLASH_ATTN");
  const auto qwen = fixture("qwen3.5-35b-a3b.json");
  const model_plan_options linear{{{layer_kind::linear, override_request{"GDN_ATTN", override_source::api}}}};
  const auto gdn = plan_model(reg, qwen, qwen.to_query(), platform::cuda(9, 0), {}, {}, linear);
  CHECK(group(gdn, layer_kind::linear).overrides.linear.spec == "GDN_ATTN");
  // vLLM reads no override for linear layers (the mamba_type fixes the kernel): the catalog's policy says
  // so, and the forced name falls back to the automatic walk, which the linear slot's override reached.
  CHECK(group(gdn, layer_kind::linear).plan.prefill->fell_back);
  CHECK(group(gdn, layer_kind::full).overrides.linear.spec.empty());
  CHECK(parse_layer_kind("cross") == layer_kind::cross);
  CHECK_FALSE(parse_layer_kind("Cross").has_value());
}

TEST_CASE("families without layer_types: gpt-oss, Cohere2 and Qwen3.5 by their rules; others named, never silent",
          "[model_plan]") {
  // vLLM gpt_oss.py: sliding_window on even layers; transformers configuration_gpt_oss.py agrees.
  const auto gpt_oss = parse_model_config(R"({"model_type": "gpt_oss", "num_attention_heads": 8, "head_dim": 64,
                                              "num_hidden_layers": 4, "sliding_window": 128})");
  CHECK(gpt_oss.layers ==
        std::vector<layer_kind>{layer_kind::sliding, layer_kind::full, layer_kind::sliding, layer_kind::full});
  // transformers configuration_cohere2.py: sliding_window_pattern, default 4.
  const auto cohere = parse_model_config(R"({"model_type": "cohere2", "num_attention_heads": 8, "head_dim": 64,
                                             "num_hidden_layers": 8, "sliding_window": 4096})");
  CHECK(indices_where(cohere, layer_kind::full) == std::vector<std::uint32_t>{3, 7});
  // Qwen3.5 (and any config with full_attention_interval): linear layers, every interval-th full.
  const auto qwen35 = parse_model_config(
      R"({"model_type": "qwen3_5_text", "num_attention_heads": 16, "head_dim": 256, "num_hidden_layers": 4})");
  CHECK(qwen35.layers ==
        std::vector<layer_kind>{layer_kind::linear, layer_kind::linear, layer_kind::linear, layer_kind::full});
  const auto interval = parse_model_config(R"({"model_type": "new_hybrid", "num_attention_heads": 16, "head_dim": 256,
                                               "num_hidden_layers": 4, "full_attention_interval": 2})");
  CHECK(indices_where(interval, layer_kind::full) == std::vector<std::uint32_t>{1, 3});

  // A window without a rule attnsel knows, or a hybrid's keys without a layer list: the assumption says so.
  const auto olmo3 = parse_model_config(R"({"model_type": "olmo3", "num_attention_heads": 8, "head_dim": 64,
                                            "num_hidden_layers": 4, "sliding_window": 4096})");
  CHECK(olmo3.layers == std::vector<layer_kind>(4, layer_kind::sliding));
  REQUIRE(olmo3.assumptions.size() == 1);
  CHECK(olmo3.assumptions[0] ==
        "layer_types absent, and attnsel knows no per-layer rule for model_type 'olmo3': every layer taken as "
        "sliding (window 4096); list layer_types in config.json if its layers differ");
  const auto zamba = parse_model_config(R"({"model_type": "zamba", "num_attention_heads": 8, "head_dim": 64,
                                            "num_hidden_layers": 4, "attn_layer_period": 6})");
  REQUIRE(zamba.assumptions.size() == 1);
  CHECK(zamba.assumptions[0].find("(attn_layer_period): every layer taken as full") != std::string::npos);
  // Mistral's window covers every layer, and a Gemma 3 without a window is uniform by its own rule: no
  // assumption to name.
  CHECK(fixture("mistral-7b-v0.1.json").assumptions.empty());
  const auto no_window = parse_model_config(R"({"model_type": "gemma3_text", "num_attention_heads": 8,
                                                "head_dim": 64, "num_hidden_layers": 4, "sliding_window_pattern": 6})");
  CHECK(no_window.layers == std::vector<layer_kind>(4, layer_kind::full));
  CHECK(no_window.assumptions.empty());
  // A top-level encoder is an audio tower only when it reads audio (Whisper's num_mel_bins).
  const auto bart = parse_model_config(R"({"is_encoder_decoder": true, "decoder_attention_heads": 16, "d_model": 1024,
                                           "decoder_layers": 2, "encoder_attention_heads": 16, "encoder_layers": 2})");
  CHECK(bart.cross_attention);
  CHECK(bart.towers.empty());
}

namespace {

model_config hybrid(const std::string& model_type, const std::string& extra, std::uint32_t layers = 8) {
  return parse_model_config(R"({"model_type": ")" + model_type +
                            R"(", "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128,
                              "num_hidden_layers": )" +
                            std::to_string(layers) + (extra.empty() ? "" : ", " + extra) + "}");
}

}  // namespace

TEST_CASE("Nemotron-H: hybrid_override_pattern's Mamba-2, attention and MLP layers", "[model_plan]") {
  // Nemotron Nano 4B's published pattern (42 layers): M Mamba-2, * attention, - MLP (vLLM nemotron_h.py).
  const std::string pattern = "M-M-M-MM-M-M*-M-M*-M-M-M*-M-M-MM*-MMM-M-M-";
  const auto m = hybrid("nemotron_h", R"("hybrid_override_pattern": ")" + pattern + R"(")", 42);
  REQUIRE(m.layers.size() == 42);
  CHECK(indices_where(m, layer_kind::full) == std::vector<std::uint32_t>{12, 17, 24, 32});
  CHECK(indices_where(m, layer_kind::linear).size() == 21);
  CHECK(indices_where(m, layer_kind::mlp).size() == 17);
  CHECK(m.linear_mode == attention_mode::mamba2);
  CHECK(m.assumptions.empty());
  const auto plan = plan_on_h100(m);
  REQUIRE(plan.groups.size() == 2);  // the MLP layers are in no group
  const auto& linear = group(plan, layer_kind::linear);
  CHECK(linear.plan.prefill_query.mode == attention_mode::mamba2);
  REQUIRE(linear.plan.prefill.ok());
  CHECK(linear.plan.prefill->name() == "MAMBA2_ATTN");
  CHECK(group(plan, layer_kind::full).layers == std::vector<std::uint32_t>{12, 17, 24, 32});
  REQUIRE(plan.notes.size() == 1);
  CHECK(plan.notes[0].rfind("17 layers have no attention or state, only an MLP or experts block, and no group: 1, "
                            "3, 5, 8, 10, 13",
                            0) == 0);
  // transformers 5.20 writes Nemotron-H's layers_block_type and no num_hidden_layers: the list counts them.
  const auto listed = parse_model_config(R"({"model_type": "nemotron_h", "num_attention_heads": 8, "head_dim": 64,
                                             "layers_block_type": ["linear_attention", "moe", "full_attention"]})");
  CHECK(listed.layers == std::vector<layer_kind>{layer_kind::linear, layer_kind::mlp, layer_kind::full});
  // Neither a count nor a list, but a state-space key: the plan is one group, and the reader says so.
  const auto uncounted = parse_model_config(
      R"({"model_type": "nemotron_h", "num_attention_heads": 8, "head_dim": 64, "mamba_num_heads": 64})");
  CHECK(uncounted.layers.empty());
  REQUIRE(uncounted.assumptions.size() == 1);
  CHECK(uncounted.assumptions[0] ==
        "num_hidden_layers absent, and attnsel knows no per-layer rule for model_type 'nemotron_h' though it has a "
        "key of layers that attend differently (mamba_num_heads): the plan is one group of every layer; give "
        "num_hidden_layers and layer_types");
  // The pattern is one character a layer, of those four.
  CHECK(error_of(R"({"model_type": "nemotron_h", "num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 3,
                    "hybrid_override_pattern": "M*"})") ==
        "config.json: /hybrid_override_pattern: expected 3 characters (num_hidden_layers), got 2");
  CHECK(error_of(R"({"model_type": "nemotron_h", "num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 2,
                    "hybrid_override_pattern": "MX"})")
            .find("/hybrid_override_pattern: expected only M (Mamba), * (attention), - (MLP) and E (experts); "
                  "character 1 of \"MX\" is not") != std::string::npos);
}

TEST_CASE("layer lists in every spelling transformers writes: Granite 4 hybrid, Nemotron 3, LFM2", "[model_plan]") {
  // Granite 4.0-H's config.json lists "mamba" and "attention" (transformers' legacy names, remapped by
  // configuration_utils.py's _LEGACY_LAYER_TYPE_REMAP).
  const auto granite = hybrid("granitemoehybrid", R"("layer_types": ["mamba", "mamba", "mamba", "attention"])", 4);
  CHECK(granite.layers ==
        std::vector<layer_kind>{layer_kind::linear, layer_kind::linear, layer_kind::linear, layer_kind::full});
  CHECK(granite.linear_mode == attention_mode::mamba2);
  // Nemotron 3 lists layers_block_type with mixture-of-experts layers.
  const auto nemotron3 =
      hybrid("nemotron_h", R"("layers_block_type": ["mamba", "moe", "attention", "moe", "mamba", "mlp"])", 6);
  CHECK(nemotron3.layers == std::vector<layer_kind>{layer_kind::linear, layer_kind::mlp, layer_kind::full,
                                                    layer_kind::mlp, layer_kind::linear, layer_kind::mlp});
  // LFM2: "conv" layers are short convolutions, and so are the layers full_attn_idxs leaves out.
  const auto lfm2 = hybrid("lfm2", R"("layer_types": ["conv", "conv", "full_attention", "conv"])", 4);
  CHECK(indices_where(lfm2, layer_kind::linear) == std::vector<std::uint32_t>{0, 1, 3});
  CHECK(lfm2.linear_mode == attention_mode::short_conv);
  const auto idxs = hybrid("lfm2", R"("full_attn_idxs": [2, 5])", 8);
  CHECK(indices_where(idxs, layer_kind::full) == std::vector<std::uint32_t>{2, 5});
  CHECK(idxs.linear_mode == attention_mode::short_conv);
  const auto plan = plan_on_h100(idxs);
  REQUIRE(group(plan, layer_kind::linear).plan.prefill.ok());
  CHECK(group(plan, layer_kind::linear).plan.prefill->name() == "SHORT_CONV_ATTN");
  // An entry of no kind attnsel knows names the accepted ones.
  CHECK(error_of(R"({"model_type": "x", "num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 2,
                    "layer_types": ["full_attention", "retention"]})")
            .find("/layer_types/1: expected one of full_attention, attention, ") != std::string::npos);
}

TEST_CASE("Jamba, Bamba, MiniMax: attention layers by period, index list or type list", "[model_plan]") {
  // transformers configuration_jamba.py: attention where i % attn_layer_period == attn_layer_offset
  // (defaults 8 and 4), Mamba-1 elsewhere (vLLM jamba.py MambaMixer).
  const auto jamba = hybrid("jamba", "", 16);
  CHECK(indices_where(jamba, layer_kind::full) == std::vector<std::uint32_t>{4, 12});
  CHECK(jamba.linear_mode == attention_mode::mamba1);
  REQUIRE(jamba.assumptions.size() == 1);
  CHECK(jamba.assumptions[0] ==
        "layer_types absent: Jamba's attention layers are those with i % 8 == 4, the others Mamba "
        "(transformers configuration_jamba.py)");
  CHECK(indices_where(hybrid("jamba", R"("attn_layer_period": 2, "attn_layer_offset": 0)", 4), layer_kind::full) ==
        std::vector<std::uint32_t>{0, 2});
  CHECK(error_of(R"({"model_type": "jamba", "num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 4,
                    "attn_layer_period": 2, "attn_layer_offset": 2})") ==
        "config.json: /attn_layer_offset: expected an integer in [0, 1], got 2");
  const auto bamba = hybrid("bamba", R"("attn_layer_indices": [3, 7])");
  CHECK(indices_where(bamba, layer_kind::full) == std::vector<std::uint32_t>{3, 7});
  CHECK(bamba.linear_mode == attention_mode::mamba2);
  CHECK(error_of(R"({"model_type": "bamba", "num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 4,
                    "attn_layer_indices": [1, 4]})") ==
        "config.json: /attn_layer_indices/1: expected an integer in [0, 3], got 4");
  // MiniMax-Text-01: attn_type_list, 0 lightning attention, 1 softmax attention.
  const auto minimax = hybrid("minimax_text_01", R"("attn_type_list": [0, 0, 0, 1])", 4);
  CHECK(minimax.layers ==
        std::vector<layer_kind>{layer_kind::linear, layer_kind::linear, layer_kind::linear, layer_kind::full});
  CHECK(minimax.linear_mode == attention_mode::lightning);
  CHECK(error_of(R"({"model_type": "minimax_text_01", "num_attention_heads": 8, "head_dim": 64, "num_hidden_layers": 2,
                    "attn_type_list": [0, 2]})") == "config.json: /attn_type_list/1: expected 0 or 1, got 2");
  CHECK(group(plan_on_h100(minimax), layer_kind::linear).plan.prefill_query.mode == attention_mode::lightning);
}

TEST_CASE("hybrid layers run attention and a mixer side by side: both groups hold them (Falcon-H1, Zamba2)",
          "[model_plan]") {
  const auto falcon = hybrid("falcon_h1", "", 4);
  CHECK(falcon.layers == std::vector<layer_kind>(4, layer_kind::hybrid));
  const auto plan = plan_on_h100(falcon);
  REQUIRE(plan.groups.size() == 2);
  CHECK(group(plan, layer_kind::full).layers == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(group(plan, layer_kind::linear).layers == std::vector<std::uint32_t>{0, 1, 2, 3});
  CHECK(group(plan, layer_kind::linear).plan.prefill_query.mode == attention_mode::mamba2);
  const auto zamba2 = hybrid("zamba2", R"("layers_block_type": ["mamba", "hybrid", "mamba", "hybrid"])", 4);
  const auto zplan = plan_on_h100(zamba2);
  CHECK(group(zplan, layer_kind::full).layers == std::vector<std::uint32_t>{1, 3});
  CHECK(group(zplan, layer_kind::linear).layers == std::vector<std::uint32_t>{0, 1, 2, 3});
  // Hybrid and MLP layers have no group of their own: an override cannot name them.
  model_plan_options options;
  options.per_kind.push_back({layer_kind::hybrid, {"FLASH_ATTN", override_source::api}});
  CHECK_THROWS_WITH(
      plan_model(fixtures::catalog_registry("vllm"), zamba2, zamba2.to_query(), platform::cuda(9, 0), {}, {}, options),
      "plan_model: a per-kind override names hybrid layers, which are in no group of their own; name "
      "one of full, sliding, chunked, linear, cross, encoder");
  CHECK(parse_group_kind("linear") == layer_kind::linear);
  CHECK_FALSE(parse_group_kind("mlp").has_value());
  CHECK(parse_layer_kind("mlp") == layer_kind::mlp);
  // A family whose mixer attnsel does not know: gated delta, named.
  const auto other = hybrid("new_hybrid", R"("layer_types": ["linear_attention", "full_attention"])", 2);
  CHECK(other.linear_mode == attention_mode::gated_delta);
  REQUIRE(other.assumptions.size() == 1);
  CHECK(other.assumptions[0].rfind("attnsel knows no linear-layer kind for model_type 'new_hybrid'", 0) == 0);
  CHECK(layer_runs({0, 1, 2, 4, 6, 7}) == "0-2, 4, 6, 7");
}
