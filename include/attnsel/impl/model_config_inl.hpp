// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for model_config.hpp: the Hugging Face config.json reader.
#pragma once

#include <attnsel/catalog.hpp>
#include <attnsel/catalog_error.hpp>
#include <attnsel/impl/catalog_file_inl.hpp>
#include <attnsel/impl/text.hpp>
#include <attnsel/model_config.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Python's json module (and so Hugging Face's save_pretrained) writes NaN, Infinity and -Infinity,
// which JSON has no spelling for. Outside strings each becomes a one-member object that no key attnsel
// reads accepts, so a key attnsel never reads may hold one, and one that it reads is refused by name
// ("expected an integer ..., got NaN"). Linear; strings are copied as they are.
constexpr std::string_view non_finite_key = std::string_view("\0non_finite", 11);

inline std::string with_non_finite_marked(std::string_view text) {
  static constexpr std::string_view words[] = {"-Infinity", "Infinity", "NaN"};
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        in_string = false;
      out += ch;
      continue;
    }
    if (ch == '"') in_string = true;
    const auto word = std::find_if(std::begin(words), std::end(words),
                                   [&](std::string_view w) { return text.substr(i, w.size()) == w; });
    if (!in_string && word != std::end(words)) {
      out += R"({"\u0000non_finite": ")";
      out += *word;
      out += "\"}";
      i += word->size() - 1;
      continue;
    }
    out += ch;
  }
  return out;
}

// The spelling of a value with_non_finite_marked made, or null for any other value.
inline const std::string* non_finite_of(const nlohmann::json& v) {
  if (!v.is_object() || v.size() != 1) return nullptr;
  const auto it = v.find(std::string(non_finite_key));
  return it != v.end() && it->is_string() ? it->get_ptr<const std::string*>() : nullptr;
}

