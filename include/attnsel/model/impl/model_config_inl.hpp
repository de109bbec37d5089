// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for model_config.hpp: the Hugging Face config.json reader (the section's shape,
// dtype, features and towers here; the layer kinds in model/impl/model_config/layer_kinds.hpp).
#pragma once

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/catalog_error.hpp>
#include <attnsel/catalog/impl/catalog_file_inl.hpp>
#include <attnsel/model/impl/model_config/linear_state.hpp>
#include <attnsel/model/model_config.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Reads one part of a config.json: the text model, or its vision or audio tower.
class model_config_reader : public linear_state_reader {
 public:
  using linear_state_reader::linear_state_reader;

  model_config read(model_part part) {
    using nlohmann::json;
    if (!root_.is_object()) fail("", "expected a JSON object (a Hugging Face config.json), got " + kind(root_));
    model_config c;
    c.part = part;
    if (const json* a = present(root_, "architectures")) {
      if (!a->is_array()) fail("/architectures", "expected an array of strings, got " + kind(*a));
      if (!a->empty()) {
        if (!(*a)[0].is_string()) fail("/architectures/0", "expected a string, got " + kind((*a)[0]));
        c.architecture = (*a)[0].get<std::string>();
      }
    }
    const json* sec = &root_;
    if (part == model_part::vision) {
      sec = present(root_, "vision_config");
      if (sec == nullptr) fail("/vision_config", "missing: the vision part needs a vision_config object");
      c.section = "/vision_config";
    } else if (part == model_part::audio) {
      if (const json* a = present(root_, "audio_config")) {
        sec = a;
        c.section = "/audio_config";
      } else if (present(root_, "encoder_attention_heads") == nullptr) {
        fail("/audio_config",
             "missing: the audio part needs an audio_config object, or an encoder at the top level "
             "(encoder_attention_heads)");
      }
    } else if (const json* t = present(root_, "text_config")) {
      sec = t;
      c.section = "/text_config";
    }
    if (!sec->is_object()) fail(c.section, "expected an object, got " + kind(*sec));
    section_ = sec;
    prefix_ = c.section;
    if (const json* mt = present(*sec, "model_type")) c.model_type = string_at(*mt, "model_type");

    // Heads: the text part names them num_attention_heads, an encoder–decoder model's decoder
    // decoder_attention_heads and its encoder encoder_attention_heads (Whisper, and Qwen2-Audio's
    // audio_config); Qwen2-VL's vision tower num_heads.
    const char* heads_key = "num_attention_heads";
    const bool decoder_keys = part == model_part::text && present(*sec, heads_key) == nullptr &&
                              present(*sec, "decoder_attention_heads") != nullptr;
    if (decoder_keys) heads_key = "decoder_attention_heads";
    if (part == model_part::audio && present(*sec, "encoder_attention_heads") != nullptr)
      heads_key = "encoder_attention_heads";
    if (part == model_part::vision && present(*sec, "num_heads") != nullptr) heads_key = "num_heads";
    c.num_heads = size_at(required(heads_key), heads_key);
    c.num_kv_heads = c.num_heads;
    if (const json* kv = present(*sec, "num_key_value_heads")) {
      c.num_kv_heads = size_at(*kv, "num_key_value_heads");
      if (c.num_heads % c.num_kv_heads != 0)
        fail(prefix_ + "/num_key_value_heads", "expected a divisor of " + std::string(heads_key) + " (" +
                                                   std::to_string(c.num_heads) + "), got " +
                                                   std::to_string(c.num_kv_heads));
    }

    if (const json* rank = present(*sec, "kv_lora_rank")) {
      // MLA (DeepSeek-V2/V3): the query/key head is the no-rope part plus the rope part; the value head
      // is v_head_dim. index_topk marks DeepSeek's sparse (indexer) variant.
      c.mode = attention_mode::mla;
      c.kv_lora_rank = size_at(*rank, "kv_lora_rank");
      c.qk_rope_head_dim = size_at(required("qk_rope_head_dim"), "qk_rope_head_dim");
      const auto nope = size_at(required("qk_nope_head_dim"), "qk_nope_head_dim");
      c.head_size = nope + c.qk_rope_head_dim;
      c.head_size_v = size_at(required("v_head_dim"), "v_head_dim");
      // Each part is within bounds; their sums are the head sizes a query carries (Query refuses more).
      within_head_limit("qk_nope_head_dim", "qk_nope_head_dim + qk_rope_head_dim", c.head_size);
      within_head_limit("kv_lora_rank", "kv_lora_rank + qk_rope_head_dim, the latent head size,",
                        std::uint64_t{c.kv_lora_rank} + c.qk_rope_head_dim);
      if (present(*sec, "index_topk") != nullptr) c.mode = attention_mode::sparse_mla;
    } else {
      // Zamba2's shared attention reads the block input concatenated with the embeddings: its head is
      // attention_head_dim, 2 x hidden_size / heads when absent (transformers' Zamba2Config), as vLLM 0.33.0
      // zamba2.py sizes it.
      const bool zamba = c.model_type == "zamba2";
      const json* zamba_head = zamba ? present(*sec, "attention_head_dim") : nullptr;
      if (const json* hd = present(*sec, "head_dim")) {
        c.head_size = size_at(*hd, "head_dim");
      } else if (zamba_head != nullptr) {
        c.head_size = size_at(*zamba_head, "attention_head_dim");
      } else {
        // Qwen2-VL's vision config carries the LLM's hidden_size too; its tower width is embed_dim.
        // Encoder–decoder models (Whisper) name the width d_model.
        const char* width_key = "hidden_size";
        if (part == model_part::vision && present(*sec, "embed_dim") != nullptr) width_key = "embed_dim";
        if (present(*sec, width_key) == nullptr && present(*sec, "d_model") != nullptr) width_key = "d_model";
        const auto width = size_at(required(width_key, "(or head_dim)"), width_key, 1u << 24);
        if (width % c.num_heads != 0)
          fail(prefix_ + "/" + width_key, "expected a multiple of " + std::string(heads_key) + " (" +
                                              std::to_string(c.num_heads) + ") to derive the head size, got " +
                                              std::to_string(width));
        c.head_size = (zamba ? 2 * width : width) / c.num_heads;
        if (c.head_size > limits::head_size)
          fail(prefix_ + "/" + width_key, "derives a head size of " + std::to_string(c.head_size) +
                                              ", above the limit " + std::to_string(limits::head_size));
      }
      c.head_size_v = c.head_size;
      if (const json* vd = present(*sec, "v_head_dim")) c.head_size_v = size_at(*vd, "v_head_dim");
    }

    // dtype: newer transformers write `dtype`, older `torch_dtype`; a text_config or vision_config
    // without one inherits the document's.
    if (dtype_keys_ == model_dtype_keys::read) {
      c.dtype = read_dtype(*sec, prefix_);
      if (!c.dtype && sec != &root_) c.dtype = read_dtype(root_, "");
    }

    if (part == model_part::text) {
      bool window_on = true;
      if (const json* use = present(*sec, "use_sliding_window")) {
        if (!use->is_boolean()) fail(prefix_ + "/use_sliding_window", "expected true or false, got " + kind(*use));
        window_on = use->get<bool>();
      }
      if (const json* sw = present(*sec, "sliding_window"); sw != nullptr && window_on)
        c.sliding_window = size_at(*sw, "sliding_window", std::numeric_limits<std::uint32_t>::max());
      if (const json* cap = present(*sec, "attn_logit_softcapping")) {
        if (!cap->is_number() || !(cap->get<double>() >= 0) || !std::isfinite(cap->get<double>()))
          fail(prefix_ + "/attn_logit_softcapping", "expected a number >= 0 or null, got " + kind(*cap));
        c.softcap = cap->get<double>();
      }
      // gpt-oss creates learned sinks in every attention layer without a config key for them (SGLang
      // ModelConfig._detect_attention_sinks; vLLM's gpt_oss.py), so the architecture is the signal.
      c.sinks = c.architecture == "GptOssForCausalLM" || c.model_type == "gpt_oss";
      read_mm_prefix(c);
      read_layers(c, decoder_keys ? "decoder_layers" : "num_hidden_layers");
      read_linear_state(c);
      if (const json* ed = present(root_, "is_encoder_decoder")) {
        if (!ed->is_boolean()) fail("/is_encoder_decoder", "expected true or false, got " + kind(*ed));
        c.cross_attention = ed->get<bool>();
      }
      c.cross_attention = c.cross_attention || decoder_keys;
      read_towers(c);
    } else {
      // A tower's layers: Qwen2-VL counts them as depth, Whisper's encoder as encoder_layers.
      const char* count_key = "num_hidden_layers";
      for (const char* k : {"depth", "encoder_layers"})
        if (present(*sec, count_key) == nullptr && present(*sec, k) != nullptr) count_key = k;
      if (const json* n = present(*sec, count_key))
        c.layers.assign(size_at(*n, count_key, 1U << 16), layer_kind::encoder);
    }
    return c;
  }

