// SPDX-License-Identifier: Apache-2.0
// Every enumeration of the public API, each backed by one constexpr table (names, aliases, docs).
#pragma once

#include <attnsel/config.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

ATTNSEL_BEGIN_NAMESPACE

/// Which model part a selection is for. Each domain has its own policy rules and its own override.
/// `drafter` is the speculative-decoding draft model's attention; a catalog whose backends serve no
/// drafter selects it with its decoder backends and rules. `linear` is the linear-attention and
/// state-space layers of hybrid models (GDN, KDA, Mamba, short convolution), whose kind is the query's mode.
enum class attention_domain : std::uint8_t { decoder, encoder, drafter, linear };
/// The 0.1 name of `attention_domain`; removed in the next minor release.
using attn_domain [[deprecated("use attention_domain")]] = attention_domain;

/// Accelerator vendor of a platform.
enum class device_vendor : std::uint8_t { cuda, rocm, xpu, cpu, tpu };

/// Compute (activation) dtype of an attention layer.
enum class data_type : std::uint8_t { float16, bfloat16, float32 };

/// Storage dtype of the paged KV cache. `automatic` ("auto") means "the compute dtype".
enum class cache_dtype : std::uint8_t {
  automatic,
  float16,
  bfloat16,
  float32,
  fp8,
  fp8_e4m3,
  fp8_e5m2,
  fp8_inc,
  fp8_ds_mla,
  fp8_per_token_head,
  int8_per_token_head,
  int4_per_token_head,
  int2_per_token_head,
  nvfp4,
  nvfp4_4over6,
  nvfp4_ds_mla,
  turboquant_k8v4,
  turboquant_4bit_nc,
  turboquant_k3v4_nc,
  turboquant_3bit_nc,
  octave_k3v4,
  octave_k3v3,
  octave_k3v3_compact,
  ultraquant_4bit,
};

/// How the engine treats a forced backend where a policy rule matches (the rule's catalog key `forced`).
/// attnsel's own rule is `honoured`; the others state an engine that substitutes, so that the answer is
/// the engine's and the explanation says a forced backend was replaced.
enum class forced_handling : std::uint8_t { honoured, fallback, ignored };

/// What an engine does where an advisory (a known-bad combination) holds: it runs the backend and warns,
/// or it demotes the backend (automatic selection moves on; a forced one is refused).
enum class advisory_action : std::uint8_t { warn, demote };

/// Which tokens attend to which (vLLM's AttentionType).
enum class attention_type : std::uint8_t { decoder, encoder, encoder_only, encoder_decoder };

/// Attention formulation; a backend's mode must match the query's exactly, in both directions. The last
/// five are the kinds of the linear domain's layers.
enum class attention_mode : std::uint8_t {
  standard,
  mla,
  sparse_mla,
  gated_delta,
  mamba1,
  mamba2,
  short_conv,
  lightning
};

/// The phase of the call a query describes (catalog format 2): a prompt pass (`prefill`), a one-token step
/// over a KV cache (`decode`), or `unstated` (the layer as a whole, for every call).
enum class attention_phase : std::uint8_t { unstated, prefill, decode };

/// ROCm architecture families a platform constraint or policy rule may name.
enum class gfx_family : std::uint8_t { gfx9, gfx10, gfx11, gfx12, mi300, cdna, rdna };

/// Stable code of one failed capability check or one skipped candidate. Part of the API.
enum class reason_code : std::uint8_t {
  platform,          ///< the backend does not run on this vendor
  capability,        ///< the vendor matches but the compute capability / gfx arch does not
  component,         ///< a required library or kernel package is missing or too old
  domain,            ///< the backend does not serve this domain (decoder / encoder / drafter / linear)
  mode,              ///< standard / MLA / sparse MLA mismatch
  attn_type,         ///< attention type (decoder, encoder, encoder_only, encoder_decoder)
  dtype,             ///< compute dtype
  kv_cache_dtype,    ///< KV-cache dtype
  head_size,         ///< head size or value head size
  block_size,        ///< KV-cache block size
  feature,           ///< a feature the query requires (sinks, alibi, ...) is not declared
  custom,            ///< the backend's own cross-field predicate
  excluded,          ///< removed from automatic selection by a `-NAME` override entry
  not_in_policy,     ///< the platform's priority order does not list it (still forcible)
  policy_condition,  ///< listed by the policy, but its component condition is not met
  seq_len,           ///< a sequence length is outside the backend's range (format 2)
  batch_size,        ///< the batch size is outside the backend's range (format 2)
  gqa_group,         ///< the GQA group size (num_heads / num_kv_heads) is outside the backend's range
  call_rule,         ///< a conditional rule on the call refuses this combination (format 2)
  forced_ignored,    ///< forced, but the engine does not read the override here (policy_rule::forced)
  advisory           ///< a known-bad combination (an advisory) that the engine demotes, or that the caller refuses
};

