// SPDX-License-Identifier: Apache-2.0
// The selection cases every benchmark and the instruction-count driver measure, shared by name.
#include <attnsel/all.hpp>

#include <array>
#include <cstddef>
#include <string_view>

namespace attnsel_bench {

namespace {

// One row: platform, query and override in, expected backend (or `error:<code>`) out.
struct case_row {
  std::string_view name;
  std::string_view catalog;   // "vllm" (reference_registry) or "torch_sdpa" (torch_sdpa_registry)
  std::string_view spec;      // override string; empty = automatic
  std::string_view expected;  // backend name, or "error:<code>"
  bool success;               // the fast path must not allocate for these
};

constexpr std::array<case_row, 10> rows{{
    {"cuda90_decoder", "vllm", "", "FLASH_ATTN", true},
    {"rocm942_sinks", "vllm", "", "ROCM_AITER_UNIFIED_ATTN", true},
    {"cuda90_forced_triton", "vllm", "TRITON_ATTN", "TRITON_ATTN", true},
    {"cuda100_mla", "vllm", "", "CUTLASS_MLA", true},
    {"cuda90_encoder", "vllm", "", "FLASH_ATTN", true},
    {"fail_rocm942_forced", "vllm", "ROCM_ATTN", "error:backend_rejected", false},
    {"fail_cuda90_no_backend", "vllm", "", "error:no_backend", false},
    {"fail_unknown_name", "vllm", "FLASH_ATN", "error:unknown_backend", false},
    // bench/torch/side_by_side.cpp's question (catalog format 2: the call's shape stated), in PyTorch's
    // two cuDNN modes on the H200 (cuDNN 9.19.0).
    {"sdpa_cudnn_preferred", "torch_sdpa", "", "CUDNN_ATTENTION", true},
    {"sdpa_cudnn_deprioritized", "torch_sdpa", "", "FLASH_ATTENTION", true},
}};

attnsel::platform rocm942_aiter() {
  auto p = attnsel::platform::rocm("gfx942");
  for (const char* c : {"aiter", "aiter_enabled", "aiter_mha", "aiter_mla"}) p.add_component(c);
  return p;
}

}  // namespace

/// The registry of a case's catalog, built once.
const attnsel::registry& case_registry(std::string_view catalog) {
  static const attnsel::registry vllm = attnsel::reference_registry();
  static const attnsel::registry sdpa = attnsel::torch_sdpa_registry();
  return catalog == "torch_sdpa" ? sdpa : vllm;
}

/// Number of cases.
std::size_t case_count() noexcept { return rows.size(); }

/// Builds case `i` (0 <= i < case_count()).
void make_case(std::size_t i, std::string_view& name, std::string_view& catalog, attnsel::query& q,
               attnsel::platform& p, std::string_view& spec, std::string_view& expected, bool& success) {
  using namespace attnsel;
  const auto& row = rows.at(i);
  name = row.name;
  catalog = row.catalog;
  spec = row.spec;
  expected = row.expected;
  success = row.success;
  q = query{};
  if (name == "cuda90_decoder" || name == "cuda90_forced_triton") {
    // vLLM's Hopper default: FLASH_ATTN is first in the CUDA order and accepts it.
    p = platform::cuda(9, 0);
  } else if (name == "rocm942_sinks" || name == "fail_rocm942_forced") {
    // gpt-oss on MI300 with AITER: ROCM_ATTN and ROCM_AITER_FA lack sinks, the third one wins.
    p = name == "rocm942_sinks" ? rocm942_aiter() : platform::rocm("gfx942");
    q.dtype = data_type::float16;
    q.block_size = 16;
    q.required.insert(features::sinks);
  } else if (name == "cuda100_mla") {
    // DeepSeek-style MLA on Blackwell without flashinfer: FLASHINFER_MLA rejected, CUTLASS_MLA wins.
    p = platform::cuda(10, 0);
    q.head_size = 576;
    q.mode = attention_mode::mla;
    q.num_heads = 128;
  } else if (name == "cuda90_encoder") {
    // A ViT encoder layer on Hopper.
    p = platform::cuda(9, 0);
    q.domain = attention_domain::encoder;
    q.attn_type = attention_type::encoder_only;
    q.head_size = 72;
    q.dtype = data_type::float16;
  } else if (name == "fail_cuda90_no_backend") {
    // No CUDA decoder backend has both ALiBi and non-causal attention: every one is rejected and the
    // error says why.
    p = platform::cuda(9, 0);
    q.required.insert(features::alibi);
    q.required.insert(features::non_causal);
  } else if (name == "fail_unknown_name") {
    p = platform::cuda(9, 0);
  } else if (name == "sdpa_cudnn_preferred" || name == "sdpa_cudnn_deprioritized") {
    // bf16, 8 heads of 128, 128 tokens, batch 1, no mask, not causal; torch prefers cuDNN > 9.15 on sm90
    // unless TORCH_CUDNN_SDPA_DEPRIORITIZED is set.
    p = platform::cuda(9, 0);
    p.add_component("cudnn", parse_component_version("9.19.0"));
    if (name == "sdpa_cudnn_preferred") p.add_component("cudnn_preferred");
    // The query as attnsel.torch.query_from_sdpa writes it for that call.
    q = query_from_json(parse_json_document(R"({"head_size": 128, "dtype": "bfloat16", "attn_type": "encoder_only",
        "num_heads": 8, "num_kv_heads": 8, "seq_len_q": 128, "seq_len_kv": 128, "batch_size": 1})"));
  }
}

}  // namespace attnsel_bench
