// SPDX-License-Identifier: Apache-2.0
// Reading Hugging Face config.json files (tests/data/model_configs) into queries.
#include "builtin_registries.hpp"
#include "catch.hpp"

#include <attnsel/all.hpp>

#include <string>

using namespace attnsel;

namespace {

model_config fixture(const std::string& name, model_part part = model_part::text) {
  return read_model_config_file(std::string(ATTNSEL_SOURCE_DIR) + "/tests/data/model_configs/" + name, part);
}

std::string error_of(const std::string& text, model_part part = model_part::text) {
  try {
    (void)parse_model_config(text, part, "config.json");
  } catch (const model_config_error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("Llama-3-8B derives its head size from hidden_size and the head count", "[model_config]") {
  const auto c = fixture("llama-3-8b.json");
  CHECK(c.architecture == "LlamaForCausalLM");
  CHECK(c.head_size == 128);
  CHECK(c.head_size_v == 128);
  CHECK(c.num_heads == 32);
  CHECK(c.num_kv_heads == 8);
  CHECK(c.mode == attention_mode::standard);
  CHECK(c.dtype == data_type::bfloat16);
  CHECK(c.features().empty());
  const auto q = c.to_query({}, 4);
  CHECK(q.num_heads == 8);
  CHECK(q.head_size_v == 0);
}

TEST_CASE("Qwen2.5 with use_sliding_window false requires no sliding window", "[model_config]") {
  const auto c = fixture("qwen2.5-7b.json");
  CHECK(c.head_size == 128);
  CHECK(c.num_heads == 28);
  CHECK(c.num_kv_heads == 4);
  CHECK(c.sliding_window == 0);
  CHECK(c.features().empty());
  // tp 8 over 28 heads: 3.5 rounds up to 4 heads per rank
  CHECK(c.to_query({}, 8).num_heads == 4);
}

TEST_CASE("gpt-oss carries sinks and a sliding window, and an explicit head_dim", "[model_config]") {
  const auto c = fixture("gpt-oss-20b.json");
  CHECK(c.head_size == 64);  // head_dim, not 2880 / 64
  CHECK(c.num_kv_heads == 8);
  CHECK(c.sinks);
  CHECK(c.sliding_window == 128);
  CHECK(c.features() == std::vector<std::string>{"sliding_window", "sinks"});
  const auto q = c.to_query();
  CHECK(q.required.contains("sinks"));
  CHECK(q.required.contains("sliding_window"));
}

TEST_CASE("DeepSeek-V3 is MLA with a 192/128 head", "[model_config]") {
  const auto c = fixture("deepseek-v3.json");
  CHECK(c.mode == attention_mode::mla);
  CHECK(c.kv_lora_rank == 512);
  CHECK(c.qk_rope_head_dim == 64);
  CHECK(c.head_size == 192);
  CHECK(c.head_size_v == 128);
  CHECK(c.num_heads == 128);
  const auto q = c.to_query({}, 8);
  CHECK(q.mode == attention_mode::mla);
  CHECK(q.head_size == 576);  // the latent head: kv_lora_rank + qk_rope_head_dim
  CHECK(q.value_head_size() == 576);
  CHECK(q.num_heads == 16);
}

TEST_CASE("Gemma 2 asks for a sliding window and logit soft-capping in float32", "[model_config]") {
  const auto c = fixture("gemma-2-9b.json");
  CHECK(c.head_size == 256);
  CHECK(c.sliding_window == 4096);
  CHECK(c.softcap == 50.0);
  CHECK(c.dtype == data_type::float32);
  CHECK(c.features() == std::vector<std::string>{"sliding_window", "softcap"});
}

TEST_CASE("Qwen2-VL's vision tower is an encoder with head 80 from embed_dim", "[model_config]") {
  const auto text = fixture("qwen2-vl-7b-instruct.json");
  CHECK(text.head_size == 128);
  CHECK(text.section.empty());
  const auto vision = fixture("qwen2-vl-7b-instruct.json", model_part::vision);
  CHECK(vision.section == "/vision_config");
  CHECK(vision.head_size == 80);  // embed_dim 1280 / num_heads 16; its hidden_size 3584 is the LLM's
  CHECK(vision.num_heads == 16);
  CHECK(vision.dtype == data_type::bfloat16);  // inherited from the document
  const auto q = vision.to_query();
  CHECK(q.domain == attention_domain::encoder);
  CHECK(q.attn_type == attention_type::encoder_only);
}

TEST_CASE("text_config is read for the language model of a nested config", "[model_config]") {
  const auto c = parse_model_config(
      R"({"architectures": ["Gemma3ForConditionalGeneration"], "torch_dtype": "bfloat16",
          "text_config": {"model_type": "gemma3_text", "head_dim": 128, "num_attention_heads": 8,
                          "num_key_value_heads": 4, "sliding_window": 1024},
          "vision_config": {"hidden_size": 1152, "num_attention_heads": 16}})");
  CHECK(c.section == "/text_config");
  CHECK(c.model_type == "gemma3_text");
  CHECK(c.head_size == 128);
  CHECK(c.dtype == data_type::bfloat16);
  CHECK(c.sliding_window == 1024);
  const auto v =
      parse_model_config(R"({"vision_config": {"hidden_size": 1152, "num_attention_heads": 16}})", model_part::vision);
  CHECK(v.head_size == 72);
}

TEST_CASE("Malformed configs name the key at fault", "[model_config]") {
  CHECK(error_of(R"({"hidden_size": 4096})") ==
        "config.json: /num_attention_heads: missing: needed for the attention shape");
  CHECK(error_of(R"({"hidden_size": 4096, "num_attention_heads": "32"})") ==
        "config.json: /num_attention_heads: expected an integer in [1, 65536], got \"32\"");
  CHECK(error_of(R"({"hidden_size": 4000, "num_attention_heads": 48})") ==
        "config.json: /hidden_size: expected a multiple of num_attention_heads (48) to derive the head size, got 4000");
  CHECK(error_of(R"({"head_dim": 128, "num_attention_heads": 32, "num_key_value_heads": 5})") ==
        "config.json: /num_key_value_heads: expected a divisor of num_attention_heads (32), got 5");
  CHECK(error_of(R"({"head_dim": 128, "num_attention_heads": 32, "torch_dtype": "float64"})") ==
        "config.json: /torch_dtype: expected \"float16\", \"bfloat16\" or \"float32\", got \"float64\"");
  CHECK(error_of(R"({"num_attention_heads": 32, "kv_lora_rank": 512, "qk_rope_head_dim": 64})") ==
        "config.json: /qk_nope_head_dim: missing: needed for the attention shape");
  CHECK(error_of(R"({"head_dim": 128, "num_attention_heads": 32})", model_part::vision) ==
        "config.json: /vision_config: missing: the vision part needs a vision_config object");
  CHECK(error_of(R"({"text_config": {"head_dim": 64, "num_attention_heads": true}})") ==
        "config.json: /text_config/num_attention_heads: expected an integer in [1, 65536], got true");
  CHECK(error_of(R"([1, 2])") == "config.json: /: expected a JSON object (a Hugging Face config.json), got [1,2]");
  CHECK(error_of(R"({"a": 1, "a": 2})").find("config.json") == 0);  // repeated keys, from the shared JSON reader
  CHECK_THROWS_AS(read_model_config_file("/nonexistent/config.json"), model_config_error);
}

TEST_CASE("A model config answers SGLang's choice for the model", "[model_config][sglang]") {
  const auto& reg = fixtures::catalog_registry("sglang");
  auto hopper = platform::cuda(9, 0);
  hopper.add_component_spec("cuda_runtime=12.8").add_component("flashinfer");
  CHECK(select(reg, fixture("llama-3-8b.json").to_query(), hopper)->name() == "FA3");
  CHECK(select(reg, fixture("deepseek-v3.json").to_query({}, 8), hopper)->name() == "FA3_MLA");
  auto ampere = platform::cuda(8, 0);
  ampere.add_component_spec("cuda_runtime=12.8").add_component("flashinfer");
  CHECK(select(reg, fixture("gemma-2-9b.json").to_query(query{}), ampere)->name() == "TRITON");  // float32
  CHECK(select(reg, fixture("gpt-oss-20b.json").to_query(), ampere)->name() == "TRITON");        // sinks
  CHECK(select(reg, fixture("qwen2.5-7b.json").to_query(), ampere)->name() == "FLASHINFER");
  CHECK(select(reg, fixture("qwen2-vl-7b-instruct.json", model_part::vision).to_query(), ampere)->name() ==
        "TRITON_ATTN");
}

TEST_CASE("auto_dtype runs a checkpoint as vLLM's --dtype auto does", "[model_config][dtype]") {
  const auto hopper = platform::cuda(9, 0);
  const auto turing = platform::cuda(7, 5);
  const auto pascal = platform::cuda(6, 0);
  const auto maxwell = platform::cuda(5, 2);
  // float32 checkpoints run in the platform's first supported dtype.
  CHECK(auto_dtype(hopper, data_type::float32) == data_type::bfloat16);
  CHECK(auto_dtype(turing, data_type::float32) == data_type::float16);
  CHECK(auto_dtype(pascal, data_type::float32) == data_type::float16);
  CHECK(auto_dtype(maxwell, data_type::float32) == data_type::float32);
  CHECK(auto_dtype(platform::rocm("gfx942"), data_type::float32) == data_type::bfloat16);
  CHECK(auto_dtype(platform::cpu(), data_type::float32) == data_type::bfloat16);
  // A half dtype the platform has is kept; one it lacks falls back to the preferred one.
  CHECK(auto_dtype(hopper, data_type::float16) == data_type::float16);
  CHECK(auto_dtype(turing, data_type::bfloat16) == data_type::float16);
  CHECK(auto_dtype(turing, data_type::float16) == data_type::float16);
  // vLLM never runs Gemma 2/3 or GLM-4 in float16: on Turing they stay float32.
  CHECK(auto_dtype(turing, data_type::float32, "gemma2") == data_type::float32);
  CHECK(auto_dtype(turing, data_type::bfloat16, "gemma3_text") == data_type::float32);
  CHECK(auto_dtype(hopper, data_type::float16, "glm4") == data_type::bfloat16);
  CHECK(auto_dtype(turing, data_type::float32, "llama") == data_type::float16);
  // No stated dtype is read as float32 (the engine would load the weights as they are).
  CHECK(auto_dtype(hopper, std::nullopt) == data_type::bfloat16);
  // The Gemma 2 fixture (float32) on Hopper: bfloat16, as the CLI's --model-config gives it.
  const auto gemma = fixture("gemma-2-9b.json");
  CHECK(auto_dtype(hopper, gemma.dtype, gemma.model_type) == data_type::bfloat16);
}

TEST_CASE("An MLA config whose latent head the query could not carry is refused at its key", "[model_config]") {
  // Each key is within bounds; the sum a query's head size would carry (65600) is not (Query refuses it).
  const std::string mla = R"({"num_attention_heads": 16, "kv_lora_rank": 65536, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 128, "v_head_dim": 128})";
  CHECK(error_of(mla) ==
        "config.json: /kv_lora_rank: kv_lora_rank + qk_rope_head_dim, the latent head size, is "
        "65600, above the head-size limit 65536");
  CHECK(error_of(R"({"num_attention_heads": 16, "kv_lora_rank": 512, "qk_rope_head_dim": 64,
    "qk_nope_head_dim": 65536, "v_head_dim": 128})") ==
        "config.json: /qk_nope_head_dim: qk_nope_head_dim + qk_rope_head_dim is 65600, above the head-size limit "
        "65536");
}

TEST_CASE("NaN and Infinity in keys attnsel never reads are accepted; in a key it reads, refused", "[model_config]") {
  // transformers' save_pretrained writes Python's json, which spells NaN and Infinity.
  const auto c = parse_model_config(R"({"head_dim": 128, "num_attention_heads": 32, "rope_scaling": {"factor": NaN},
    "layer_norm_eps": -Infinity, "initializer_range": Infinity, "note": "NaN stays text", "list": [NaN, 1]})");
  CHECK(c.head_size == 128);
  CHECK(error_of(R"({"head_dim": NaN, "num_attention_heads": 32})") ==
        "config.json: /head_dim: expected an integer in [1, 65536], got NaN");
  CHECK(error_of(R"({"head_dim": 128, "num_attention_heads": 32, "attn_logit_softcapping": Infinity})") ==
        "config.json: /attn_logit_softcapping: expected a number >= 0 or null, got Infinity");
  CHECK(error_of(R"({"head_dim": 128, "num_attention_heads": 32, "model_type": NaN})") ==
        "config.json: /model_type: expected a string, got NaN");
  CHECK(error_of("NaN").find("not JSON text") != std::string::npos);  // a document, not a value in it
}

TEST_CASE("A dtype the caller states makes the config's dtype keys unread", "[model_config]") {
  const std::string text = R"({"head_dim": 128, "num_attention_heads": 32, "torch_dtype": "float8_e4m3fn"})";
  CHECK(error_of(text).find("/torch_dtype") != std::string::npos);
  const auto c = parse_model_config(text, model_part::text, "config.json", model_dtype_keys::ignore);
  CHECK_FALSE(c.dtype.has_value());
  CHECK(c.head_size == 128);
}
