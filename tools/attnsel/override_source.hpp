// SPDX-License-Identifier: Apache-2.0
// Chooses the override of a run: the --backend flag, else the domain's own environment variable.
#pragma once

#include <attnsel/enums.hpp>
#include <attnsel/override.hpp>

#include <string>

namespace attnsel_cli {

/// The override text and where it came from. Owns the text `request()` views.
struct chosen_override {
  std::string spec;
  attnsel::override_source source = attnsel::override_source::none;
  std::string origin;  ///< `--backend` or the variable's name; empty without an override
  std::string note;    ///< non-empty when the flag shadowed a set environment variable

  /// The request for the selector; valid while this object lives.
  [[nodiscard]] attnsel::override_request request() const { return {spec, source}; }
};

/// Environment variable read for `domain`: ATTNSEL_BACKEND (decoder), ATTNSEL_ENCODER_BACKEND (encoder).
[[nodiscard]] const char* override_variable(attnsel::attention_domain domain) noexcept;

/// The flag when given (even empty: an explicit `auto`), else the domain's variable when set and
/// non-empty, else no override. Each domain reads only its own variable.
[[nodiscard]] chosen_override choose_override(bool flag_given, const std::string& flag,
                                              attnsel::attention_domain domain);

}  // namespace attnsel_cli
