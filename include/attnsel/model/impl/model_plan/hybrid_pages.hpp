// SPDX-License-Identifier: Apache-2.0
// The block size that holds a hybrid model's linear state in one attention page (catalog hybrid_pages),
// as a model plan raises it.
#pragma once

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/core/impl/select_inl.hpp>
#include <attnsel/model/model_config.hpp>
#include <attnsel/model/model_plan.hpp>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Bytes of one token of one layer's paged K and V in `kv` (the compute dtype `dtype` for auto), or 0 for
// a cache dtype whose page vLLM lays out otherwise (the packed and quantized formats).
inline std::uint64_t kv_bytes_per_element(cache_dtype kv, data_type dtype) noexcept {
  switch (kv) {
    case cache_dtype::automatic:
      return dtype == data_type::float32 ? 4 : 2;
    case cache_dtype::float16:
    case cache_dtype::bfloat16:
      return 2;
    case cache_dtype::float32:
      return 4;
    case cache_dtype::fp8:
    case cache_dtype::fp8_e4m3:
    case cache_dtype::fp8_e5m2:
    case cache_dtype::fp8_inc:
      return 1;
    default:
      return 0;
  }
}

// The smallest KV-cache block a selection's kernel takes (the least of its bases; 1 when any size does).
inline std::uint32_t smallest_block(const selection& s) noexcept {
  std::uint32_t least = 0;
  if (s.variant != nullptr)
    for (const std::uint32_t b : s.variant->block_size_multiples)
      if (b != 0 && (least == 0 || b < least)) least = b;
  return least == 0 ? 1 : least;
}

// What raising the block size for a hybrid model's linear state gave: the new block size (0 when it did
// not apply), the state's bytes, and why it did not apply or what it assumed.
struct hybrid_block {
  std::uint32_t block_size = 0;
  std::uint64_t state_bytes = 0;
  std::string note;        // why it did not apply, for people; "" when it did
  std::string assumption;  // prefix caching taken as on, when that mattered
};

// vLLM 0.33.0 platforms/interface.py `_align_hybrid_block_size`: the step is the larger of the first
// attention group's smallest kernel block and the block size so far, times the checkpoint alignment with
// prefix caching; the block is the fewest steps whose page holds one linear layer's state, rounded up to
// a block every attention backend's kernel takes, and never below the block size so far.
inline hybrid_block raise_for_linear_state(const hybrid_pages& pages, const model_config& model,
                                           const std::vector<const layer_group*>& attention, std::uint32_t block_size,
                                           const platform& p, std::uint32_t tensor_parallel,
                                           std::optional<bool> prefix_caching) {
  hybrid_block out;
  if (attention.empty() || block_size == 0) return out;
  if (!model.state.known()) {
    out.note = "the KV-cache block size is the attention backends' own, not raised to hold a linear layer's state: " +
               (model.state.unknown.empty() ? std::string("the state is unknown") : model.state.unknown);
    return out;
  }
  const query& q = attention.front()->plan.decode_query;
  if (q.mode != attention_mode::standard) {
    out.note =
        "the KV-cache block size is the attention backends' own: attnsel does not size a hybrid model's "
        "MLA pages";
    return out;
  }
  const std::uint64_t element = kv_bytes_per_element(q.kv_cache_dtype, q.dtype);
  if (element == 0) {
    out.note = "the KV-cache block size is the attention backends' own: attnsel does not size hybrid pages of a " +
               std::string(to_string(q.kv_cache_dtype)) + " KV cache";
    return out;
  }
  const std::uint32_t tp = tensor_parallel == 0 ? 1 : tensor_parallel;
  const std::uint64_t kv_heads = std::max<std::uint64_t>(1, model.num_kv_heads / tp);
  const std::uint64_t per_token = kv_heads * 2 * q.head_size * element;
  out.state_bytes = model.state.bytes(q.dtype, tp);
  std::uint64_t step = std::max<std::uint64_t>(smallest_block(attention.front()->plan.decode.value()), block_size);
  const bool caching = prefix_caching.value_or(true);
  for (const auto& a : pages.checkpoint_alignments) {
    const bool mode =
        std::find(a.linear_modes.begin(), a.linear_modes.end(), model.linear_mode) != a.linear_modes.end();
    if (!mode || !platforms_accept(a.platforms, p)) continue;
    if (!prefix_caching)
      out.assumption =
          "prefix caching on (vLLM's default for a hybrid model): the linear layers checkpoint their "
          "state every " +
          std::to_string(a.tokens) + " tokens, and the block size is a multiple of it";
    if (caching) step = std::lcm(step, std::uint64_t{a.tokens});
  }
  if (step > limits::block_size) {
    out.note = "the KV-cache block size is the attention backends' own: its step of " + std::to_string(step) +
               " tokens is over attnsel's block-size limit";
    return out;
  }
  std::uint64_t kernel = 1;
  for (const auto* g : attention)
    kernel = std::lcm(kernel, std::lcm(std::uint64_t{smallest_block(g->plan.prefill.value())},
                                       std::uint64_t{smallest_block(g->plan.decode.value())}));
  const std::uint64_t step_bytes = step * per_token;
  std::uint64_t raised = step * ((out.state_bytes + step_bytes - 1) / step_bytes);
  raised = (raised + kernel - 1) / kernel * kernel;
  raised = std::max<std::uint64_t>(raised, block_size);
  if (raised > limits::block_size) {
    out.note = "a linear layer's state (" + std::to_string(out.state_bytes) +
               " bytes) needs a block size over attnsel's limit";
    return out;
  }
  out.block_size = static_cast<std::uint32_t>(raised);
  return out;
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
