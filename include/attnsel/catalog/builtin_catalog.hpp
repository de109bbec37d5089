// SPDX-License-Identifier: Apache-2.0
// A built-in catalog parsed from its embedded JSON, with metadata (the JSON side of reference.hpp).
#pragma once

#include <attnsel/catalog/catalog.hpp>
#include <attnsel/catalog/reference.hpp>
#include <attnsel/config.hpp>

#include <string_view>

ATTNSEL_BEGIN_NAMESPACE

/// JSON text of a built-in catalog (`vllm`, `torch_sdpa`); empty when the name is unknown.
[[nodiscard]] std::string_view builtin_catalog_json(std::string_view name) noexcept;

/// Parses a built-in catalog (one of `builtin_catalog_names`) from its embedded JSON text. Throws
/// std::invalid_argument for an unknown name. Each call parses afresh (no hidden cache); for the
/// registry alone `builtin_registry(name)` is faster (compiled-in tables, no JSON).
[[nodiscard]] catalog builtin_catalog(std::string_view name);

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/impl/builtin_catalog_inl.hpp>
#endif
