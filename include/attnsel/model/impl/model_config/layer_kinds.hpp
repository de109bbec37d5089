// SPDX-License-Identifier: Apache-2.0
// The config.json reader's layer kinds: each text layer full, sliding, chunked, linear (with its mixer),
// hybrid or MLP-only, from the layer list when there is one, else from the model family's own rule.
#pragma once

#include <attnsel/core/impl/text.hpp>
#include <attnsel/model/impl/model_config/section_reader.hpp>

#include <limits>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

class layer_kind_reader : public config_section_reader {
 public:
  using config_section_reader::config_section_reader;

 protected:
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
  bool convolution_ = false;  // the layer list names LFM2's "conv" layers
};

}  // namespace detail

ATTNSEL_END_NAMESPACE
