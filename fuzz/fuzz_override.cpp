// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: override strings against the reference registry through select() and explain().
#include <attnsel/all.hpp>

#include "selection_invariants.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

using namespace attnsel;
using fuzz_support::check;
using fuzz_support::reference;
using fuzz_support::violated;

// Platforms and queries that reach every rule family of the reference catalog.
platform make_platform(unsigned which) {
  switch (which % 8) {
    case 0:
      return platform::cuda(9, 0).add_component_spec("flashinfer=0.2.5");
    case 1:
      return platform::cuda(10, 0).add_component_spec("flashinfer");
    case 2:
      return platform::cuda(8, 0);
    case 3:
      return platform::rocm("gfx942")
          .add_component_spec("aiter")
          .add_component_spec("aiter_mha")
          .add_component_spec("aiter_mla");
    case 4:
      return platform::rocm("gfx90a").add_component_spec("flash_attn");
    case 5:
      return platform::rocm("gfx1100");
    case 6:
      return platform::cpu();
    default:
      return platform::xpu();
  }
}

query make_query(unsigned which) {
  query q;
  switch (which % 10) {
    case 0:
      break;
    case 1:
      q.domain = attention_domain::encoder;
      q.attn_type = attention_type::encoder_only;
      q.head_size = 80;
      q.dtype = data_type::float16;
      break;
    case 2:
      q.mode = attention_mode::mla;
      q.head_size = 576;
      q.head_size_v = 512;
      q.kv_cache_dtype = cache_dtype::fp8;
      q.num_heads = 16;
      break;
    case 3:
      q.mode = attention_mode::sparse_mla;
      q.head_size = 576;
      q.head_size_v = 512;
      q.num_heads = 128;
      break;
    case 4:
      q.required.insert("sinks");
      q.block_size = 16;
      break;
    case 5:
      q.head_size = 72;
      q.dtype = data_type::float32;
      q.required.insert("alibi");
      break;
    case 6:
      q.kv_cache_dtype = cache_dtype::fp8_e4m3;
      q.block_size = 64;
      q.required.insert("kv_connector");
      break;
    case 7:
      q.domain = attention_domain::drafter;  // drafts as the decoder in the built-in catalogs
      q.phase = attention_phase::prefill;
      break;
    case 8:
      q.domain = attention_domain::linear;
      q.mode = attention_mode::mamba2;
      break;
    default:
      q.domain = attention_domain::encoder;
      q.attn_type = attention_type::encoder;
      q.head_size = 64;
      break;
  }
  return q;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  const std::string_view spec(reinterpret_cast<const char*>(data + 1), size - 1);
  const auto p = make_platform(selector & 7U);
  const auto q = make_query(selector >> 3U);  // 0..31: every query kind
  select_options options;
  options.prefer = (selector & 0x40U) != 0;
  override_request ovr{spec, (selector & 0x80U) ? override_source::env : override_source::api};
  check(reference(), q, p, ovr, options);
  return 0;
}