// Reads one section of a config.json. HF writes `null` for many unset keys (head_dim, sliding_window),
// so null reads as absent; a present value of the wrong type is an error naming its key.
class model_config_reader {
 public:
  model_config_reader(std::string origin, const nlohmann::json& root, model_dtype_keys dtype_keys)
      : origin_(std::move(origin)), root_(root), dtype_keys_(dtype_keys) {}

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
      if (const json* hd = present(*sec, "head_dim")) {
        c.head_size = size_at(*hd, "head_dim");
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
        c.head_size = width / c.num_heads;
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

  // The kind of each text layer: `layer_types` when listed (transformers fills it for most families, and
  // vLLM reads it), else the family's own rule as transformers 5.25 and vLLM 0.34 derive it (cited per
  // rule in tests/data/model_configs/RESEARCH.md), else every layer alike. Layer indices are 0-based.
  void read_layers(model_config& c, const char* count_key) {
    std::uint32_t count = 0;
    if (const nlohmann::json* n = present(*section_, count_key)) {
      count = size_at(*n, count_key, 1U << 16);
    } else if (const std::uint32_t listed = listed_layer_count(); listed != 0) {
      count = listed;  // transformers 5.20's Nemotron-H counts its layers by its list alone
    } else {
      if (const char* key = differing_key())  // the layers are unknown: a plan has one group
        c.assumptions.push_back(std::string(count_key) +
                                " absent, and attnsel knows no per-layer rule for model_type '" + c.model_type +
                                "' though it has a key of layers that attend differently (" + key +
                                "): the plan is one group of every layer; give " + count_key + " and layer_types");
      return;
    }
    if (const nlohmann::json* g = present(*section_, "global_head_dim"))
      c.global_head_size = size_at(*g, "global_head_dim");
    if (const nlohmann::json* chunk = present(*section_, "attention_chunk_size"))
      c.chunk_size = size_at(*chunk, "attention_chunk_size", std::numeric_limits<std::uint32_t>::max());
    const std::string& type = c.model_type;
    const auto every = [&](auto kind_of) {
      c.layers.resize(count);
      for (std::uint32_t i = 0; i < count; ++i) c.layers[i] = kind_of(i);
    };
    if (const auto [list_key, listed] = layer_list(); listed != nullptr) {
      read_layer_list(c, *listed, list_key, count, count_key);
    } else if (const nlohmann::json* hybrid = present(*section_, "hybrid_override_pattern")) {
      // Nemotron-H: one character per layer, 'M' a Mamba-2 mixer, '*' attention, '-' an MLP, 'E' a
      // mixture of experts (vLLM nemotron_h.py builds its layers from this string).
      const std::string text = string_at(*hybrid, "hybrid_override_pattern");
      if (text.size() != count)
        fail(prefix_ + "/hybrid_override_pattern", "expected " + std::to_string(count) + " characters (" + count_key +
                                                       "), got " + std::to_string(text.size()));
      c.layers.reserve(count);
      for (std::size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
        if (ch == 'M')
          c.layers.push_back(layer_kind::linear);
        else if (ch == '*')
          c.layers.push_back(layer_kind::full);
        else if (ch == '-' || ch == 'E')
          c.layers.push_back(layer_kind::mlp);
        else
          fail(prefix_ + "/hybrid_override_pattern",
               "expected only M (Mamba), * (attention), - (MLP) and E (experts); character " + std::to_string(i) +
                   " of " + kind(*hybrid) + " is not");
      }
    } else if (type == "jamba") {
      // Jamba: attention where i % attn_layer_period == attn_layer_offset, Mamba elsewhere (transformers
      // configuration_jamba.py, defaults 8 and 4; vLLM jamba.py reads its layers_block_type).
      std::uint32_t period = 8;
      std::uint32_t offset = 4;
      if (const nlohmann::json* v = present(*section_, "attn_layer_period"))
        period = size_at(*v, "attn_layer_period", 1U << 16);
      if (const nlohmann::json* v = present(*section_, "attn_layer_offset"))
        offset = index_at(*v, "attn_layer_offset", period);
      every([&](std::uint32_t i) { return i % period == offset ? layer_kind::full : layer_kind::linear; });
      c.assumptions.push_back("layer_types absent: Jamba's attention layers are those with i % " +
                              std::to_string(period) + " == " + std::to_string(offset) +
                              ", the others Mamba (transformers configuration_jamba.py)");
    } else if (const char* key = present(*section_, "attn_layer_indices") ? "attn_layer_indices" : "full_attn_idxs";
               const nlohmann::json* indices = present(*section_, key)) {
      // Bamba's attn_layer_indices, LFM2's full_attn_idxs: the attention layers; the others Mamba-2 or short
      // convolution (transformers configuration_bamba.py, configuration_lfm2.py).
      if (!indices->is_array()) fail(prefix_ + "/" + key, "expected an array of layer indices, got " + kind(*indices));
      every([](std::uint32_t) { return layer_kind::linear; });
      for (std::size_t i = 0; i < indices->size(); ++i)
        c.layers[index_at((*indices)[i], (std::string(key) + "/" + std::to_string(i)).c_str(), count)] =
            layer_kind::full;
    } else if (const nlohmann::json* types = present(*section_, "attn_type_list")) {
      // MiniMax-Text-01: 0 a lightning (linear) attention layer, 1 a softmax attention layer.
      read_flag_list(c, *types, "attn_type_list", count, count_key, layer_kind::full, layer_kind::linear);
    } else if (type == "falcon_h1") {
      // Falcon-H1: attention and a Mamba-2 mixer side by side in every layer (transformers
      // configuration_falcon_h1.py, vLLM falcon_h1.py).
      every([](std::uint32_t) { return layer_kind::hybrid; });
    } else if (type == "minimax") {
      every([](std::uint32_t i) { return i % 2 == 0 ? layer_kind::full : layer_kind::linear; });
      c.assumptions.emplace_back(
          "layer_types and attn_type_list absent: MiniMax's even layers full and odd layers linear "
          "(transformers configuration_minimax.py)");
    } else if (type == "gemma2") {
      if (c.sliding_window != 0) {
        every([](std::uint32_t i) { return i % 2 == 0 ? layer_kind::sliding : layer_kind::full; });
        c.assumptions.emplace_back(
            "layer_types absent: Gemma 2's layers alternate, even layers sliding and odd layers full "
            "(transformers configuration_gemma2.py; vLLM gemma2.py reads that list)");
      }
    } else if (type == "gemma3" || type == "gemma3_text" || type == "gemma4" || type == "gemma4_text") {
      std::uint32_t pattern = 6;
      if (const nlohmann::json* pat = present(*section_, "sliding_window_pattern"))
        pattern = size_at(*pat, "sliding_window_pattern", 1U << 16);
      else if (c.sliding_window != 0)
        c.assumptions.emplace_back(
            "sliding_window_pattern absent: Gemma's default 6 (transformers "
            "configuration_gemma3.py)");
      const bool last_full = type == "gemma4" || type == "gemma4_text";
      if (c.sliding_window != 0) {
        every([&](std::uint32_t i) {
          return (i + 1) % pattern == 0 || (last_full && i + 1 == count) ? layer_kind::full : layer_kind::sliding;
        });
        c.assumptions.emplace_back("layer_types absent: a layer is full when (i + 1) % " + std::to_string(pattern) +
                                   " == 0" + (last_full ? " or it is the last" : "") +
                                   ", else sliding (transformers' Gemma configs; vLLM reads that list)");
      }
    } else if (type == "llama4" || type == "llama4_text") {
      if (c.chunk_size == 0) return;  // no chunked attention: every layer full
      const nlohmann::json* nrl = present(*section_, "no_rope_layers");
      if (nrl != nullptr && (!nrl->is_array() || !nrl->empty())) {
        // 1: the layer uses RoPE, and with it chunked local attention; 0: a NoPE layer, full attention.
        read_flag_list(c, *nrl, "no_rope_layers", count, count_key, layer_kind::chunked, layer_kind::full);
      } else {
        every([](std::uint32_t i) { return (i + 1) % 4 != 0 ? layer_kind::chunked : layer_kind::full; });
        c.assumptions.emplace_back(
            "no_rope_layers absent or empty: every fourth layer (i + 1) % 4 == 0 is a "
            "NoPE layer with full attention, the others chunked (vLLM llama4.py)");
      }
    } else if (type == "qwen3_next" || type == "qwen3_5" || type == "qwen3_5_text" || type == "qwen3_5_moe" ||
               type == "qwen3_5_moe_text" || present(*section_, "full_attention_interval") != nullptr) {
      // Qwen3-Next and Qwen3.5: linear attention, every full_attention_interval-th layer full (transformers
      // configuration_qwen3_next.py, configuration_qwen3_5.py).
      std::uint32_t interval = 4;
      if (const nlohmann::json* fai = present(*section_, "full_attention_interval"))
        interval = size_at(*fai, "full_attention_interval", 1U << 16);
      else
        c.assumptions.emplace_back(
            "full_attention_interval absent: Qwen3-Next's and Qwen3.5's default 4 "
            "(transformers configuration_qwen3_next.py)");
      every([&](std::uint32_t i) { return (i + 1) % interval == 0 ? layer_kind::full : layer_kind::linear; });
    } else if (type == "gpt_oss" && c.sliding_window != 0) {
      every([](std::uint32_t i) { return i % 2 == 0 ? layer_kind::sliding : layer_kind::full; });
      c.assumptions.emplace_back(
          "layer_types absent: gpt-oss's even layers slide and odd layers are full (vLLM gpt_oss.py, "
          "transformers configuration_gpt_oss.py)");
    } else if (type == "cohere2" && c.sliding_window != 0) {
      std::uint32_t pattern = 4;
      if (const nlohmann::json* pat = present(*section_, "sliding_window_pattern"))
        pattern = size_at(*pat, "sliding_window_pattern", 1U << 16);
      every([&](std::uint32_t i) { return (i + 1) % pattern == 0 ? layer_kind::full : layer_kind::sliding; });
      c.assumptions.emplace_back("layer_types absent: a layer is full when (i + 1) % " + std::to_string(pattern) +
                                 " == 0, else sliding (transformers configuration_cohere2.py, default 4)");
    }
    if (c.layers.empty()) {
      // Every layer alike: sliding when the model has a window (Mistral, Phi-3), else full. A family with a
      // window whose per-layer rule attnsel does not know is named: transformers may derive a pattern. The
      // families above without a window (or chunk) land here too, rightly uniform.
      const auto kind_all = c.sliding_window != 0 ? layer_kind::sliding : layer_kind::full;
      every([kind_all](std::uint32_t) { return kind_all; });
      static constexpr std::string_view known[] = {"mistral", "mixtral",     "phi3",        "phimoe", "starcoder2",
                                                   "gemma2",  "gemma3",      "gemma3_text", "gemma4", "gemma4_text",
                                                   "llama4",  "llama4_text", "gpt_oss",     "cohere2"};
      if (std::find(std::begin(known), std::end(known), type) != std::end(known)) {
        read_linear_mode(c);
        finish_layers(c);
        return;
      }
      if (c.sliding_window != 0)
        c.assumptions.push_back("layer_types absent, and attnsel knows no per-layer rule for model_type '" + type +
                                "': every layer taken as sliding (window " + std::to_string(c.sliding_window) +
                                "); list layer_types in config.json if its layers differ");
      if (const char* key = differing_key())
        c.assumptions.push_back("layer_types absent, and attnsel knows no per-layer rule for model_type '" + type +
                                "' though it has a key of layers that attend differently (" + key +
                                "): every layer taken as " + std::string(to_string(kind_all)) +
                                "; list layer_types in config.json");
    }
    read_linear_mode(c);
    finish_layers(c);
  }

  // The first key of layers that attend differently (linear attention, state-space, local windows) that
  // the section has, or nullptr: without a layer list, the split is unknown (transformers 5.20's Zamba,
  // Kimi Linear, ModernBERT...).
  const char* differing_key() const {
    for (const char* key :
         {"linear_num_value_heads", "linear_conv_kernel_dim", "linear_attn_alpha_factor", "linear_attn_config",
          "attn_layer_period", "mamba_d_state", "mamba_n_heads", "mamba_num_heads", "ssm_state_size",
          "sliding_window_pattern", "global_attn_every_n_layers", "local_attention"})
      if (present(*section_, key) != nullptr) return key;
    return nullptr;
  }

  // The keys of a layer list, in the order the reader takes them: Jamba, Zamba2 and Nemotron 3 write
  // `layers_block_type`.
  static constexpr const char* layer_list_keys[] = {"layer_types", "layers_block_type"};

  // The section's layer list and its key: the first of layer_list_keys present; {"layer_types", nullptr}
  // when it has none.
  std::pair<const char*, const nlohmann::json*> layer_list() const {
    for (const char* key : layer_list_keys)
      if (const nlohmann::json* list = present(*section_, key)) return {key, list};
    return {layer_list_keys[0], nullptr};
  }

  // The layer count a layer list or Nemotron-H's pattern gives (vLLM nemotron_h.py counts the pattern's
  // characters), 0 when neither is there.
  std::uint32_t listed_layer_count() const {
    const auto counted = [&](const char* key, std::size_t size) {
      if (size > (1U << 16)) fail(prefix_ + "/" + key, "expected at most 65536 layers, got " + std::to_string(size));
      return static_cast<std::uint32_t>(size);
    };
    for (const char* key : layer_list_keys)
      if (const nlohmann::json* list = present(*section_, key); list != nullptr && list->is_array())
        return counted(key, list->size());
    if (const nlohmann::json* pattern = present(*section_, "hybrid_override_pattern");
        pattern != nullptr && pattern->is_string())
      return counted("hybrid_override_pattern", pattern->get_ref<const std::string&>().size());
    return 0;
  }

  // A layer list (`layer_types`, or `layers_block_type` of Jamba, Zamba2, Nemotron 3), with the names
  // transformers 5.20 writes and the older ones it still reads (configuration_utils.py
  // ALLOWED_ATTN_LAYER_TYPES, _LEGACY_LAYER_TYPE_REMAP).
  void read_layer_list(model_config& c, const nlohmann::json& list, const char* key, std::uint32_t count,
                       const char* count_key) {
    static constexpr struct {
      std::string_view name;
      layer_kind kind;
    } names[] = {{"full_attention", layer_kind::full},
                 {"attention", layer_kind::full},
                 {"indexed_attention", layer_kind::full},  // sparse MLA's indexed layers (DeepSeek V3.2)
                 {"deepseek_sparse_attention", layer_kind::full},
                 {"sliding_attention", layer_kind::sliding},
                 {"chunked_attention", layer_kind::chunked},
                 {"linear_attention", layer_kind::linear},
                 {"mamba", layer_kind::linear},
                 {"conv", layer_kind::linear},  // LFM2's short convolutions
                 {"hybrid", layer_kind::hybrid},
                 {"mlp", layer_kind::mlp},
                 {"moe", layer_kind::mlp}};
    const auto accepted = detail::join(names, ", ", [](const auto& r) { return std::string(r.name); });
    read_per_layer(c, list, key, count, count_key, "layer type names", "one of " + accepted,
                   [&](const nlohmann::json& v) -> std::optional<layer_kind> {
                     const auto row = std::find_if(std::begin(names), std::end(names), [&](const auto& r) {
                       return v.is_string() && r.name == v.get_ref<const std::string&>();
                     });
                     if (row == std::end(names)) return std::nullopt;
                     if (row->name == "conv") convolution_ = true;
                     return row->kind;
                   });
  }

  // A list of one 0 or 1 per layer (Llama 4's no_rope_layers, MiniMax's attn_type_list): 1 is `one`, 0 `zero`.
  void read_flag_list(model_config& c, const nlohmann::json& list, const char* key, std::uint32_t count,
                      const char* count_key, layer_kind one, layer_kind zero) {
    read_per_layer(c, list, key, count, count_key, "0 and 1", "0 or 1",
                   [&](const nlohmann::json& v) -> std::optional<layer_kind> {
                     if (!v.is_number_integer() || (v.get<std::int64_t>() != 0 && v.get<std::int64_t>() != 1))
                       return std::nullopt;
                     return v.get<std::int64_t>() == 1 ? one : zero;
                   });
  }

  // A list of `count` entries, one per layer, each read by `entry` (nullopt: not `each`), into c.layers.
  template <class Entry>
  void read_per_layer(model_config& c, const nlohmann::json& list, const char* key, std::uint32_t count,
                      const char* count_key, const std::string& entries, const std::string& each, Entry entry) {
    const std::string at = prefix_ + "/" + key;
    if (!list.is_array()) fail(at, "expected an array of " + entries + ", got " + kind(list));
    if (list.size() != count)
      fail(at,
           "expected " + std::to_string(count) + " entries (" + count_key + "), got " + std::to_string(list.size()));
    c.layers.reserve(count);
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto k = entry(list[i]);
      if (!k) fail(at + "/" + std::to_string(i), "expected " + each + ", got " + kind(list[i]));
      c.layers.push_back(*k);
    }
  }

