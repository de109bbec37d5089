// SPDX-License-Identifier: Apache-2.0
// A reason: why one backend was rejected or skipped, as a stable code plus a readable message.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/enums.hpp>

#include <string>

ATTNSEL_BEGIN_NAMESPACE

/// One failed check. `code` is stable API (docs/reasons.md); `message` carries the actual and the
/// supported values ("head size 72 not in {64, 128, 256}") and may be reworded between releases.
struct reason {
  reason_code code = reason_code::custom;
  std::string message;

  friend bool operator==(const reason& a, const reason& b) { return a.code == b.code && a.message == b.message; }
  friend bool operator!=(const reason& a, const reason& b) { return !(a == b); }
};

/// `head_size: head size 72 not in {64, 128, 256}`: the code, a colon and the message (fmt prints the same).
[[nodiscard]] inline std::string to_string(const reason& r) {
  return std::string(to_string(r.code)) + ": " + r.message;
}

ATTNSEL_END_NAMESPACE
