// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for reference.hpp: the embedded catalogs.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/reference.hpp>
#endif

#include <attnsel/generated/catalogs.hpp>

#include <stdexcept>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE std::string_view builtin_catalog_json(std::string_view name) noexcept {
  if (name == "vllm") return generated::vllm_catalog_json;
  if (name == "torch_sdpa") return generated::torch_sdpa_catalog_json;
  return {};
}

ATTNSEL_INLINE catalog builtin_catalog(std::string_view name) {
  const auto text = builtin_catalog_json(name);
  if (text.empty()) throw std::invalid_argument("no built-in catalog named '" + std::string(name) + "'");
  // The embedded text was checked when it was built in (a test loads it): no depth pre-scan.
  catalog_limits trusted;
  trusted.max_depth = text.size();
  return parse_catalog_text(text, "builtin:" + std::string(name), trusted);
}

ATTNSEL_INLINE registry reference_registry() { return builtin_catalog("vllm").registry; }

ATTNSEL_INLINE registry torch_sdpa_registry() { return builtin_catalog("torch_sdpa").registry; }

ATTNSEL_END_NAMESPACE