  // The mixer of the linear and hybrid layers: LFM2's listed "conv", else the family's (vLLM 0.33.0's
  // model files: qwen3_next.py GatedDeltaNet; nemotron_h.py, granitemoehybrid.py, zamba2.py,
  // falcon_h1.py MambaMixer2; jamba.py MambaMixer; lfm2.py ShortConv), else named.
  void read_linear_mode(model_config& c) const {
    const bool any = std::any_of(c.layers.begin(), c.layers.end(),
                                 [](layer_kind k) { return k == layer_kind::linear || k == layer_kind::hybrid; });
    if (!any) return;
    static constexpr struct {
      std::string_view type;
      attention_mode mode;
    } families[] = {{"qwen3_next", attention_mode::gated_delta},
                    {"qwen3_5", attention_mode::gated_delta},
                    {"qwen3_5_text", attention_mode::gated_delta},
                    {"qwen3_5_moe", attention_mode::gated_delta},
                    {"qwen3_5_moe_text", attention_mode::gated_delta},
                    {"nemotron_h", attention_mode::mamba2},
                    {"granitemoehybrid", attention_mode::mamba2},
                    {"bamba", attention_mode::mamba2},
                    {"zamba2", attention_mode::mamba2},
                    {"falcon_h1", attention_mode::mamba2},
                    {"jamba", attention_mode::mamba1},
                    {"lfm2", attention_mode::short_conv},
                    {"lfm2_moe", attention_mode::short_conv},
                    {"minimax", attention_mode::lightning},
                    {"minimax_text_01", attention_mode::lightning}};
    const auto row =
        std::find_if(std::begin(families), std::end(families), [&](const auto& f) { return f.type == c.model_type; });
    if (convolution_) {
      c.linear_mode = attention_mode::short_conv;
    } else if (row != std::end(families)) {
      c.linear_mode = row->mode;
    } else {
      c.linear_mode = attention_mode::gated_delta;
      c.assumptions.push_back("attnsel knows no linear-layer kind for model_type '" + c.model_type +
                              "': its linear layers taken as gated delta-rule (Qwen3-Next's); name the mixer "
                              "with the model's own model_type");
    }
  }

