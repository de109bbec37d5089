// SPDX-License-Identifier: Apache-2.0
// Chooses the override of a run: the --backend flag, else the domain's own environment variable.
#pragma once

#include <attnsel/core/enums.hpp>
#include <attnsel/core/override.hpp>

#include <optional>
#include <string>

namespace attnsel_cli {

/// The override text and where it came from. Owns the text `request()` views.
struct chosen_override {
  std::string spec;
  attnsel::override_source source = attnsel::override_source::none;
  std::string origin;      ///< `--backend` or the variable's name; empty without an override
  std::string note;        ///< non-empty when the flag shadowed a set environment variable
  bool inherited = false;  ///< a drafter without its own override: it reads the decoder's (and its phases')

  /// The request for the selector; valid while this object lives.
  [[nodiscard]] attnsel::override_request request() const { return {spec, source}; }
};

/// Environment variable read for `domain`: ATTNSEL_BACKEND (decoder), ATTNSEL_ENCODER_BACKEND (encoder),
/// ATTNSEL_DRAFTER_BACKEND (drafter), ATTNSEL_LINEAR_BACKEND (linear).
[[nodiscard]] const char* override_variable(attnsel::attention_domain domain) noexcept;

/// The flag when given (even empty: an explicit `auto`), else the domain's variable when set and
/// non-empty, else no override. Each domain reads only its own variable, but a drafter without one
/// inherits the decoder's (`inherited`).
[[nodiscard]] chosen_override choose_override(bool flag_given, const std::string& flag,
                                              attnsel::attention_domain domain);

/// The override of one phase of `domain`'s layers (the decoder's, or the linear layers'): the flag
/// (`--prefill-backend` / `--decode-backend`, `--linear-prefill-backend` / `--linear-decode-backend`)
/// when given, else ATTNSEL_PREFILL_BACKEND / ATTNSEL_DECODE_BACKEND (ATTNSEL_LINEAR_PREFILL_BACKEND /
/// ATTNSEL_LINEAR_DECODE_BACKEND) when set and non-empty, else nullopt: the phase inherits the domain's
/// override, as SGLang's per-phase flags inherit --attention-backend / --linear-attn-backend.
[[nodiscard]] std::optional<chosen_override> choose_phase_override(
    const std::optional<std::string>& flag, attnsel::attention_phase phase,
    attnsel::attention_domain domain = attnsel::attention_domain::decoder);

}  // namespace attnsel_cli
