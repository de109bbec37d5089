// SPDX-License-Identifier: Apache-2.0
// The built-in reference catalogs: vLLM's backends and priorities, and PyTorch SDPA's backends.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/registry.hpp>

#include <array>
#include <string_view>

ATTNSEL_BEGIN_NAMESPACE

/// Names of the built-in catalogs, in display order (the CMake list ATTNSEL_CATALOGS, same order).
/// `vllm` follows vLLM's newest code and tests; `vllm@00159db` and `vllm@0013943` are the catalog as it
/// stood before issue 20 and before issue 11 (kept so changes can be diffed); `vllm-rocm-env@e2a00c7b` is
/// `vllm` with the ROCm decoder order from before vLLM's priority refactor; `sglang` is SGLang's automatic
/// choice (docs/engines/sglang.md).
inline constexpr std::array<std::string_view, 6> builtin_catalog_names{
    {"vllm", "vllm@00159db", "vllm@0013943", "vllm-rocm-env@e2a00c7b", "torch_sdpa", "sglang"}};

/// True when `name` is one of builtin_catalog_names.
[[nodiscard]] constexpr bool is_builtin_catalog(std::string_view name) noexcept {
  // NOLINTNEXTLINE(readability-use-anyofallof): std::any_of is not constexpr before C++20; this function is
  for (auto n : builtin_catalog_names)
    if (n == name) return true;
  return false;
}

/// The registry of a built-in catalog, built from constant tables compiled in at build time (no JSON
/// parsing). Equal to `builtin_catalog(name).registry`; <attnsel/builtin_catalog.hpp> has the JSON text. Throws
/// std::invalid_argument for an unknown name.
[[nodiscard]] registry builtin_registry(std::string_view name);

/// The default registry: vLLM's backends and priority policies for CUDA, ROCm, CPU and XPU, both domains.
[[nodiscard]] registry reference_registry();

/// PyTorch scaled_dot_product_attention's backends (FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH).
[[nodiscard]] registry torch_sdpa_registry();

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/impl/reference_inl.hpp>
#endif