  // The towers the text part reads from: vision_config, and audio_config or a top-level encoder. Each is
  // read as its own part; one the reader refuses is left out of the plan with the reason as an assumption.
  void read_towers(model_config& c) const {
    std::vector<model_part> parts;
    if (present(root_, "vision_config") != nullptr) parts.push_back(model_part::vision);
    // A top-level encoder is an audio tower when it reads audio (Whisper's num_mel_bins): BART's and
    // Marian's text encoders are not towers.
    if (present(root_, "audio_config") != nullptr ||
        (present(root_, "encoder_attention_heads") != nullptr && present(root_, "num_mel_bins") != nullptr))
      parts.push_back(model_part::audio);
    for (const auto tower : parts) {
      try {
        c.towers.push_back(model_config_reader(origin_, root_, dtype_keys_).read(tower));
      } catch (const model_config_error& e) {
        c.assumptions.push_back("the " + std::string(to_string(tower)) + " tower is left out of the plan: " +
                                (e.pointer().empty() ? std::string("/") : e.pointer()) + ": " + e.problem());
      }
    }
  }

  // vLLM's is_mm_prefix_lm (transformers_utils/model_arch_config_convertor.py, 0.34): the text config's
  // own flag, else the multimodal model types it lists, else Gemma 4 with bidirectional vision attention.
  // Every decoder layer then attends bidirectionally within each image (vLLM attention.py use_mm_prefix).
  void read_mm_prefix(model_config& c) {
    if (const nlohmann::json* flag = present(*section_, "is_mm_prefix_lm")) {
      if (!flag->is_boolean()) fail(prefix_ + "/is_mm_prefix_lm", "expected true or false, got " + kind(*flag));
      c.mm_prefix = flag->get<bool>();
      return;
    }
    std::string root_type;
    if (const nlohmann::json* mt = present(root_, "model_type"); mt != nullptr && mt->is_string())
      root_type = mt->get<std::string>();
    for (const std::string_view prefix_lm : {"bagel", "gemma3", "molmo2", "moondream3", "paligemma"})
      if (root_type == prefix_lm) c.mm_prefix = true;
    if (root_type == "gemma4" || root_type == "gemma4_text")
      if (const nlohmann::json* bi = present(*section_, "use_bidirectional_attention"))
        c.mm_prefix = bi->is_string() && bi->get<std::string>() == "vision";
    if (c.mm_prefix)
      c.assumptions.push_back("model_type " + root_type +
                              ": a prefix-LM, its layers bidirectional over each image's tokens (feature "
                              "mm_prefix; vLLM's is_mm_prefix_lm)");
  }
};

}  // namespace detail

