// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for model_plan.hpp: grouping a model's layers and planning each group.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/model/model_plan.hpp>
#endif

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/core/impl/select_inl.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/model/impl/model_plan/hybrid_pages.hpp>
#include <attnsel/model/impl/model_plan/model_rules.hpp>

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE bool layer_group::ok() const noexcept {
  return kind == layer_kind::encoder ? plan.prefill.ok() : plan.ok();
}

ATTNSEL_INLINE bool model_plan::ok() const noexcept {
  return conflicts.empty() && std::all_of(groups.begin(), groups.end(), [](const layer_group& g) { return g.ok(); });
}

namespace detail {
inline bool is_group_kind(layer_kind kind) noexcept {
  return std::find(std::begin(group_kinds), std::end(group_kinds), kind) != std::end(group_kinds);
}
}  // namespace detail

ATTNSEL_INLINE std::string group_kind_names() {
  return detail::join(group_kinds, ", ", [](layer_kind kind) { return std::string(to_string(kind)); });
}

ATTNSEL_INLINE std::optional<layer_kind> parse_group_kind(std::string_view text) noexcept {
  const auto kind = parse_layer_kind(text);
  if (!kind || !detail::is_group_kind(*kind)) return std::nullopt;
  return kind;
}

ATTNSEL_INLINE std::string layer_runs(const std::vector<std::uint32_t>& layers) {
  std::string out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(layers[i]);
    if (j > i) out += (j == i + 1 ? ", " : "-") + std::to_string(layers[j]);
    i = j + 1;
  }
  return out;
}

ATTNSEL_INLINE query layer_query(const model_config& model, layer_kind kind, query model_query) {
  query q = std::move(model_query);
  if (kind != layer_kind::sliding) q.required.erase(std::string(features::sliding_window));
  if (kind == layer_kind::full && model.global_head_size != 0 && q.mode == attention_mode::standard) {
    q.head_size = model.global_head_size;
    q.head_size_v = 0;
  }
  if (kind == layer_kind::linear) {
    q.domain = attention_domain::linear;
    q.mode = model.linear_mode;
  }
  if (kind == layer_kind::cross) q.attn_type = attention_type::encoder_decoder;
  return q;
}

ATTNSEL_INLINE query tower_query(const model_config& tower, const query& model_query, std::uint32_t tensor_parallel) {
  query base;  // the model's own facts only: what the caller chose to run it with
  base.dtype = model_query.dtype;
  base.phase = attention_phase::prefill;
  model_config own = tower;
  own.dtype.reset();  // the model's dtype, as the caller resolved it
  return own.to_query(std::move(base), tensor_parallel);
}

