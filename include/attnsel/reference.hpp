// SPDX-License-Identifier: Apache-2.0
// The built-in reference catalogs: vLLM's backends and priorities, and PyTorch SDPA's backends.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/registry.hpp>

#include <array>
#include <string_view>

ATTNSEL_BEGIN_NAMESPACE

/// Names of the built-in catalogs, in display order (the CMake list ATTNSEL_CATALOGS, same order).
inline constexpr std::array<std::string_view, 2> builtin_catalog_names{{"vllm", "torch_sdpa"}};

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
