// SPDX-License-Identifier: Apache-2.0
// The capability matrix: every backend (and variant) with what it accepts, and every priority order.
#pragma once

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/config.hpp>
#include <attnsel/core/checks.hpp>

#include <nlohmann/json.hpp>

#include <string>

ATTNSEL_BEGIN_NAMESPACE

/// Markdown document: a capability table per domain and the automatic order of every policy rule.
/// docs/backends.md is this text for the built-in catalogs; a test fails when it is stale.
[[nodiscard]] std::string matrix_markdown(const catalog& c);

/// The same content as JSON: `{"catalog", "backends": [{name, variant, domains, ...}], "orders": [...]}`.
[[nodiscard]] nlohmann::json matrix_json(const catalog& c);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/impl/matrix_inl.hpp>
#endif
