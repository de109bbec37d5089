// SPDX-License-Identifier: Apache-2.0
// Flag-over-environment precedence for backend overrides; each domain reads only its own variable.
#include "override_source.hpp"

#include <cstdlib>

namespace attnsel_cli {

const char* override_variable(attnsel::attention_domain domain) noexcept {
  return domain == attnsel::attention_domain::encoder ? "ATTNSEL_ENCODER_BACKEND" : "ATTNSEL_BACKEND";
}

chosen_override choose_override(bool flag_given, const std::string& flag, attnsel::attention_domain domain) {
  const char* variable = override_variable(domain);
  const char* env = std::getenv(variable);
  const bool env_set = env != nullptr && *env != '\0';
  chosen_override out;
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
  return out;
}

std::optional<chosen_override> choose_phase_override(const std::optional<std::string>& flag,
                                                     attnsel::attention_phase phase) {
  const bool prefill = phase == attnsel::attention_phase::prefill;
  const char* variable = prefill ? "ATTNSEL_PREFILL_BACKEND" : "ATTNSEL_DECODE_BACKEND";
  const char* env = std::getenv(variable);
  chosen_override out;
  if (flag) {
    out.spec = *flag;
    out.source = attnsel::override_source::flag;
    out.origin = prefill ? "--prefill-backend" : "--decode-backend";
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
