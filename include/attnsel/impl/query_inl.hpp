// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for query.hpp: the text form of a query.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/query.hpp>
#endif

#include <attnsel/impl/text.hpp>
#include <attnsel/impl/value_text.hpp>

#include <algorithm>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE std::string validation_message(const query& q) {
  const auto range = [](const char* what, std::uint32_t value, std::uint32_t lo, std::uint32_t hi) {
    return std::string(what) + " " + std::to_string(value) + " is outside [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]";
  };
  if (q.head_size == 0 || q.head_size > max_head_size) return range("head size", q.head_size, 1, max_head_size);
  if (q.head_size_v > max_head_size) return range("value head size", q.head_size_v, 1, max_head_size);
  if (q.block_size > max_block_size) return range("block size", q.block_size, 1, max_block_size);
  if (q.num_heads > max_num_heads) return range("num_heads", q.num_heads, 1, max_num_heads);
  if (q.num_kv_heads > max_num_heads) return range("num_kv_heads", q.num_kv_heads, 1, max_num_heads);
  if (q.seq_len_q > limits::seq_len) return range("seq_len_q", q.seq_len_q, 1, limits::seq_len);
  if (q.seq_len_kv > limits::seq_len) return range("seq_len_kv", q.seq_len_kv, 1, limits::seq_len);
  if (q.batch_size > limits::batch_size) return range("batch_size", q.batch_size, 1, limits::batch_size);
  if (static_cast<std::size_t>(q.domain) >= enum_values<attention_domain>().size())
    return "domain " + std::to_string(static_cast<unsigned>(q.domain)) + " is not one of " +
           enum_names<attention_domain>();
  if (static_cast<std::size_t>(q.phase) >= enum_values<attention_phase>().size())
    return "phase " + std::to_string(static_cast<unsigned>(q.phase)) + " is not one of " +
           enum_names<attention_phase>();
  if (q.num_heads != 0 && q.num_kv_heads != 0 && q.num_heads % q.num_kv_heads != 0)
    return "num_heads " + std::to_string(q.num_heads) + " is not a multiple of num_kv_heads " +
           std::to_string(q.num_kv_heads);
  for (const auto& f : q.required)
    if (!is_valid_feature_name(f))
      // Escaped and cut by detail::escape_text(): the message is ASCII, so JSON and terminals take it whole.
      return "feature name '" + detail::escape_text(f, limits::name_length) +
             "' is not lower_snake ([a-z][a-z0-9_]*, at most 64 characters)";
  return {};
}

ATTNSEL_INLINE std::string to_string(const query& q) {
  std::string out = std::string(to_string(q.domain)) + " attention (head_size=" + std::to_string(q.head_size);
  if (q.value_head_size() != q.head_size) out += ", head_size_v=" + std::to_string(q.value_head_size());
  out += ", dtype=" + std::string(to_string(q.dtype)) + ", kv_cache_dtype=" + std::string(to_string(q.kv_cache_dtype));
  if (q.block_size) out += ", block_size=" + std::to_string(q.block_size);
  out += ", attn_type=" + std::string(to_string(q.attn_type)) + ", mode=" + std::string(to_string(q.mode));
  if (q.num_heads) out += ", num_heads=" + std::to_string(q.num_heads);
  if (q.num_kv_heads) out += ", num_kv_heads=" + std::to_string(q.num_kv_heads);
  if (!q.required.empty()) out += ", features=" + detail::format_names(q.required);
  if (q.phase != attention_phase::unstated) out += ", phase=" + std::string(to_string(q.phase));
  if (q.seq_len_q) out += ", seq_len_q=" + std::to_string(q.seq_len_q);
  if (q.seq_len_kv) out += ", seq_len_kv=" + std::to_string(q.seq_len_kv);
  if (q.batch_size) out += ", batch_size=" + std::to_string(q.batch_size);
  return out + ")";
}

ATTNSEL_END_NAMESPACE
