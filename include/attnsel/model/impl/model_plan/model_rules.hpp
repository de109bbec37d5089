// SPDX-License-Identifier: Apache-2.0
// The engine's model rules that a model plan applies (catalog model_rules): the first that holds for the
// model and platform forces every attention layer's backend.
#pragma once

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/core/impl/shape_inl.hpp>
#include <attnsel/model/model_config.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// The head sizes of the model's attention layers (full layers take the global head size where the model
// has one): the largest, and whether they differ.
struct attention_heads {
  std::uint32_t largest = 0;
  bool mixed = false;
};

inline attention_heads attention_heads_of(const model_config& model) {
  attention_heads out;
  std::optional<std::uint32_t> first;
  for (const layer_kind k : model.layers) {
    if (k == layer_kind::linear || k == layer_kind::mlp) continue;
    const std::uint32_t size =
        k == layer_kind::full && model.global_head_size != 0 ? model.global_head_size : model.head_size;
    out.largest = std::max(out.largest, size);
    if (first && *first != size) out.mixed = true;
    if (!first) first = size;
  }
  return out;
}

// The first of the engine's model rules that holds for `model` on `p`, or null.
inline const model_rule* model_rule_for(const catalog_info& engine, const model_config& model, const platform& p) {
  const auto heads = attention_heads_of(model);
  const auto has = [&](const component_condition& req) { return component_in_range(req, p); };
  for (const auto& r : engine.model_rules) {
    if (std::find(r.architectures.begin(), r.architectures.end(), model.architecture) == r.architectures.end())
      continue;
    if (r.mixed_head_sizes && !heads.mixed) continue;
    if (!platforms_accept(r.platforms, p)) continue;
    if (!std::all_of(r.requires_components.begin(), r.requires_components.end(), has)) continue;
    if (r.max_head_size != 0 && heads.largest > r.max_head_size) continue;
    return &r;
  }
  return nullptr;
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