  // What every layer list must hold: a window for sliding layers, a chunk size for chunked ones.
  void finish_layers(const model_config& c) const {
    const bool any_sliding = std::find(c.layers.begin(), c.layers.end(), layer_kind::sliding) != c.layers.end();
    if (any_sliding && c.sliding_window == 0)
      fail(prefix_ + "/sliding_window", "missing: the config has sliding-attention layers but no window");
    const bool any_chunked = std::find(c.layers.begin(), c.layers.end(), layer_kind::chunked) != c.layers.end();
    if (any_chunked && c.chunk_size == 0)
      fail(prefix_ + "/attention_chunk_size", "missing: the config has chunked-attention layers but no chunk size");
  }

 private:
  [[noreturn]] void fail(const std::string& pointer, const std::string& problem) const {
    throw model_config_error(origin_, pointer, problem);
  }
  void within_head_limit(const char* key, const char* what, std::uint64_t size) const {
    if (size > limits::head_size)
      fail(prefix_ + "/" + key, std::string(what) + " is " + std::to_string(size) + ", above the head-size limit " +
                                    std::to_string(limits::head_size));
  }
  static std::string kind(const nlohmann::json& v) {
    if (const auto* special = non_finite_of(v)) return *special;
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
  }
  static const nlohmann::json* present(const nlohmann::json& obj, const char* key) {
    const auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }
  const nlohmann::json& required(const char* key, const char* hint = "") const {
    const nlohmann::json* v = present(*section_, key);
    if (v == nullptr)
      fail(prefix_ + "/" + key, std::string("missing") + (*hint ? std::string(" ") + hint : std::string()) +
                                    ": needed for the attention shape");
    return *v;
  }
  std::uint32_t size_at(const nlohmann::json& v, const char* key, std::uint64_t max = limits::head_size) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || static_cast<std::uint64_t>(v.get<std::int64_t>()) > max)
      fail(prefix_ + "/" + key, "expected an integer in [1, " + std::to_string(max) + "], got " + kind(v));
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
  }
  /// An index in [0, end): a layer, or an offset within a period.
  std::uint32_t index_at(const nlohmann::json& v, const char* key, std::uint32_t end) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= end)
      fail(prefix_ + "/" + key, "expected an integer in [0, " + std::to_string(end - 1) + "], got " + kind(v));
    return static_cast<std::uint32_t>(v.get<std::int64_t>());
  }
  std::string string_at(const nlohmann::json& v, const char* key) const {
    if (!v.is_string()) fail(prefix_ + "/" + key, "expected a string, got " + kind(v));
    return v.get<std::string>();
  }
  std::optional<data_type> read_dtype(const nlohmann::json& obj, const std::string& prefix) const {
    for (const char* key : {"dtype", "torch_dtype"}) {
      const nlohmann::json* v = present(obj, key);
      if (v == nullptr) continue;
      if (v->is_string()) {
        const auto text = v->get<std::string>();
        if (text == "float16" || text == "bfloat16" || text == "float32") return parse_enum<data_type>(text);
      }
      fail(prefix + "/" + key, R"(expected "float16", "bfloat16" or "float32", got )" + kind(*v));
    }
    return std::nullopt;
  }

  std::string origin_;
  const nlohmann::json& root_;
  model_dtype_keys dtype_keys_;
  const nlohmann::json* section_ = nullptr;
  std::string prefix_;
  bool convolution_ = false;  // the layer list names LFM2's "conv" layers
};

}  // namespace detail

