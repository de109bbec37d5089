// SPDX-License-Identifier: Apache-2.0
// The README example: select a backend, then ask why the ones ranked above it were passed over.
#include <attnsel/attnsel.hpp>

int main() {
  const attnsel::registry reg = attnsel::reference_registry();  // vLLM's backends and priorities

  attnsel::platform mi300 = attnsel::platform::rocm("gfx942");
  mi300.add_component_spec("aiter");

  attnsel::query layer;  // decoder, head size 128, bfloat16, kv-cache auto
  layer.head_size = 64;
  layer.required.insert("sinks");  // gpt-oss needs attention sinks

  auto result = attnsel::select(reg, layer, mi300);  // or (..., attnsel::override_request{"TRITON_ATTN"})
  if (!result) {                                     // error code, message, every candidate's reasons
    fmt::print(stderr, "{}\n", result.error());
    return 1;
  }
  fmt::print("{} (rank {})\n", result->name(), result->rank);  // ROCM_AITER_UNIFIED_ATTN (rank 2)

  // "Why not the faster one?"
  for (const auto& c : attnsel::explain(reg, layer, mi300).candidates)
    for (const auto& r : c.reasons)
      fmt::print("{}: {}\n", c.name, r);  // ROCM_ATTN: feature: feature sinks not supported ...
}
