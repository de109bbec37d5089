// SPDX-License-Identifier: Apache-2.0
// One kernel family, each engine's name for it: PyTorch's FLASH_ATTENTION is vLLM's FLASH_ATTN and SGLang's fa3.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>

#include <string_view>

ATTNSEL_BEGIN_NAMESPACE

/// A backend name as one built-in catalog spells it.
struct engine_name {
  std::string_view catalog;  ///< `vllm`, `sglang`, `torch_sdpa`
  std::string_view name;     ///< the backend as that catalog names it
};

/// Names of one kernel family across the built-in catalogs. Used for hints only ("`FLASH_ATTENTION` is
/// torch_sdpa's name; this catalog's equivalent is FLASH_ATTN"); never to select.
struct kernel_family {
  std::string_view family;  ///< what the kernels are: `FlashAttention`, `FlashInfer`
  engine_name names[4];     ///< up to four spellings; unused slots have an empty name
};

/// The families whose kernels two or more catalogs name (docs/overrides.md "Names across engines").
inline constexpr kernel_family kernel_families[] = {
    {"FlashAttention",
     {{"vllm", "FLASH_ATTN"}, {"sglang", "FA3"}, {"sglang", "FA4"}, {"torch_sdpa", "FLASH_ATTENTION"}}},
    {"FlashInfer", {{"vllm", "FLASHINFER"}, {"sglang", "FLASHINFER"}, {"sglang", "TRTLLM_MHA"}, {}}},
    {"Triton attention", {{"vllm", "TRITON_ATTN"}, {"sglang", "TRITON"}, {}, {}}},
    {"PyTorch SDPA", {{"vllm", "TORCH_SDPA"}, {"sglang", "TORCH_NATIVE"}, {"sglang", "SDPA"}, {}}},
    {"AITER", {{"vllm", "ROCM_AITER_FA"}, {"sglang", "AITER"}, {"sglang", "AITER_ATTN"}, {}}},
    {"FlashAttention MLA", {{"vllm", "FLASH_ATTN_MLA"}, {"sglang", "FA3_MLA"}, {}, {}}},
    {"FlashInfer MLA", {{"vllm", "FLASHINFER_MLA"}, {"sglang", "FLASHINFER_MLA"}, {"sglang", "TRTLLM_MLA"}, {}}},
    {"FlashMLA", {{"vllm", "FLASHMLA"}, {"sglang", "FLASHMLA"}, {}, {}}},
    {"CUTLASS MLA", {{"vllm", "CUTLASS_MLA"}, {"sglang@main-2026-12", "CUTLASS_MLA"}, {}, {}}},
    {"Triton MLA", {{"vllm", "TRITON_MLA"}, {"sglang", "TRITON_MLA"}, {}, {}}},
    {"AITER MLA", {{"vllm", "ROCM_AITER_MLA"}, {"sglang", "AITER_MLA"}, {}, {}}},
    {"CPU AMX", {{"vllm", "CPU_ATTN"}, {"sglang", "INTEL_AMX"}, {"sglang", "AMX_ATTN"}, {}}},
};

/// For a name some catalog uses (any case), the first spelling of the same family that `has(name)`
/// accepts (a registry's lookup), with where the typed name comes from. `found` is false when the name
/// is in no family or the family has no spelling `has` accepts.
struct equivalent_name {
  bool found = false;
  std::string_view family;
  std::string_view from_catalog;  ///< the catalog whose name was typed
  std::string_view name;          ///< the spelling `has` accepted
};

template <class Has>
[[nodiscard]] equivalent_name find_equivalent(std::string_view typed, Has&& has) {
  for (const auto& f : kernel_families) {
    const engine_name* from = nullptr;
    for (const auto& n : f.names)
      if (from == nullptr && !n.name.empty() && detail::iequals(n.name, typed)) from = &n;
    if (from == nullptr) continue;
    for (const auto& n : f.names)
      if (!n.name.empty() && !detail::iequals(n.name, typed) && has(n.name))
        return {true, f.family, from->catalog, n.name};
  }
  return {};
}

ATTNSEL_END_NAMESPACE
