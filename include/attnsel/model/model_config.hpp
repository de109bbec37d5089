// SPDX-License-Identifier: Apache-2.0
// Reading a Hugging Face config.json into the attention facts a query needs ("ask with the model").
#pragma once

#include <attnsel/catalog/catalog_error.hpp>
#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// A config.json could not be read. `what()` reads `FILE: POINTER: problem`, the pointer naming the key
/// (`config.json: /num_attention_heads: expected a positive integer, got "32"`). A std::invalid_argument,
/// so Python sees a ValueError.
class model_config_error : public document_error<std::invalid_argument> {
 public:
  using document_error::document_error;
};

/// Which attention stack of a (multimodal) model to read.
enum class model_part : std::uint8_t {
  text,    ///< the language model: `text_config` when present, else the top level (an encoder–decoder
           ///< model's decoder: Whisper's `decoder_attention_heads`, `d_model`, `decoder_layers`)
  vision,  ///< the vision tower: `vision_config` (encoder domain, bidirectional attention)
  audio,   ///< the audio encoder: `audio_config` (Qwen2-Audio), else an encoder–decoder model's encoder
           ///< at the top level (Whisper's `encoder_attention_heads`, `d_model`, `encoder_layers`)
};

namespace detail {
template <>
struct enum_table<model_part> {
  static constexpr std::string_view type_name = "model part";
  static constexpr std::array<enum_row<model_part>, 3> rows{{
      {model_part::text, "text", "", "the language model"},
      {model_part::vision, "vision", "", "the vision tower"},
      {model_part::audio, "audio", "", "the audio encoder"},
  }};
};
}  // namespace detail

/// "text" / "vision" / "audio"; nullopt for anything else (exact case).
[[nodiscard]] std::optional<model_part> parse_model_part(std::string_view text) noexcept;

/// How one layer attends, as the engines derive it from config.json (vLLM's KV-cache spec kinds). A
/// decoder layer attends over every earlier token, over a sliding window of them, over its chunk of the
/// sequence (Llama 4's local layers), or by a linear-attention / state-space recurrence (Qwen3-Next's gated
/// delta net). An encoder–decoder model's decoder layers also attend across to the encoder's output
/// (`cross`: a group of the plan, not an entry of model_config::layers). A tower's layers (vision, audio)
/// attend over the whole input at once and keep no KV cache (`encoder`). A `hybrid` layer runs attention
/// over every earlier token and a state-space mixer side by side (Falcon-H1, Zamba2's shared blocks): a plan
/// puts it in the full group and the linear group both. An `mlp` layer has neither, only an MLP or
/// mixture-of-experts block (Nemotron-H's '-' and 'E'): it is in no group of a plan.
enum class layer_kind : std::uint8_t { full, sliding, chunked, linear, cross, encoder, hybrid, mlp };

namespace detail {
template <>
struct enum_table<layer_kind> {
  static constexpr std::string_view type_name = "layer kind";
  static constexpr std::array<enum_row<layer_kind>, 8> rows{{
      {layer_kind::full, "full", "", "attends over every earlier token"},
      {layer_kind::sliding, "sliding", "", "attends over a sliding window of earlier tokens"},
      {layer_kind::chunked, "chunked", "", "attends within its chunk of the sequence"},
      {layer_kind::linear, "linear", "", "a linear-attention or state-space recurrence"},
      {layer_kind::cross, "cross", "", "an encoder-decoder model's decoder attending to the encoder"},
      {layer_kind::encoder, "encoder", "", "a tower's layer: the whole input at once, no KV cache"},
      {layer_kind::hybrid, "hybrid", "", "full attention and a state-space mixer side by side"},
      {layer_kind::mlp, "mlp", "", "no attention: an MLP or mixture-of-experts block"},
  }};
};
}  // namespace detail

/// Every layer_kind, in declaration order: what a reader of kind names (CLI, Python) iterates.
inline constexpr auto all_layer_kinds = enum_values<layer_kind>();

/// The layer_kind `to_string` spells `text` (exact case); nullopt for anything else.
[[nodiscard]] std::optional<layer_kind> parse_layer_kind(std::string_view text) noexcept;

