// SPDX-License-Identifier: Apache-2.0
// The built-in reference catalogs: vLLM's backends and priorities, and PyTorch SDPA's backends.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/registry.hpp>

#include <array>
#include <string_view>

ATTNSEL_BEGIN_NAMESPACE

/// Names of the built-in catalogs, in display order. `vllm` and `sglang` are aliases (builtin_catalog_aliases)
/// of the newest engine release the differential oracle has run (docs/oracle.md): `vllm@0.33.0` and
/// `sglang@0.5.23`. `vllm@main-2026-12` and `sglang@main-2026-12` are the engines' main branches as read by
/// hand before the oracle (the cases in tests/data/*_cases.json hold on them); `vllm@00159db` and
/// `vllm@0013943` are the catalog as it stood before issue 20 and before issue 11; `vllm-rocm-env@e2a00c7b`
/// is the vLLM catalog with the ROCm decoder order from before vLLM's priority refactor. `torch_sdpa` is PyTorch
/// 2.11's SDPA (the GPU host's release) and `torch_sdpa@2.14.0` the newest release's. Every name but the
/// aliases is one file catalog/<name>.json (the CMake list ATTNSEL_CATALOGS).
inline constexpr std::array<std::string_view, 11> builtin_catalog_names{
    {"vllm", "vllm@0.33.0", "vllm@main-2026-12", "vllm@00159db", "vllm@0013943", "vllm-rocm-env@e2a00c7b", "torch_sdpa",
     "torch_sdpa@2.14.0", "sglang", "sglang@0.5.23", "sglang@main-2026-12"}};

/// An unversioned built-in name and the versioned catalog it stands for.
struct builtin_catalog_alias {
  std::string_view name;
  std::string_view target;
};

/// The unversioned names: each follows the newest release of its engine that the oracle has run.
inline constexpr std::array<builtin_catalog_alias, 2> builtin_catalog_aliases{
    {{"vllm", "vllm@0.33.0"}, {"sglang", "sglang@0.5.23"}}};

/// The catalog a built-in name stands for: an alias's target, any other name itself.
[[nodiscard]] constexpr std::string_view builtin_catalog_target(std::string_view name) noexcept {
  // NOLINTNEXTLINE(readability-use-anyofallof): std::find_if is not constexpr before C++20
  for (const auto& a : builtin_catalog_aliases)
    if (a.name == name) return a.target;
  return name;
}

/// True when `name` is one of builtin_catalog_names.
[[nodiscard]] constexpr bool is_builtin_catalog(std::string_view name) noexcept {
  // NOLINTNEXTLINE(readability-use-anyofallof): std::any_of is not constexpr before C++20; this function is
  for (auto n : builtin_catalog_names)
    if (n == name) return true;
  return false;
}

/// The registry of a built-in catalog, built from constant tables compiled in at build time (no JSON
/// parsing). Equal to `builtin_catalog(name).registry`; <attnsel/catalog/builtin_catalog.hpp> has the JSON text. Throws
/// std::invalid_argument for an unknown name.
[[nodiscard]] registry builtin_registry(std::string_view name);

/// The default registry, `vllm`: vLLM's newest oracle-checked release (backends and priority policies for
/// CUDA, ROCm, CPU and XPU, both domains).
[[nodiscard]] registry reference_registry();

/// PyTorch scaled_dot_product_attention's backends (FLASH_ATTENTION, EFFICIENT_ATTENTION, CUDNN_ATTENTION, MATH).
[[nodiscard]] registry torch_sdpa_registry();

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/impl/reference_inl.hpp>
#endif
