// SPDX-License-Identifier: Apache-2.0
// A catalog's "policies" whose calls axis is huge: the diff-space refusal tests (library and CLI) share it.
#pragma once

#include <string>

namespace fixtures {

/// `rules` decoder rules on cuda, each with its own seq_len_q, seq_len_kv, batch_size and gqa_group
/// range (3k..3k), every one ordering backend A: about (2 * rules + 2)^4 calls.
inline std::string wide_call_policies(int rules) {
  std::string policies;
  for (int k = 1; k <= rules; ++k) {
    const auto v = std::to_string(3 * k);
    const auto range = R"({"min": )" + v + R"(, "max": )" + v + "}";
    policies += (k > 1 ? "," : "") + std::string(R"({"domain": "decoder", "vendor": "cuda", "seq_len_q": )") + range +
                R"(, "seq_len_kv": )" + range + R"(, "batch_size": )" + range + R"(, "gqa_group": )" + range +
                R"(, "order": ["A"]})";
  }
  return policies;
}

}  // namespace fixtures
