// SPDX-License-Identifier: Apache-2.0
// A model's layers grouped by how they attend, each group's prefill and decode backends, and the rules an
// engine applies across groups (one KV-cache block size): "plan the whole model".
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/override.hpp>
#include <attnsel/core/select.hpp>
#include <attnsel/model/model_config.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

struct catalog_info;  // catalog.hpp: the engine's model rules and hybrid paging (model_plan_options::engine)

/// The layers of one kind (and window, and head size) of one part with their query and phase plan.
struct layer_group {
  layer_kind kind = layer_kind::full;
  model_part part = model_part::text;  ///< text, or the tower (vision, audio) an `encoder` group belongs to
  std::uint32_t window = 0;            ///< the sliding window or the chunk, in tokens; 0 for other layers
  std::vector<std::uint32_t> layers;   ///< 0-based layer indices of the part, ascending
  /// Prefill and decode selections (their queries included) and block size. An `encoder` group (a tower)
  /// runs once over each input and keeps no KV cache: `plan.prefill` is its selection, and `plan.decode`
  /// repeats it (phase decode is never asked of it).
  phase_plan plan;
  /// The overrides the group's selections read: plan_model's, with its kind's own (kind_override). Views
  /// the specs plan_model was given.
  override_set overrides;

  /// The group's selections succeeded: both phases, or a tower's one.
  [[nodiscard]] bool ok() const noexcept;
};

/// Every group of a model's text layers in order of each group's first layer, then an encoder–decoder
/// model's cross-attention, then each tower's (vision, then audio).
struct model_plan {
  std::vector<layer_group> groups;
  /// One KV-cache block size every attention group accepts, in prefill and decode (vLLM sizes one
  /// cache for all attention layers: cache_config.block_size); 0 when none matters or none fits.
  std::uint32_t block_size = 0;
  /// Why the groups cannot run together (a group's own plan conflict, or no common block size).
  std::vector<std::string> conflicts;
  /// What config.json left to the family's rule (model_config::assumptions).
  std::vector<std::string> assumptions;
  /// What the plan was given and did not use (a per-kind override of a kind the model has no layer of),
  /// and what the engine's own rules did: a model rule that forced a backend, a block size raised to
  /// hold a linear layer's state.
  std::vector<std::string> notes;
  /// The engine's model rule that held (catalog model_rules), "" when none did.
  std::string model_rule;
  /// One linear layer's state per rank in bytes, when the block size was raised to hold it in one
  /// attention page (catalog hybrid_pages); 0 otherwise.
  std::uint64_t linear_state_bytes = 0;

  /// Every group selected both phases and nothing conflicts.
  [[nodiscard]] bool ok() const noexcept;
};

/// An override for the layers of one kind (vLLM's attention_config.backend_per_kind): the group of that
/// kind reads it in place of its domain's override (decoder; linear for linear layers; encoder for the
/// towers' `encoder` groups). A phase override (override_set::prefill, ::decode) still wins over it in
/// its phase, as vLLM's decode backend wins over the per-kind one.
struct kind_override {
  layer_kind kind = layer_kind::full;
  override_request request;
};

/// The kinds a layer_group has, which a kind_override may name: every layer_kind but `hybrid` (its layers
/// are in the full and the linear group) and `mlp` (in no group).
inline constexpr layer_kind group_kinds[] = {layer_kind::full,   layer_kind::sliding, layer_kind::chunked,
                                             layer_kind::linear, layer_kind::cross,   layer_kind::encoder};
/// "full, sliding, chunked, linear, cross, encoder": group_kinds for messages.
[[nodiscard]] std::string group_kind_names();
/// The group kind `text` names (exact case), as parse_layer_kind but none of hybrid and mlp.
[[nodiscard]] std::optional<layer_kind> parse_group_kind(std::string_view text) noexcept;

/// The query one kind of layer asks: `model_query` (model_config::to_query's, with the caller's fields
/// such as dtype and lengths) with the layer's own features and sizes. A sliding layer keeps the
/// `sliding_window` feature, other layers drop it; a full layer of a model with a global head size asks
/// with it; a linear layer is a query of the linear domain in the model's linear_mode (Qwen3-Next's
/// gated delta net, Nemotron-H's Mamba-2...).
[[nodiscard]] query layer_query(const model_config& model, layer_kind kind, query model_query);

/// Ascending layer indices as runs, for people: "0-4, 6, 8-10" (two in a row read "6, 7").
[[nodiscard]] std::string layer_runs(const std::vector<std::uint32_t>& layers);

/// What plan_model takes beyond the selection options.
struct model_plan_options {
  /// Overrides of one kind of layer each (kind_override); a kind named twice, or one that is not in
  /// group_kinds, is std::invalid_argument.
  std::vector<kind_override> per_kind;
  /// The ranks the model's heads are split over, as model_config::to_query's `tensor_parallel`: a tower's
  /// heads per rank (its text layers' are already in `model_query`).
  std::uint32_t tensor_parallel = 1;
  /// The engine's rules beyond one layer: its model rules (catalog_info::model_rules) and how it pages a
  /// hybrid model's linear state (catalog_info::hybrid_pages). Null: the plan applies neither. Views the
  /// caller's catalog_info.
  const catalog_info* engine = nullptr;
  /// Prefix caching (vLLM's --enable-prefix-caching), which hybrid paging reads; unset: on, vLLM's
  /// default for a generative hybrid model (named among the assumptions where it matters).
  std::optional<bool> prefix_caching{};
};

/// The query of a tower's layers (model_config::towers) in a plan: `tower.to_query(base,
/// tensor_parallel)` where `base` is `model_query` less what belongs to the text layers and their calls
/// (features, KV heads, KV-cache block size and dtype, lengths, batch). The tower runs in the model's
/// dtype (`model_query.dtype`: vLLM casts the whole model to one), and its heads are split over the same
/// ranks as the text layers' (vLLM shards the encoder's heads too).
[[nodiscard]] query tower_query(const model_config& tower, const query& model_query, std::uint32_t tensor_parallel = 1);

/// Groups the text layers of `model` (one group of every layer when it lists none) and plans each group
/// with plan_phases. A hybrid layer is in the full group and the linear group; an mlp layer is in none
/// (a note lists them). An MLA group whose latent query has no prefill backend asks prefill with the
/// per-head sizes (vLLM's MLA prefill). Decode queries ask one new token (seq_len_q 1). An
/// encoder–decoder model adds a `cross` group over every decoder layer (attention type encoder_decoder),
/// and each tower an `encoder` group (tower_query). The common block size is of the groups with a paged
/// KV cache (neither linear nor encoder groups). Each group reads `base_overrides` with its kind's own
/// from `plan_options.per_kind`; an entry for a kind with no group is a note. With `plan_options.engine`,
/// the first of its model rules that holds may force every attention group's backend where
/// `base_overrides` forces none, and a hybrid model's block size is raised until one attention page holds
/// one linear layer's state (model_config::state). `model` must be a text
/// part (std::invalid_argument otherwise: a tower is planned as one of its towers).
[[nodiscard]] model_plan plan_model(const registry& reg, const model_config& model, const query& model_query,
                                    const platform& p, const override_set& base_overrides = {},
                                    const select_options& options = {}, const model_plan_options& plan_options = {});

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/model/impl/model_plan_inl.hpp>
#endif