ATTNSEL_INLINE std::optional<model_part> parse_model_part(std::string_view text) noexcept {
  for (const auto part : enum_values<model_part>())
    if (to_string(part) == text) return part;
  return std::nullopt;
}

ATTNSEL_INLINE std::optional<layer_kind> parse_layer_kind(std::string_view text) noexcept {
  for (const auto kind : all_layer_kinds)
    if (to_string(kind) == text) return kind;
  return std::nullopt;
}

namespace detail {
inline std::uint64_t dtype_bytes(data_type d) noexcept { return d == data_type::float32 ? 4 : 2; }
}  // namespace detail

ATTNSEL_INLINE std::uint64_t linear_state::bytes(data_type dtype, std::uint32_t tensor_parallel) const noexcept {
  if (!known() || tensor_parallel == 0) return 0;
  // A rank holds whole groups: fewer groups than ranks are repeated so that each rank has its heads'.
  std::uint64_t groups = conv_groups;
  if (groups != 0 && groups % tensor_parallel != 0) groups = tensor_parallel;
  // Each factor is at most 2^48 (keys of at most 2^24 each); a product past 2^62 is no real model's.
  constexpr std::uint64_t cap = std::uint64_t{1} << 62;
  const auto times = [&](std::uint64_t a, std::uint64_t b) { return b != 0 && a > cap / b ? cap : a * b; };
  const std::uint64_t conv = times((conv_channels + groups * conv_group_channels) / tensor_parallel, conv_kernel - 1);
  const std::uint64_t ssm = times(ssm_heads / tensor_parallel, ssm_head_elements);
  if (conv >= cap / 4 || ssm >= cap / 4) return 0;
  return conv * detail::dtype_bytes(dtype) + ssm * detail::dtype_bytes(ssm_dtype.value_or(dtype));
}