ATTNSEL_INLINE model_plan plan_model(const registry& reg, const model_config& model, const query& model_query,
                                     const platform& p, const override_set& base_overrides,
                                     const select_options& options, const model_plan_options& plan_options) {
  if (model.part != model_part::text)
    throw std::invalid_argument("plan_model: the plan is of a model's text part (got the " +
                                std::string(to_string(model.part)) + " part; its layers are a tower of the text's)");
  const auto& per_kind = plan_options.per_kind;
  model_plan out;
  out.assumptions = model.assumptions;
  for (auto it = per_kind.begin(); it != per_kind.end(); ++it) {
    if (!detail::is_group_kind(it->kind))
      throw std::invalid_argument("plan_model: a per-kind override names " + std::string(to_string(it->kind)) +
                                  " layers, which are in no group of their own; name one of " + group_kind_names());
    if (std::any_of(per_kind.begin(), it, [&](const kind_override& k) { return k.kind == it->kind; }))
      throw std::invalid_argument("plan_model: the per-kind overrides name " + std::string(to_string(it->kind)) +
                                  " layers twice");
  }
  std::vector<bool> used(per_kind.size(), false);
  // The engine's model rule: where nothing forced the attention backend, its `force` is every attention
  // layer's (vLLM's Gemma4Config sets attention_config.backend).
  // A backend the caller forced stands: the engines apply their rules only where none is set.
  override_set base = base_overrides;
  const model_rule* rule = plan_options.engine != nullptr && base.decoder.spec.empty()
                               ? detail::model_rule_for(*plan_options.engine, model, p)
                               : nullptr;
  if (rule != nullptr) {
    out.model_rule = rule->id;
    if (!rule->force.empty()) {
      base.decoder = override_request{rule->force, override_source::engine};
      out.notes.push_back("the engine forces " + rule->force + " on every attention layer (" + rule->id +
                          "): " + rule->because);
    } else {
      out.notes.push_back("the engine keeps each attention layer's own backend (" + rule->id + "): " + rule->because);
    }
  }
  // The overrides one group reads: its kind's own in place of its domain's.
  const auto overrides_for = [&](layer_kind kind) {
    override_set o = base;
    for (std::size_t i = 0; i < per_kind.size(); ++i) {
      if (per_kind[i].kind != kind) continue;
      used[i] = true;
      // A drafter with an override of its own reads that one (override_set::drafter): the kind's replaces it.
      const bool own_drafter = model_query.domain == attention_domain::drafter && o.drafter.has_value();
      override_request& slot = kind == layer_kind::linear    ? o.linear
                               : kind == layer_kind::encoder ? o.encoder
                               : own_drafter                 ? *o.drafter
                                                             : o.decoder;
      slot = per_kind[i].request;
    }
    return o;
  };
  // The groups: one per (kind, window) in order of first layer; a model without a layer list is one group.
  struct group_key {
    layer_kind kind;
    std::uint32_t window;
    std::vector<std::uint32_t> layers;
  };
  std::vector<group_key> keys;
  std::vector<layer_kind> kinds = model.layers;
  if (kinds.empty()) kinds.push_back(model.sliding_window != 0 ? layer_kind::sliding : layer_kind::full);
  std::vector<std::uint32_t> mixer_free;
  const auto add = [&](layer_kind kind, std::uint32_t layer) {
    const std::uint32_t window = kind == layer_kind::sliding   ? model.sliding_window
                                 : kind == layer_kind::chunked ? model.chunk_size
                                                               : 0;
    auto it = std::find_if(keys.begin(), keys.end(),
                           [&](const group_key& g) { return g.kind == kind && g.window == window; });
    if (it == keys.end()) {
      keys.push_back(group_key{kind, window, {}});
      it = std::prev(keys.end());
    }
    it->layers.push_back(layer);
  };
  for (std::uint32_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] == layer_kind::mlp) {
      mixer_free.push_back(i);  // no attention and no state: nothing to select
    } else if (kinds[i] == layer_kind::hybrid) {
      add(layer_kind::full, i);  // attention and a state-space mixer side by side: both selections
      add(layer_kind::linear, i);
    } else {
      add(kinds[i], i);
    }
  }
  if (!mixer_free.empty())
    out.notes.push_back(
        std::to_string(mixer_free.size()) + " layer" + (mixer_free.size() == 1 ? " has" : "s have") +
        " no attention or state, only an MLP or experts block, and no group: " + layer_runs(mixer_free));
  const auto every_layer = [](std::size_t count) {
    std::vector<std::uint32_t> layers(count);
    for (std::uint32_t i = 0; i < layers.size(); ++i) layers[i] = i;
    return layers;
  };
  // Each decoder layer's cross-attention reads the encoder's output, cached once per request (vLLM's
  // CrossAttentionSpec); the decoder's steps read it in both phases: one more group of every layer.
  if (model.cross_attention) keys.push_back(group_key{layer_kind::cross, 0, every_layer(model.layers.size())});
  out.groups.reserve(keys.size() + model.towers.size());
  for (auto& key : keys) {
    const query q = layer_query(model, key.kind, model_query);
    query decode = q;
    decode.seq_len_q = 1;
    const override_set overrides = overrides_for(key.kind);
    auto plan = plan_phases(reg, q, decode, p, overrides, options);
    // MLA: the latent query first; without a prefill answer, the per-head one (vLLM's MLA prefill).
    if (!plan.prefill.ok() && q.mode != attention_mode::standard && q.domain != attention_domain::linear &&
        model.head_size != 0 && model.head_size != q.head_size) {
      query per_head = q;
      per_head.head_size = model.head_size;
      per_head.head_size_v = model.head_size_v == model.head_size ? 0 : model.head_size_v;
      auto second = plan_phases(reg, per_head, decode, p, overrides, options);
      if (second.prefill.ok()) plan = std::move(second);
    }
    if (!plan.conflict.empty()) out.conflicts.push_back(std::string(to_string(key.kind)) + " layers: " + plan.conflict);
    out.groups.push_back(
        layer_group{key.kind, model_part::text, key.window, std::move(key.layers), std::move(plan), overrides});
  }
  for (const auto& tower : model.towers) {
    query q = tower_query(tower, model_query, plan_options.tensor_parallel);
    const override_set overrides = overrides_for(layer_kind::encoder);
    auto once = select(reg, q, p, overrides, options);
    phase_plan plan{once, once, q, q, 0, {}};
    out.groups.push_back(
        layer_group{layer_kind::encoder, tower.part, 0, every_layer(tower.layers.size()), std::move(plan), overrides});
  }
  for (std::size_t i = 0; i < per_kind.size(); ++i)
    if (!used[i])
      out.notes.push_back("the override for " + std::string(to_string(per_kind[i].kind)) + " layers (" +
                          std::string(per_kind[i].request.spec) + ") is unused: the model has none");
  // One block size for every attention group's cache (linear layers keep their own state): the first
  // group's choice that every other group accepts in both phases, else the first that all accept.
  std::vector<const layer_group*> attention;
  for (const auto& g : out.groups)
    if (g.kind != layer_kind::linear && g.kind != layer_kind::encoder && g.plan.prefill.ok() && g.plan.decode.ok())
      attention.push_back(&g);
  const auto all_accept = [&](std::uint32_t size) {
    return std::all_of(attention.begin(), attention.end(), [&](const layer_group* g) {
      return detail::accepts_block(g->plan.prefill.value(), size) &&
             detail::accepts_block(g->plan.decode.value(), size);
    });
  };
  std::vector<std::uint32_t> wanted;
  for (const auto* g : attention)
    if (g->plan.block_size != 0 && std::find(wanted.begin(), wanted.end(), g->plan.block_size) == wanted.end())
      wanted.push_back(g->plan.block_size);
  if (!wanted.empty()) {
    const auto fit = std::find_if(wanted.begin(), wanted.end(), all_accept);
    if (fit != wanted.end()) {
      out.block_size = *fit;
    } else {
      std::string why = "the attention groups share one KV-cache block size, and none suits all:";
      for (const auto* g : attention)
        if (g->plan.block_size != 0)
          why += " " + std::string(to_string(g->kind)) + " layers (" + std::string(g->plan.decode.value().name()) +
                 ") want " + std::to_string(g->plan.block_size) + ";";
      why.back() = '.';
      out.conflicts.push_back(std::move(why));
    }
  }
  // A hybrid model whose engine keeps linear state in the attention pages: the block size grows to hold it.
  const bool has_linear = std::any_of(out.groups.begin(), out.groups.end(),
                                      [](const layer_group& g) { return g.kind == layer_kind::linear; });
  if (has_linear && out.block_size != 0 && plan_options.engine && plan_options.engine->hybrid_pages) {
    const auto raised =
        detail::raise_for_linear_state(*plan_options.engine->hybrid_pages, model, attention, out.block_size, p,
                                       plan_options.tensor_parallel, plan_options.prefix_caching);
    if (!raised.assumption.empty()) out.assumptions.push_back(raised.assumption);
    if (!raised.note.empty()) out.notes.push_back(raised.note);
    if (raised.block_size != 0 && raised.block_size != out.block_size) {
      out.notes.push_back("block size " + std::to_string(raised.block_size) + " (the attention backends' own: " +
                          std::to_string(out.block_size) + "): one attention page holds a linear layer's state of " +
                          std::to_string(raised.state_bytes) + " bytes per rank; " +
                          plan_options.engine->hybrid_pages->because);
      out.linear_state_bytes = raised.state_bytes;
      out.block_size = raised.block_size;
      if (!all_accept(out.block_size))
        out.conflicts.push_back("the block size " + std::to_string(out.block_size) +
                                " that holds a linear layer's state is not one every attention group's kernels take");
    }
  }
  return out;
}

ATTNSEL_END_NAMESPACE