/// Stable code of a failed selection. Part of the API.
enum class error_code : std::uint8_t {
  unknown_backend,   ///< the override names a backend that is not registered
  backend_rejected,  ///< every backend the override forced failed its checks
  no_backend,        ///< automatic selection found no supported backend
  bad_override,      ///< the override string is malformed
  bad_query,         ///< the query itself is out of range (head size 0, malformed feature name)
};

/// Where an override string came from; reported in results so operators know what was honoured.
enum class override_source : std::uint8_t { none, api, flag, env, config, engine };

/// Outcome of one candidate in a selection trace.
enum class verdict : std::uint8_t { selected, supported, rejected, skipped };

namespace detail {

template <class E>
struct enum_row {
  E value;
  std::string_view name;     // canonical text, as printed and written to JSON
  std::string_view aliases;  // space-separated extra spellings accepted by parse
  std::string_view doc;      // one line for --help and docs
};

template <class E>
struct enum_table;  // specialised below: static constexpr rows, type name

template <>
struct enum_table<attention_domain> {
  static constexpr std::string_view type_name = "domain";
  static constexpr std::array<enum_row<attention_domain>, 4> rows{{
      {attention_domain::decoder, "decoder", "lm language_model", "language-model decoder layers"},
      {attention_domain::encoder, "encoder", "vit vision mm_encoder", "vision / multimodal encoder layers"},
      {attention_domain::drafter, "drafter", "draft speculative",
       "the speculative-decoding draft model's layers (the decoder's backends and rules unless stated)"},
      {attention_domain::linear, "linear", "linear_attention mamba ssm",
       "linear-attention and state-space layers of hybrid models (the mode names the kind)"},
  }};
};

template <>
struct enum_table<device_vendor> {
  static constexpr std::string_view type_name = "platform";
  static constexpr std::array<enum_row<device_vendor>, 5> rows{{
      {device_vendor::cuda, "cuda", "nvidia", "NVIDIA GPUs (compute capability major.minor)"},
      {device_vendor::rocm, "rocm", "amd hip", "AMD GPUs (gfx architecture)"},
      {device_vendor::xpu, "xpu", "intel", "Intel GPUs"},
      {device_vendor::cpu, "cpu", "", "host CPU"},
      {device_vendor::tpu, "tpu", "", "Google TPUs"},
  }};
};

template <>
struct enum_table<data_type> {
  static constexpr std::string_view type_name = "dtype";
  static constexpr std::array<enum_row<data_type>, 3> rows{{
      {data_type::float16, "float16", "fp16 half", "IEEE half precision"},
      {data_type::bfloat16, "bfloat16", "bf16", "bfloat16"},
      {data_type::float32, "float32", "fp32 float", "single precision"},
  }};
};

template <>
struct enum_table<cache_dtype> {
  static constexpr std::string_view type_name = "kv-cache dtype";
  static constexpr std::array<enum_row<cache_dtype>, 24> rows{{
      {cache_dtype::automatic, "auto", "", "same as the compute dtype"},
      {cache_dtype::float16, "float16", "fp16 half", "half precision cache"},
      {cache_dtype::bfloat16, "bfloat16", "bf16", "bfloat16 cache"},
      {cache_dtype::float32, "float32", "fp32 float", "single precision cache"},
      {cache_dtype::fp8, "fp8", "", "fp8, format chosen by the platform (e4m3 on CUDA)"},
      {cache_dtype::fp8_e4m3, "fp8_e4m3", "", "fp8 e4m3"},
      {cache_dtype::fp8_e5m2, "fp8_e5m2", "", "fp8 e5m2"},
      {cache_dtype::fp8_inc, "fp8_inc", "", "fp8 for Intel Gaudi (INC)"},
      {cache_dtype::fp8_ds_mla, "fp8_ds_mla", "", "DeepSeek sparse-MLA fp8 layout"},
      {cache_dtype::fp8_per_token_head, "fp8_per_token_head", "", "fp8 with per-token-head scales"},
      {cache_dtype::int8_per_token_head, "int8_per_token_head", "", "int8 with per-token-head scales"},
      {cache_dtype::int4_per_token_head, "int4_per_token_head", "", "int4 with per-token-head scales"},
      {cache_dtype::int2_per_token_head, "int2_per_token_head", "", "int2 with per-token-head scales"},
      {cache_dtype::nvfp4, "nvfp4", "", "NVFP4 (4-bit float, 16-element blocks)"},
      {cache_dtype::nvfp4_4over6, "nvfp4_4over6", "", "NVFP4 with the 4-over-6 scale choice"},
      {cache_dtype::nvfp4_ds_mla, "nvfp4_ds_mla", "", "DeepSeek sparse-MLA NVFP4 layout"},
      {cache_dtype::turboquant_k8v4, "turboquant_k8v4", "", "TurboQuant: 8-bit keys, 4-bit values"},
      {cache_dtype::turboquant_4bit_nc, "turboquant_4bit_nc", "", "TurboQuant 4-bit, no centering"},
      {cache_dtype::turboquant_k3v4_nc, "turboquant_k3v4_nc", "", "TurboQuant: 3-bit keys, 4-bit values, no centering"},
      {cache_dtype::turboquant_3bit_nc, "turboquant_3bit_nc", "", "TurboQuant 3-bit, no centering"},
      {cache_dtype::octave_k3v4, "octave_k3v4", "", "Octave: 3-bit keys, 4-bit values"},
      {cache_dtype::octave_k3v3, "octave_k3v3", "", "Octave: 3-bit keys and values"},
      {cache_dtype::octave_k3v3_compact, "octave_k3v3_compact", "", "Octave 3-bit, compact layout"},
      {cache_dtype::ultraquant_4bit, "ultraquant_4bit", "", "UltraQuant 4-bit"},
  }};
};

template <>
struct enum_table<attention_type> {
  static constexpr std::string_view type_name = "attention type";
  static constexpr std::array<enum_row<attention_type>, 4> rows{{
      {attention_type::decoder, "decoder", "causal", "causal self-attention over a paged KV cache"},
      {attention_type::encoder, "encoder", "", "encoder self-attention in an encoder-decoder model"},
      {attention_type::encoder_only, "encoder_only", "bidirectional", "bidirectional self-attention without KV cache"},
      {attention_type::encoder_decoder, "encoder_decoder", "cross", "cross-attention from decoder to encoder states"},
  }};
};

template <>
struct enum_table<attention_mode> {
  static constexpr std::string_view type_name = "mode";
  static constexpr std::array<enum_row<attention_mode>, 8> rows{{
      {attention_mode::standard, "standard", "mha", "multi-head / grouped-query attention"},
      {attention_mode::mla, "mla", "", "multi-head latent attention (DeepSeek)"},
      {attention_mode::sparse_mla, "sparse_mla", "sparse", "sparse MLA (DeepSeek V3.2)"},
      {attention_mode::gated_delta, "gated_delta", "gdn",
       "gated delta-rule linear attention: GDN (Qwen3-Next, Qwen3.5), KDA (Kimi Linear; feature kda)"},
      {attention_mode::mamba1, "mamba1", "", "Mamba-1 selective state space (Mamba, Jamba)"},
      {attention_mode::mamba2, "mamba2", "", "Mamba-2 state space (Nemotron-H, Falcon-H1, Granite 4 hybrid)"},
      {attention_mode::short_conv, "short_conv", "conv", "gated short convolution (LFM2)"},
      {attention_mode::lightning, "lightning", "linear_attention",
       "lightning / plain linear attention (MiniMax-Text-01, Bailing linear)"},
  }};
};

template <>
struct enum_table<forced_handling> {
  static constexpr std::string_view type_name = "forced handling";
  static constexpr std::array<enum_row<forced_handling>, 3> rows{{
      {forced_handling::honoured, "honoured", "", "a forced backend runs, or the selection fails"},
      {forced_handling::fallback, "fallback", "",
       "a forced backend that cannot run is replaced by the rule's automatic order (the engine logs it)"},
      {forced_handling::ignored, "ignored", "",
       "the engine does not read a forced backend here: the rule's automatic order decides"},
  }};
};

template <>
struct enum_table<advisory_action> {
  static constexpr std::string_view type_name = "advisory action";
  static constexpr std::array<enum_row<advisory_action>, 2> rows{{
      {advisory_action::warn, "warn", "",
       "the engine runs the backend and warns; the selection carries the advisory (`refuse_advisories` refuses it)"},
      {advisory_action::demote, "demote", "",
       "the engine does not run the backend here: automatic selection moves on, a forced backend is refused"},
  }};
};

template <>
struct enum_table<attention_phase> {
  static constexpr std::string_view type_name = "phase";
  static constexpr std::array<enum_row<attention_phase>, 3> rows{{
      {attention_phase::unstated, "unstated", "any none", "not stated: the layer as a whole, for every call"},
      {attention_phase::prefill, "prefill", "prompt extend", "a prompt pass (many query tokens per sequence)"},
      {attention_phase::decode, "decode", "generate", "a token step over the KV cache"},
  }};
};

template <>
struct enum_table<gfx_family> {
  static constexpr std::string_view type_name = "gfx family";
  static constexpr std::array<enum_row<gfx_family>, 7> rows{{
      {gfx_family::gfx9, "gfx9", "", "every gfx9xx target (GCN / CDNA)"},
      {gfx_family::gfx10, "gfx10", "rdna2", "gfx10xx (RDNA 1/2)"},
      {gfx_family::gfx11, "gfx11", "rdna3", "gfx11xx (RDNA 3)"},
      {gfx_family::gfx12, "gfx12", "rdna4", "gfx12xx (RDNA 4)"},
      {gfx_family::mi300, "mi300", "mi3xx", "MI300-class: gfx942 and gfx950"},
      {gfx_family::cdna, "cdna", "", "CDNA data-centre parts: gfx908, gfx90a, gfx942, gfx950"},
      {gfx_family::rdna, "rdna", "gfx1x", "every gfx10/11/12 target"},
  }};
};

/// A `reason_code` row: the enum row (its `doc` is the meaning docs/reasons.md shows) plus the
/// messages the check writes, for the generated table in docs/reasons.md.
struct reason_row : enum_row<reason_code> {
  std::string_view examples;  // example messages, separated by '\n'
};

template <>
struct enum_table<reason_code> {
  static constexpr std::string_view type_name = "reason code";
  static constexpr std::array<reason_row, 21> rows{{
      {{reason_code::platform, "platform", "", "No variant runs on this vendor."}, "runs on cuda, not rocm"},
      {{reason_code::capability, "capability", "",
        "The vendor matches but the compute capability or gfx target is outside every variant's range. An unknown "
        "capability is outside any range."},
       "compute capability 7.5 is outside cuda [8.0, any]\ngfx1100 is outside rocm gfx942|gfx950"},
      {{reason_code::component, "component", "",
        "A required component is missing, too old, or present without the version the backend needs."},
       "needs component flashinfer, which is not present\nneeds flashinfer >= 0.2, found 0.1.9"},
      {{reason_code::domain, "domain", "",
        "The backend does not serve this domain (decoder, encoder, drafter, linear)."},
       "serves {decoder}, not the encoder domain"},
      {{reason_code::mode, "mode", "", "Standard / MLA / sparse-MLA mismatch; checked in both directions."},
       "mode mla not supported (backend is standard)"},
      {{reason_code::attn_type, "attn_type", "", "Attention type not supported."},
       "attention type encoder_decoder not in {decoder}"},
      {{reason_code::dtype, "dtype", "", "Compute dtype not supported."}, "dtype float32 not in {float16, bfloat16}"},
      {{reason_code::kv_cache_dtype, "kv_cache_dtype", "",
        "KV-cache dtype not supported. `auto` passes when the backend lists `auto` or the compute dtype."},
       "kv-cache dtype fp8_e5m2 not in {auto, float16, bfloat16, fp8}"},
      {{reason_code::head_size, "head_size", "",
        "Head size, or value head size (which must equal the head size unless the backend declares "
        "`value_head_sizes`)."},
       "head size 72 not in {64, 128, 256}\nvalue head size 64 differs from head size 128 (backend needs them equal)"},
      {{reason_code::block_size, "block_size", "",
        "A pinned block size is not a multiple of any supported base. An unpinned (0) block size is never "
        "filtered."},
       "block size 8 is not a multiple of any of {16}"},
      {{reason_code::feature, "feature", "",
        "A feature the query requires is not declared; one reason per missing feature."},
       "feature sinks not supported (supports: mm_prefix, kv_connector)"},
      {{reason_code::custom, "custom", "",
        "The backend's own cross-field predicate (`extra_check`) failed or threw; the message is the predicate's "
        "when it gives one."},
       "custom check failed\ncustom check threw an exception"},
      {{reason_code::excluded, "excluded", "", "Removed from automatic selection by a `-NAME` override entry."},
       "removed by the override"},
      {{reason_code::not_in_policy, "not_in_policy", "",
        "Serves the domain but the matching priority rule does not list it; it can still be forced."},
       "not in the automatic order for decoder rocm; it can still be forced"},
      {{reason_code::policy_condition, "policy_condition", "",
        "Listed by the policy on a condition that is not met (a component absent or present, a feature "
        "required)."},
       "the policy tries it only when component aiter_mha is present\nthe policy tries it only in the decode phase"},
      {{reason_code::seq_len, "seq_len", "",
        "A stated sequence length (seq_len_q, seq_len_kv) is outside the variant's range. An unstated length is "
        "never checked; explain lists the range under `unstated`."},
       "seq_len_kv 1 is outside [2, inf]"},
      {{reason_code::batch_size, "batch_size", "", "The stated batch size is outside the variant's range."},
       "batch_size 70000 is outside [1, 65535]"},
      {{reason_code::gqa_group, "gqa_group", "",
        "The GQA group size (num_heads / num_kv_heads, both stated) is outside the variant's range."},
       "gqa_group 4 is outside [1, 1]"},
      {{reason_code::call_rule, "call_rule", "",
        "A conditional rule of the variant refuses the stated call: its `when` holds and its `require` does not. "
        "A rule whose condition reads an unstated field is not applied; explain lists it under `unstated`."},
       "when attn_type decoder, requires seq_len_q == seq_len_kv: seq_len_q 1, seq_len_kv 256 (causal flash "
       "needs equal lengths)"},
      {{reason_code::forced_ignored, "forced_ignored", "",
        "Forced, but the engine does not read a forced backend for this query (the matching rule's `forced` is "
        "`ignored`): it runs the rule's automatic order, and the message gives the rule's note."},
       "the engine does not read a forced backend here (xpu: platforms/xpu.py takes float32 to TRITON_ATTN first)"},
      {{reason_code::advisory, "advisory", "",
        "A known-bad combination (a catalog advisory, with its upstream issue) holds: the engine demotes the "
        "backend, or the caller asked to refuse every advisory (`refuse_advisories`). A warning advisory on a "
        "selected backend is not a reason; the selection carries it."},
       "advisory vllm-fa4-batch-invariant-sinks: ... (https://github.com/vllm-project/vllm/pull/36059)"},
  }};
};

template <>
struct enum_table<error_code> {
  static constexpr std::string_view type_name = "error code";
  static constexpr std::array<enum_row<error_code>, 5> rows{{
      {error_code::unknown_backend, "unknown_backend", "", "the override names an unknown backend"},
      {error_code::backend_rejected, "backend_rejected", "", "every forced backend failed its capability checks"},
      {error_code::no_backend, "no_backend", "", "no backend supports the query"},
      {error_code::bad_override, "bad_override", "", "the override string is malformed"},
      {error_code::bad_query, "bad_query", "", "the query is out of range"},
  }};
};

template <>
struct enum_table<override_source> {
  static constexpr std::string_view type_name = "override source";
  static constexpr std::array<enum_row<override_source>, 6> rows{{
      {override_source::none, "none", "", "no override"},
      {override_source::api, "api", "", "passed by the calling program"},
      {override_source::flag, "flag", "", "a command-line flag"},
      {override_source::env, "env", "", "an environment variable"},
      {override_source::config, "config", "", "a configuration file"},
      {override_source::engine, "engine", "", "the engine's own rule for the model (catalog model_rules)"},
  }};
};

template <>
struct enum_table<verdict> {
  static constexpr std::string_view type_name = "verdict";
  static constexpr std::array<enum_row<verdict>, 4> rows{{
      {verdict::selected, "selected", "", "the backend that was chosen"},
      {verdict::supported, "supported", "", "passes every check but ranks below the choice"},
      {verdict::rejected, "rejected", "", "failed at least one check"},
      {verdict::skipped, "skipped", "", "not tried: excluded, not in the order, or after the choice"},
  }};
};

constexpr char ascii_lower(char c) noexcept { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

// True when `word` equals one of the space-separated words of `list`, ignoring ASCII case.
constexpr bool in_word_list(std::string_view list, std::string_view word) noexcept {
  while (!list.empty()) {
    const auto space = list.find(' ');
    const auto head = list.substr(0, space);
    if (!head.empty() && iequals(head, word)) return true;
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return false;
}

}  // namespace detail

/// Canonical text of an enumerator (the table's `name` column); never empty.
template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
constexpr std::string_view to_string(E value) noexcept {
  for (const auto& row : detail::enum_table<E>::rows)
    if (row.value == value) return row.name;
  return "?";
}

/// One-line description of an enumerator, for help texts and generated docs.
template <class E>
constexpr std::string_view describe(E value) noexcept {
  for (const auto& row : detail::enum_table<E>::rows)
    if (row.value == value) return row.doc;
  return {};
}

/// Strict, case-insensitive parse of a name or alias; `std::nullopt` for anything else.
template <class E>
constexpr std::optional<E> parse_enum(std::string_view text) noexcept {
  for (const auto& row : detail::enum_table<E>::rows)
    if (detail::iequals(row.name, text) || detail::in_word_list(row.aliases, text)) return row.value;
  return std::nullopt;
}

/// All canonical names of `E`, joined by `sep` (for "expected one of ..." messages).
template <class E>
std::string enum_names(std::string_view sep = ", ") {
  std::string out;
  for (const auto& row : detail::enum_table<E>::rows) {
    if (!out.empty()) out += sep;
    out += row.name;
  }
  return out;
}

/// All enumerators of `E` in table order.
template <class E>
constexpr auto enum_values() noexcept {
  std::array<E, detail::enum_table<E>::rows.size()> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = detail::enum_table<E>::rows[i].value;
  return out;
}

/// A set of enumerators of `E` as a bitmask; the empty set means "any" where a field says so.
template <class E>
class enum_set {
 public:
  constexpr enum_set() noexcept = default;
  constexpr enum_set(std::initializer_list<E> values) noexcept {
    for (E v : values) insert(v);
  }
  constexpr void insert(E v) noexcept { bits_ |= bit(v); }
  constexpr void erase(E v) noexcept { bits_ &= ~bit(v); }
  [[nodiscard]] constexpr bool contains(E v) const noexcept { return (bits_ & bit(v)) != 0; }
  [[nodiscard]] constexpr bool empty() const noexcept { return bits_ == 0; }
  [[nodiscard]] constexpr std::uint32_t bits() const noexcept { return bits_; }
  friend constexpr bool operator==(enum_set a, enum_set b) noexcept { return a.bits_ == b.bits_; }
  friend constexpr bool operator!=(enum_set a, enum_set b) noexcept { return a.bits_ != b.bits_; }

  /// Enumerators in table order, e.g. for printing.
  template <class F>
  constexpr void for_each(F&& f) const {
    for (E v : enum_values<E>())
      if (contains(v)) f(v);
  }

 private:
  static constexpr std::uint32_t bit(E v) noexcept { return std::uint32_t{1} << static_cast<unsigned>(v); }
  std::uint32_t bits_ = 0;
};

using domain_set = enum_set<attention_domain>;
using data_type_set = enum_set<data_type>;
using cache_dtype_set = enum_set<cache_dtype>;
using attention_type_set = enum_set<attention_type>;
using attention_mode_set = enum_set<attention_mode>;
using phase_set = enum_set<attention_phase>;

ATTNSEL_END_NAMESPACE
