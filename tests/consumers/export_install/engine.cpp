// SPDX-License-Identifier: Apache-2.0
// The engine library of the export_install consumer: one function that calls into attnsel. It includes
// the header by its old flat path on purpose: the installed forwarding header must keep it working.
#include <attnsel/selector.hpp>

bool engine_can_select(const attnsel::registry& reg) {
  return static_cast<bool>(attnsel::select(reg, attnsel::query{}, attnsel::platform::cuda(9, 0)));
}
