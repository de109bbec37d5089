// SPDX-License-Identifier: Apache-2.0
// A consumer program: selects a backend with the built-in catalog, as an engine would at layer setup.
#include <attnsel/attnsel.hpp>

#include <cstdio>

int main() {
  const auto reg = attnsel::reference_registry();
  attnsel::query q;
  q.head_size = 128;
  const auto result = attnsel::select(reg, q, attnsel::platform::rocm("gfx942"));
  if (!result) {
    std::fprintf(stderr, "%s\n", result.error().message.c_str());
    return 1;
  }
  std::printf("%s\n", std::string(result->name()).c_str());
  return result->name() == "ROCM_ATTN" ? 0 : 1;
}
