// SPDX-License-Identifier: Apache-2.0
// bench/compile_cost.sh's translation unit: what an engine's file that asks attnsel once compiles.
#include <attnsel/attnsel.hpp>

int main() {
  const attnsel::registry reg = attnsel::reference_registry();
  attnsel::query q;
  q.head_size = 128;
  const auto result = attnsel::select(reg, q, attnsel::platform::cuda(9, 0));
  return result ? static_cast<int>(result->rank) : 1;
}
