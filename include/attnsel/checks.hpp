// SPDX-License-Identifier: Apache-2.0
// Capability checks of one backend against one query on one platform: a fast form and an explain form.
#pragma once

#include <attnsel/config.hpp>
#include <attnsel/descriptor.hpp>
#include <attnsel/platform.hpp>
#include <attnsel/query.hpp>
#include <attnsel/reason.hpp>

#include <optional>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

/// The variant of `backend` that would run for `domain` on `p`: the first of `backend.variants` whose
/// domains and platforms accept them, or `&backend.caps` when it has no variants and its platforms
/// accept `p`. nullptr when none does.
[[nodiscard]] const capabilities* resolve_variant(const backend_descriptor& backend, attn_domain domain,
                                                  const platform& p) noexcept;

/// Fast path: the code of the first failing check, or std::nullopt when `backend` supports the query.
/// Allocates nothing and formats nothing (a backend's own `extra_check` is called with `why == nullptr`).
[[nodiscard]] std::optional<reason_code> first_failure(const backend_descriptor& backend, const query& q,
                                                       const platform& p) noexcept;

/// Explain path: every failing check with its message, in check order; empty when supported.
/// Checks that depend on an earlier one (everything after the domain and platform checks) are not
/// reported when that one fails, since they would have nothing to check against.
[[nodiscard]] std::vector<reason> check_backend(const backend_descriptor& backend, const query& q,
                                                const platform& p);

/// Convenience: true when `backend` supports the query on `p`.
[[nodiscard]] inline bool supports(const backend_descriptor& backend, const query& q, const platform& p) noexcept {
  return !first_failure(backend, q, p).has_value();
}

ATTNSEL_END_NAMESPACE

#ifdef ATTNSEL_HEADER_ONLY
#  include <attnsel/impl/checks_inl.hpp>
#endif
