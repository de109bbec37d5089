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
  if (name == "vllm@0013943") return generated::vllm_0013943_catalog_json;
  if (name == "vllm-rocm-env@e2a00c7b") return generated::vllm_rocm_env_e2a00c7b_catalog_json;
  if (name == "torch_sdpa") return generated::torch_sdpa_catalog_json;
  return {};
}

ATTNSEL_INLINE catalog builtin_catalog(std::string_view name) {
  const auto text = builtin_catalog_json(name);
  if (text.empty()) {
    std::string known;
    for (auto n : builtin_catalog_names) known += (known.empty() ? "" : ", ") + std::string(n);
    throw std::invalid_argument("no built-in catalog named '" + std::string(name) + "' (built-in: " + known + ")");
  }
  // The embedded text was checked when it was built in (a test loads it): no depth pre-scan.
  catalog_limits trusted;
  trusted.max_depth = text.size();
  return parse_catalog_text(text, "builtin:" + std::string(name), trusted);
}

ATTNSEL_INLINE registry reference_registry() { return builtin_catalog("vllm").registry; }

ATTNSEL_INLINE registry torch_sdpa_registry() { return builtin_catalog("torch_sdpa").registry; }

ATTNSEL_END_NAMESPACE
