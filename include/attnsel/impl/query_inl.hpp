// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for query.hpp: the text form of a query.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/query.hpp>
#endif

ATTNSEL_BEGIN_NAMESPACE

namespace detail {
inline std::string format_names(const feature_set& names) {
  if (names.empty()) return "none";
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}
}  // namespace detail

ATTNSEL_INLINE std::string summary(const query& q) {
  std::string out = std::string(to_string(q.domain)) + " attention (head_size=" + std::to_string(q.head_size);
  if (q.value_head_size() != q.head_size) out += ", head_size_v=" + std::to_string(q.value_head_size());
  out += ", dtype=" + std::string(to_string(q.dtype)) + ", kv_cache_dtype=" + std::string(to_string(q.kv_cache_dtype));
  if (q.block_size) out += ", block_size=" + std::to_string(q.block_size);
  out += ", attn_type=" + std::string(to_string(q.attn_type)) + ", mode=" + std::string(to_string(q.mode));
  if (q.num_heads) out += ", num_heads=" + std::to_string(q.num_heads);
  if (!q.required.empty()) out += ", features=" + detail::format_names(q.required);
  return out + ")";
}

ATTNSEL_END_NAMESPACE
