// SPDX-License-Identifier: Apache-2.0
// Machine-readable reports: platforms, queries and selection traces as JSON, and back.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/select.hpp>

#include <nlohmann/json.hpp>

ATTNSEL_BEGIN_NAMESPACE

/// `{"vendor": "rocm", "arch": "gfx942", "components": [{"name": "aiter", "version": null}]}`.
[[nodiscard]] nlohmann::json to_json(const platform& p);
/// Every query field by name (`domain`, `head_size`, `head_size_v`, `dtype`, `kv_cache_dtype`,
/// `block_size` (null when unset), `attn_type`, `mode`, `num_heads` (null when unknown), `features`, and the
/// call: `num_kv_heads`, `phase`, `seq_len_q`, `seq_len_kv`, `batch_size` (each null when unstated)).
[[nodiscard]] nlohmann::json to_json(const query& q);
/// `{"name", "variant", "rank", "verdict", "forced", "reasons": [{"code", "message"}]}`.
[[nodiscard]] nlohmann::json to_json(const candidate_report& c);

/// The report `attnsel select --json` prints: backend, domain, platform, query, override, rule,
/// candidates, unstated (what the answer depends on that the query left unstated) and error (see
/// docs/cli.md for the exact shape).
[[nodiscard]] nlohmann::json to_json(const explanation& ex, const query& q, const platform& p,
                                     const override_request& ovr);

/// Reads a platform object as written by `to_json(platform)`; `arch` may also be spelled `capability`
/// and components may be `"name"` or `"name=version"` strings. Enum names are canonical and exact-case,
/// like a catalog's; unknown keys (in component objects too) are refused. Throws std::invalid_argument
/// naming the value (`platform.components.0.name: ...`). Read text with parse_json_document (catalog.hpp),
/// which refuses repeated keys.
[[nodiscard]] platform platform_from_json(const nlohmann::json& j);
/// Reads a query object; every key is optional (defaults of `query`), null counts as absent. Enum names
/// are canonical and exact-case; integers are bounded by limits.hpp. Throws std::invalid_argument.
[[nodiscard]] query query_from_json(const nlohmann::json& j);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/impl/report_inl.hpp>
#endif