/// One linear (state-space or gated delta-rule) layer's recurrent state in elements, for the whole model
/// (the engine splits the channels and heads over tensor-parallel ranks), as vLLM 0.33.0's
/// `get_mamba_state_shape_from_config` of the family's model file builds it
/// (model_executor/layers/mamba/mamba_utils.py MambaStateShapeCalculator): a convolution state of
/// `conv_channels` x (`conv_kernel` - 1) and an SSM state of `ssm_heads` x `ssm_head_elements`. Absent
/// (`known()` false) for the mixers whose config keys attnsel does not read.
struct linear_state {
  std::uint64_t conv_channels = 0;
  std::uint32_t conv_kernel = 0;
  /// Groups of B and C channels in the convolution state (Mamba-2's n_groups): a rank holds whole
  /// groups, so fewer groups than ranks are repeated on each (mamba_utils.py extra_groups_for_head_shards).
  std::uint32_t conv_groups = 0;
  std::uint64_t conv_group_channels = 0;  ///< channels per group (2 x d_state)
  std::uint64_t ssm_heads = 0;
  std::uint64_t ssm_head_elements = 0;
  /// The SSM state's dtype where the engine fixes it (Nemotron-H: float32 unless the config names
  /// `mamba_ssm_cache_dtype`; Qwen3.5: the config's `mamba_ssm_dtype`), else the model's.
  std::optional<data_type> ssm_dtype;
  /// Why the state is not known, for people ("mamba_d_state absent (vLLM 0.33.0 jamba.py reads it)"); ""
  /// when it is, or when the model has no linear layers.
  std::string unknown;

  [[nodiscard]] bool known() const noexcept { return conv_kernel != 0 && ssm_heads != 0; }
  /// One layer's state on one of `tensor_parallel` ranks, in bytes: the convolution state in `dtype`,
  /// the SSM state in `ssm_dtype` or `dtype`. 0 when not known() or `tensor_parallel` is 0.
  [[nodiscard]] std::uint64_t bytes(data_type dtype, std::uint32_t tensor_parallel) const noexcept;
};

/// The attention facts of one part of a model, as read from its config.json. Sizes of 0 mean absent.
struct model_config {
  model_part part = model_part::text;
  std::string model_type;          ///< `model_type` of the section read ("" when absent)
  std::string architecture;        ///< `architectures[0]` of the document ("" when absent)
  std::string section;             ///< JSON pointer of the section read: "" (top level), "/text_config"...
  std::uint32_t head_size = 0;     ///< query/key head size (MLA: qk_nope_head_dim + qk_rope_head_dim)
  std::uint32_t head_size_v = 0;   ///< value head size (MLA: v_head_dim); equals head_size otherwise
  std::uint32_t num_heads = 0;     ///< query heads of the whole model (not per rank)
  std::uint32_t num_kv_heads = 0;  ///< key/value heads (num_key_value_heads; num_heads when absent)
  attention_mode mode = attention_mode::standard;  ///< mla with kv_lora_rank; sparse_mla with index_topk too
  std::uint32_t kv_lora_rank = 0;                  ///< MLA latent width (DeepSeek: 512)
  std::uint32_t qk_rope_head_dim = 0;              ///< MLA rotary part of the head (DeepSeek: 64)
  std::optional<data_type> dtype;                  ///< `torch_dtype` / `dtype`, when it names one attnsel has
  std::uint32_t sliding_window = 0;                ///< window size when sliding-window attention is on
  double softcap = 0;                              ///< `attn_logit_softcapping` (Gemma 2), 0 when absent
  bool sinks = false;                              ///< learned attention sinks (gpt-oss)
  bool mm_prefix = false;  ///< a prefix-LM: bidirectional attention over image tokens (Gemma 3 multimodal)
  /// The text part of an encoder–decoder model (`is_encoder_decoder`, or a decoder read from
  /// `decoder_attention_heads`): each decoder layer also attends to the encoder's output.
  bool cross_attention = false;
  /// The part's layers, one kind each; empty when the config does not count them. The text part:
  /// `num_hidden_layers` (`decoder_layers`) of them, from `layer_types` when the config lists them, else
  /// by the model family's rule that the engines follow (each applied rule is named in `assumptions`).
  /// A tower: `num_hidden_layers` (`depth`, `encoder_layers`) layers of kind `encoder`.
  std::vector<layer_kind> layers;
  /// The kind of the linear (and hybrid) layers' mixer: gated_delta (Qwen3-Next, Qwen3.5), mamba2
  /// (Nemotron-H, Granite 4 hybrid, Bamba, Zamba2, Falcon-H1), mamba1 (Jamba), short_conv (LFM2),
  /// lightning (MiniMax). A family attnsel does not know keeps gated_delta, named in `assumptions`.
  attention_mode linear_mode = attention_mode::gated_delta;
  /// The linear layers' state (linear_state), for the families whose keys attnsel reads: gated_delta
  /// (qwen3_next, qwen3_5...), mamba2 (nemotron_h, granitemoehybrid, zamba2, falcon_h1), mamba1 (jamba).
  linear_state state;
  /// The text part's towers (vision, audio) that the document describes, each read as its own part. A
  /// tower the reader cannot read is left out, and `assumptions` says why: the text part stays readable.
  std::vector<model_config> towers;
  std::uint32_t chunk_size = 0;        ///< `attention_chunk_size` of chunked layers (Llama 4), 0 when none
  std::uint32_t global_head_size = 0;  ///< full layers' own head size (Gemma 4 `global_head_dim`), 0: head_size
  /// What the reader assumed where config.json is silent, one sentence each with the code it follows
  /// ("sliding_window_pattern absent: Gemma 3's default 6, a layer full when (i + 1) % 6 == 0 ...").
  std::vector<std::string> assumptions;
  /// The features a query for this part requires, in catalog order: sliding_window, softcap, sinks,
  /// mm_prefix.
  [[nodiscard]] std::vector<std::string> features() const;

