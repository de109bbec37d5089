// SPDX-License-Identifier: Apache-2.0
// Invariants every fuzz target checks on a selection: select, explain and the JSON report agree.
#pragma once

#include <attnsel/all.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#ifndef ATTNSEL_FUZZ_TARGET
#  define ATTNSEL_FUZZ_TARGET "fuzz"
#endif

namespace fuzz_support {

using namespace attnsel;

/// The reference registry, loaded once per fuzzing process.
inline const registry& reference() {
  static const registry reg = reference_registry();
  return reg;
}

[[noreturn]] inline void violated(const char* invariant, std::string_view spec, const std::string& detail = {}) {
  std::fprintf(stderr, "%s: invariant violated: %s\n  override: '%s'\n%s%s", ATTNSEL_FUZZ_TARGET, invariant,
               printable(spec, 200).c_str(), detail.c_str(), detail.empty() ? "" : "\n");
  std::abort();
}

// A declared error code: one row of the error_code table (unknown_backend, backend_rejected, no_backend,
// bad_override, bad_query at the time of writing), never a value outside it.
inline bool is_error_code(error_code c) {
  for (const auto v : enum_values<error_code>())
    if (v == c) return true;
  return false;
}

/// Checks one selection (select, explain, the JSON report) against every invariant; aborts on a violation.
inline void check(const registry& reg, const query& q, const platform& p, const override_request& ovr,
                  const select_options& options) {
  const auto spec = ovr.spec;
  const auto plan = override_plan::parse(spec, reg);
  std::size_t tokens = 0;
  plan.for_each([&](const override_token& t) {
    ++tokens;
    if (t.position != tokens) violated("override tokens are numbered 1, 2, 3 ...", spec);
    if (plan.ok() && t.type != override_token::kind::automatic && t.backend >= reg.size())
      violated("a valid plan's token names a registry index", spec);
  });
  if (!plan.ok()) (void)plan.problem()->message(reg);

  const auto r = select(reg, q, p, ovr, options);
  // select() decides on the platform closed under the catalog's implications: check against that one.
  const platform closed = is_closed(reg, p) ? p : close_platform(reg, p).value;
  // ... and in the domain whose backends select for the query (a drafter the catalog does not serve
  // drafts as its decoder).
  query selecting = q;
  selecting.domain = reg.selecting_domain(q.domain);
  if (r.ok()) {
    if (!plan.ok() || !is_valid(q)) violated("an invalid override or query never selects", spec);
    const auto& s = r.value();
    if (s.backend == nullptr || s.backend < reg.backends().data() || s.backend >= reg.backends().data() + reg.size())
      violated("a selection points into the registry", spec);
    if (!supports(*s.backend, selecting, closed))
      violated("the selected backend passes supports()", spec, std::string(s.name()));
    if (s.variant != resolve_variant(*s.backend, selecting.domain, closed))
      violated("the variant is the resolved one", spec);
    if (s.rank == 0) violated("a selection has a 1-based rank", spec);
    // Only a rule that states an engine substituting for a forced backend (policy_rule::forced) may
    // replace one, and the selection then says so (fell_back).
    const policy_rule* rule = reg.policy().match(selecting, closed);
    const bool substitutes = rule != nullptr && rule->forced != forced_handling::honoured;
    if (plan.has_forced() && !plan.automatic() && !options.prefer && !s.overridden && !(substitutes && s.fell_back))
      violated("a strict override is never substituted", spec, std::string(s.name()));
    (void)s.block_size_for(q.block_size);
  } else {
    const auto& e = r.error();
    if (!is_error_code(e.code)) violated("an error code is one of the four", spec);
    if (e.message.empty()) violated("an error has a message", spec);
    if (!is_valid(q)) {
      if (e.code != error_code::bad_query) violated("an out-of-range query fails with bad_query", spec, e.message);
    } else if (plan.ok() != (e.code == error_code::backend_rejected || e.code == error_code::no_backend)) {
      violated("override errors come exactly from invalid overrides", spec, e.message);
    }
    if (e.code == error_code::backend_rejected)
      for (const auto& name : e.suggestions) {
        const auto* b = reg.find(name);
        if (b == nullptr || !supports(*b, selecting, closed)) violated("suggested backends are validated", spec, name);
      }
  }

  const auto ex = explain(reg, q, p, ovr, options);
  if (ex.result.ok() != r.ok()) violated("select and explain agree on ok()", spec);
  if (r.ok() && ex.result->name() != r->name())
    violated("select and explain agree on the backend", spec,
             std::string(r->name()) + " vs " + std::string(ex.result->name()));
  if (!r.ok() && ex.result.error().code != r.error().code) violated("select and explain agree on the error", spec);

  // The trace must agree with the fast path: the first tried candidate that is not rejected is the
  // winner, every verdict matches supports(), and a rejection always carries a reason.
  std::size_t selected = 0;
  const candidate_report* first_ok = nullptr;
  std::size_t first_ok_rank = 0;
  for (const auto& c : ex.candidates) {
    const auto* b = reg.find(c.name);
    if (b == nullptr) violated("trace names registered backends", spec, c.name);
    if (c.outcome == verdict::selected) ++selected;
    if (c.rank > 0) {
      const bool ok = supports(*b, selecting, closed);
      if ((c.outcome == verdict::rejected) == ok)
        violated("a tried candidate's verdict matches supports()", spec, c.name);
      if (c.outcome == verdict::rejected && c.reasons.empty()) violated("a rejection has a reason", spec, c.name);
      if (ok && (first_ok == nullptr || c.rank < first_ok_rank)) {
        first_ok = &c;
        first_ok_rank = c.rank;
      }
    } else if (c.outcome != verdict::skipped || c.reasons.empty()) {
      violated("an untried candidate is skipped with a reason", spec, c.name);
    }
  }
  if (r.ok()) {
    if (selected != 1) violated("a successful trace marks exactly one candidate selected", spec);
    if (first_ok == nullptr || first_ok->name != r->name())
      violated("the first supported candidate in trial order is the selection", spec,
               std::string(r->name()) + " vs " + (first_ok ? first_ok->name : std::string("none")));
  } else {
    if (selected != 0) violated("a failed trace selects nothing", spec);
    if (plan.ok() && first_ok != nullptr)
      violated("a failed selection tried no supported candidate", spec, first_ok->name);
  }

  // The report is what `attnsel select --json` prints. It may carry the override's raw bytes, so it is
  // serialised as the CLI does it (invalid UTF-8 replaced); anything else must not throw.
  (void)to_json(ex, q, p, ovr).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace fuzz_support