ATTNSEL_INLINE std::vector<std::string> model_config::features() const {
  std::vector<std::string> out;
  if (sliding_window != 0) out.emplace_back(features::sliding_window);
  if (softcap > 0) out.emplace_back(features::softcap);
  if (sinks) out.emplace_back(features::sinks);
  if (mm_prefix) out.emplace_back(features::mm_prefix);
  return out;
}

ATTNSEL_INLINE query model_config::to_query(query base, std::uint32_t tensor_parallel) const {
  if (tensor_parallel == 0) throw std::invalid_argument("model_config::to_query: tensor_parallel must be at least 1");
  query q = std::move(base);
  if (part == model_part::vision) {
    q.domain = attention_domain::encoder;
    q.attn_type = attention_type::encoder_only;
  } else if (part == model_part::audio) {
    q.domain = attention_domain::encoder;
    q.attn_type = attention_type::encoder;  // vLLM's Whisper encoder: AttentionType.ENCODER
  } else {
    q.domain = attention_domain::decoder;
    q.attn_type = attention_type::decoder;
  }
  if (mode == attention_mode::standard) {
    q.head_size = head_size;
    q.head_size_v = head_size_v == head_size ? 0 : head_size_v;
  } else {
    // MLA layers attend in the latent space: the head is the compressed KV plus its rotary part
    // (DeepSeek: 512 + 64 = 576), the size vLLM's MLA backends are selected for.
    q.head_size = kv_lora_rank + qk_rope_head_dim;
    q.head_size_v = 0;
  }
  q.mode = mode;
  if (dtype) q.dtype = *dtype;
  if (num_heads != 0) q.num_heads = (num_heads + tensor_parallel - 1) / tensor_parallel;
  // KV heads per rank (catalog format 2): at least one per rank, as vLLM and SGLang replicate them; left
  // unstated for MLA (one latent KV) and when the per-rank counts would not divide.
  if (mode == attention_mode::standard && num_kv_heads != 0 && q.num_heads != 0) {
    const std::uint32_t kv = std::max<std::uint32_t>(1, num_kv_heads / tensor_parallel);
    if (q.num_heads % kv == 0) q.num_kv_heads = kv;
  }
  for (const auto& f : features()) q.required.insert(f);
  return q;
}

ATTNSEL_INLINE data_type auto_dtype(const platform& p, std::optional<data_type> config_dtype,
                                    std::string_view model_type) {
  bool bf16 = true;
  bool f16 = true;
  if (p.vendor() == device_vendor::cuda && p.capability()) {
    bf16 = p.capability()->value() >= 80;
    f16 = p.capability()->value() >= 60;
  }
  for (const std::string_view refuses_f16 : {"gemma2", "gemma3", "gemma3_text", "glm4"})
    if (model_type == refuses_f16) f16 = false;
  const data_type preferred = bf16 ? data_type::bfloat16 : f16 ? data_type::float16 : data_type::float32;
  const data_type wanted = config_dtype.value_or(data_type::float32);
  if (wanted == data_type::float32) return preferred;
  if ((wanted == data_type::bfloat16 && !bf16) || (wanted == data_type::float16 && !f16)) return preferred;
  return wanted;
}

ATTNSEL_INLINE model_config parse_model_config(std::string_view json_text, model_part part, std::string_view origin,
                                               model_dtype_keys dtype_keys) {
  const std::string where(origin);
  nlohmann::json doc;
  try {
    if (json_text.size() > limits::catalog_bytes)  // the bound is on the text as given, not as marked
      throw model_config_error(where, "",
                               "file is " + std::to_string(json_text.size()) + " bytes; the limit is " +
                                   std::to_string(limits::catalog_bytes));
    detail::check_json_text(json_text, where);  // a bare NaN is no document, marked or not
    doc = detail::parse_json_text(detail::with_non_finite_marked(json_text), where, catalog_limits{});
  } catch (const catalog_error& e) {
    throw model_config_error(e.origin(), e.pointer(), e.problem());
  }
  return detail::model_config_reader(where, doc, dtype_keys).read(part);
}

ATTNSEL_INLINE model_config read_model_config_file(const std::string& path, model_part part,
                                                   model_dtype_keys dtype_keys) {
  std::string text;
  try {
    text = detail::read_file_text(path, catalog_limits{});
  } catch (const catalog_error& e) {
    throw model_config_error(e.origin(), e.pointer(), e.problem());
  }
  return parse_model_config(text, part, path, dtype_keys);
}

ATTNSEL_END_NAMESPACE