  /// `base` with this config's facts written in: domain and attention type (vision: encoder,
  /// encoder_only; audio: encoder, encoder (vLLM's Whisper encoder); text: decoder, decoder), head sizes, mode, dtype
  /// (when stated), the heads per rank (`num_heads / tensor_parallel`, rounded up; 0 leaves `base.num_heads`) and the
  /// features added to those of `base`. An MLA query's head size is the latent one, `kv_lora_rank + qk_rope_head_dim`
  /// (576 for DeepSeek, value head equal): MLA decode attends over the compressed KV, and vLLM selects MLA backends for
  /// it. The KV heads per rank (`num_kv_heads / tensor_parallel`, at least 1) go to `num_kv_heads` for a
  /// standard-attention model when they divide the heads per rank. Throws std::invalid_argument when
  /// `tensor_parallel` is 0.
  [[nodiscard]] query to_query(query base = {}, std::uint32_t tensor_parallel = 1) const;
};

/// The dtype an engine's `--dtype auto` runs a model in, as vLLM 0.33.0 resolves it
/// (`vllm/config/model.py::_resolve_auto_dtype`): the platform's supported dtypes are bfloat16, float16,
/// float32 (CUDA below 8.0: float16, float32; below 6.0: float32), less float16 for the model types vLLM
/// refuses it for (gemma2, gemma3, gemma3_text, glm4). A float32 checkpoint, or one whose dtype the
/// platform lacks, runs in the first of them; an unstated dtype is taken as float32 (the engine would
/// read the checkpoint's). A CUDA platform without a capability is treated as 8.0 and above.
[[nodiscard]] data_type auto_dtype(const platform& p, std::optional<data_type> config_dtype,
                                   std::string_view model_type = {});
/// Whether the reader reads the config's dtype (`dtype`, `torch_dtype`): `ignore` when the caller
/// states the dtype itself (`--dtype`), so a dtype attnsel does not know ("float8_e4m3fn") is no error.
enum class model_dtype_keys : std::uint8_t { read, ignore };

/// Reads the attention facts of `part` from the text of a Hugging Face config.json. Strict: a present key
/// of the wrong type or range, a head count that does not divide the hidden size, or a missing
/// `vision_config` for the vision part is a model_config_error naming the key. `origin` names the
/// document in messages. Unknown keys are ignored (config.json holds many unrelated ones), and may hold
/// NaN, Infinity or -Infinity (Python's json writes them); a key attnsel reads holding one is refused.
/// A head size the query could not carry (an MLA `kv_lora_rank + qk_rope_head_dim` over
/// limits::head_size) is refused at the key that makes it.
[[nodiscard]] model_config parse_model_config(std::string_view json_text, model_part part = model_part::text,
                                              std::string_view origin = "<string>",
                                              model_dtype_keys dtype_keys = model_dtype_keys::read);

/// parse_model_config on a file (at most limits::catalog_bytes); a missing or unreadable file is a
/// model_config_error with an empty pointer.
[[nodiscard]] model_config read_model_config_file(const std::string& path, model_part part = model_part::text,
                                                  model_dtype_keys dtype_keys = model_dtype_keys::read);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/model/impl/model_config_inl.hpp>
#endif
