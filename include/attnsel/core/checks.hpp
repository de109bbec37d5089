// SPDX-License-Identifier: Apache-2.0
// Capability checks of one backend against one query on one platform: a fast form and an explain form.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/core/descriptor.hpp>
#include <attnsel/core/platform.hpp>
#include <attnsel/core/query.hpp>
#include <attnsel/core/reason.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// The variant of `backend` that would run for `domain` on `p`: the first of `backend.variants` whose
/// domains and platforms accept them, or `&backend.caps` when it has no variants and its platforms
/// accept `p`. nullptr when none does.
[[nodiscard]] const capabilities* resolve_variant(const backend_descriptor& backend, attention_domain domain,
                                                  const platform& p) noexcept;

/// Fast path: the code of the first failing check, or std::nullopt when `backend` supports the query.
/// Allocates nothing and formats nothing (a backend's own `extra_check` is called with `why == nullptr`).
[[nodiscard]] std::optional<reason_code> first_failure(const backend_descriptor& backend, const query& q,
                                                       const platform& p) noexcept;

/// Explain path: every failing check with its message, in check order; empty when supported.
/// Checks that depend on an earlier one (everything after the domain and platform checks) are not
/// reported when that one fails, since they would have nothing to check against.
[[nodiscard]] std::vector<reason> check_backend(const backend_descriptor& backend, const query& q, const platform& p);

/// What a check gate reads besides the backend descriptor. A platform-bound `selector` decides every
/// gate up to `platform` once per domain and runs only the `query` gates per selection.
enum class gate_input : std::uint8_t {
  domain,    ///< the query's domain only
  platform,  ///< the platform (and the domain): the variant and its components
  query,     ///< the rest of the query (and maybe the platform)
};

/// One named check in the order the selector runs them (PyTorch's `sdp_utils` constraint arrays,
/// with a reason instead of a warning). Each gate reports exactly one reason code.
struct gate_info {
  std::string_view name;  ///< same text as its reason code
  reason_code code;
  gate_input reads;
  bool prerequisite;  ///< a failure hides the later gates even on the explain path
};

/// Every check gate, in run order; docs/reasons.md lists the codes in this order (a test ties them).
inline constexpr std::array<gate_info, 17> check_gates{{
    {"domain", reason_code::domain, gate_input::domain, true},
    {"platform", reason_code::platform, gate_input::platform, true},
    {"capability", reason_code::capability, gate_input::platform, true},
    {"component", reason_code::component, gate_input::platform, false},
    {"mode", reason_code::mode, gate_input::query, false},
    {"attn_type", reason_code::attn_type, gate_input::query, false},
    {"dtype", reason_code::dtype, gate_input::query, false},
    {"kv_cache_dtype", reason_code::kv_cache_dtype, gate_input::query, false},
    {"head_size", reason_code::head_size, gate_input::query, false},
    {"block_size", reason_code::block_size, gate_input::query, false},
    {"seq_len", reason_code::seq_len, gate_input::query, false},
    {"batch_size", reason_code::batch_size, gate_input::query, false},
    {"gqa_group", reason_code::gqa_group, gate_input::query, false},
    {"feature", reason_code::feature, gate_input::query, false},
    {"call_rule", reason_code::call_rule, gate_input::query, false},
    {"custom", reason_code::custom, gate_input::query, false},
    {"advisory", reason_code::advisory, gate_input::query, false},
}};

/// The first advisory of `backend` with action `warn` that holds for the checked `variant`, `q` and
/// `p`, or nullptr: what a selection of that backend carries (`selection::warning`). Allocates nothing.
[[nodiscard]] const advisory* first_warning(const backend_descriptor& backend, const capabilities& variant,
                                            const query& q, const platform& p) noexcept;

namespace detail {
/// One bit per query gate (bit i: check_gates[i]) that can refuse some query for `variant` of `backend`;
/// the gates left out compare nothing the variant constrains, so they pass every query.
[[nodiscard]] std::uint32_t live_query_gates(const backend_descriptor& backend, const capabilities& variant) noexcept;
/// Fast path of the gates that read the query, given the variant the platform gates resolved: true when
/// every gate set in `live` passes. Every query gate's bit set runs them all; live_query_gates of the same
/// backend and variant answers the same, as the gates it leaves out pass every query. Allocates nothing.
[[nodiscard]] bool query_gates_pass(const backend_descriptor& backend, const capabilities& variant, const query& q,
                                    const platform& p, std::uint32_t live) noexcept;
/// Fast path of the domain and platform gates for `domain`: the first failing code, or std::nullopt.
[[nodiscard]] std::optional<reason_code> first_platform_failure(const backend_descriptor& backend,
                                                                attention_domain domain, const platform& p) noexcept;
/// `variant` with what `p` alone decides of its call rules taken out, for a walk bound to `p`: a rule whose
/// `when` names a component condition `p` fails is dropped (it never applies on `p`), a `require` naming one
/// becomes `never`, and the component conditions `p` passes are removed (they always hold). For every
/// query, query_gates_pass on `p` answers the same with the result as with `variant`; a backend with an
/// extra_check (which may read the variant) is never given one.
[[nodiscard]] capabilities resolved_on(const capabilities& variant, const platform& p);
/// True when resolved_on(variant, p) would differ from `variant`: some call rule names a component.
[[nodiscard]] bool platform_decides_call_rules(const capabilities& variant) noexcept;
/// `advisory ID: MESSAGE (URL)`: an advisory as a reason's message.
[[nodiscard]] std::string advisory_message(const advisory& a);
}  // namespace detail

/// Convenience: true when `backend` supports the query on `p`.
[[nodiscard]] inline bool supports(const backend_descriptor& backend, const query& q, const platform& p) noexcept {
  return !first_failure(backend, q, p).has_value();
}

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/impl/checks_inl.hpp>
#endif
