// SPDX-License-Identifier: Apache-2.0
// Flag-over-environment precedence for backend overrides; each domain reads only its own variable.
#include "override_source.hpp"

#include <cstdlib>

namespace attnsel_cli {

const char* override_variable(attnsel::attention_domain domain) noexcept {
  switch (domain) {
    case attnsel::attention_domain::encoder:
      return "ATTNSEL_ENCODER_BACKEND";
    case attnsel::attention_domain::drafter:
      return "ATTNSEL_DRAFTER_BACKEND";
    case attnsel::attention_domain::linear:
      return "ATTNSEL_LINEAR_BACKEND";
    case attnsel::attention_domain::decoder:
      break;
  }
  return "ATTNSEL_BACKEND";
}

chosen_override choose_override(bool flag_given, const std::string& flag, attnsel::attention_domain domain) {
  const char* variable = override_variable(domain);
  const char* env = std::getenv(variable);
  bool env_set = env != nullptr && *env != '\0';
  // A drafter without an override of its own inherits the decoder's (attnsel::override_set::drafter).
  const bool inherited = !flag_given && !env_set && domain == attnsel::attention_domain::drafter;
  if (inherited) {
    variable = override_variable(attnsel::attention_domain::decoder);
    env = std::getenv(variable);
    env_set = env != nullptr && *env != '\0';
  }
  chosen_override out;
  out.inherited = inherited;
  if (flag_given) {
    out.spec = flag;
    out.source = attnsel::override_source::flag;
    out.origin = "--backend";
    if (env_set)
      out.note = std::string("--backend '") + attnsel::printable(flag) + "' takes precedence over " + variable + "='" +
                 attnsel::printable(env) + "'";
  } else if (env_set) {
    out.spec = env;
    out.source = attnsel::override_source::env;
    out.origin = std::string("$") + variable;
  }
  // vLLM read its decoder override from this variable until it was removed (vllm#50292; vLLM 0.33.0
  // reads it nowhere). A user who still exports it expects it to count: say that it does not.
  const char* removed = std::getenv("VLLM_ATTENTION_BACKEND");
  if ((domain == attnsel::attention_domain::decoder || out.inherited) && removed != nullptr && *removed != '\0') {
    if (!out.note.empty()) out.note += "; ";
    out.note += std::string("VLLM_ATTENTION_BACKEND='") + attnsel::printable(removed) +
                "' is ignored: vLLM removed the variable (vllm#50292; it takes --attention-backend), and attnsel "
                "reads --backend or " +
                variable;
  }
  return out;
}

std::optional<chosen_override> choose_phase_override(const std::optional<std::string>& flag,
                                                     attnsel::attention_phase phase, attnsel::attention_domain domain) {
  const bool prefill = phase == attnsel::attention_phase::prefill;
  const bool linear = domain == attnsel::attention_domain::linear;
  const char* variable = linear ? (prefill ? "ATTNSEL_LINEAR_PREFILL_BACKEND" : "ATTNSEL_LINEAR_DECODE_BACKEND")
                                : (prefill ? "ATTNSEL_PREFILL_BACKEND" : "ATTNSEL_DECODE_BACKEND");
  const char* env = std::getenv(variable);
  chosen_override out;
  if (flag) {
    out.spec = *flag;
    out.source = attnsel::override_source::flag;
    out.origin = linear ? (prefill ? "--linear-prefill-backend" : "--linear-decode-backend")
                        : (prefill ? "--prefill-backend" : "--decode-backend");
  } else if (env != nullptr && *env != '\0') {
    out.spec = env;
    out.source = attnsel::override_source::env;
    out.origin = std::string("$") + variable;
  } else {
    return std::nullopt;
  }
  return out;
}

}  // namespace attnsel_cli
