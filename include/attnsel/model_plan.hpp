// SPDX-License-Identifier: Apache-2.0
// A model's layers grouped by how they attend, each group's prefill and decode backends, and the rules an
// engine applies across groups (one KV-cache block size): "plan the whole model".
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/model_config.hpp>
#include <attnsel/selector.hpp>

#include <cstdint>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// The layers of one kind (and window, and head size) with their query and phase plan.
struct layer_group {
  layer_kind kind = layer_kind::full;
  std::uint32_t window = 0;           ///< the sliding window or the chunk, in tokens; 0 for full and linear layers
  std::vector<std::uint32_t> layers;  ///< 0-based layer indices, ascending
  phase_plan plan;                    ///< prefill and decode selections (their queries included) and block size
};

/// Every group of a model's text layers, in order of each group's first layer.
struct model_plan {
  std::vector<layer_group> groups;
  /// One KV-cache block size every attention group accepts, in prefill and decode (vLLM sizes one
  /// cache for all attention layers: cache_config.block_size); 0 when none matters or none fits.
  std::uint32_t block_size = 0;
  /// Why the groups cannot run together (a group's own plan conflict, or no common block size).
  std::vector<std::string> conflicts;
  /// What config.json left to the family's rule (model_config::assumptions).
  std::vector<std::string> assumptions;

  /// Every group selected both phases and nothing conflicts.
  [[nodiscard]] bool ok() const noexcept;
};

/// The query one kind of layer asks: `model_query` (model_config::to_query's, with the caller's fields
/// such as dtype and lengths) with the layer's own features and sizes. A sliding layer keeps the
/// `sliding_window` feature, other layers drop it; a full layer of a model with a global head size asks
/// with it; a linear layer is a query of the linear domain in the gated-delta mode (Qwen3-Next's
/// linear_attention).
[[nodiscard]] query layer_query(const model_config& model, layer_kind kind, query model_query);

/// Groups the text layers of `model` (one group of every layer when it lists none) and plans each group
/// with plan_phases. An MLA group whose latent query has no prefill backend asks prefill with the
/// per-head sizes (vLLM's MLA prefill). Decode queries ask one new token (seq_len_q 1).
[[nodiscard]] model_plan plan_model(const registry& reg, const model_config& model, const query& model_query,
                                    const platform& p, const override_set& overrides = {},
                                    const select_options& options = {});

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/impl/model_plan_inl.hpp>
#endif