ATTNSEL_INLINE std::optional<model_part> parse_model_part(std::string_view text) noexcept {
  if (text == "text") return model_part::text;
  if (text == "vision") return model_part::vision;
  if (text == "audio") return model_part::audio;
  return std::nullopt;
}

ATTNSEL_INLINE std::string_view to_string(model_part part) noexcept {
  switch (part) {
    case model_part::vision:
      return "vision";
    case model_part::audio:
      return "audio";
    case model_part::text:
      break;
  }
  return "text";
}

ATTNSEL_INLINE std::string_view to_string(layer_kind kind) noexcept {
  switch (kind) {
    case layer_kind::full:
      return "full";
    case layer_kind::sliding:
      return "sliding";
    case layer_kind::chunked:
      return "chunked";
    case layer_kind::linear:
      return "linear";
    case layer_kind::cross:
      return "cross";
    case layer_kind::encoder:
      return "encoder";
    case layer_kind::hybrid:
      return "hybrid";
    case layer_kind::mlp:
      return "mlp";
  }
  return "full";
}

ATTNSEL_INLINE std::optional<layer_kind> parse_layer_kind(std::string_view text) noexcept {
  for (const auto kind : all_layer_kinds)
    if (to_string(kind) == text) return kind;
  return std::nullopt;
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
