// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for select.hpp: the free select, explain and plan_phases over the one walk
// (core/impl/select/walk.hpp) with a fast visitor and a tracing one.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/select.hpp>
#endif

#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/impl/select/reports.hpp>
#include <attnsel/core/impl/select/walk.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/impl/value_text.hpp>

#include <algorithm>
#include <numeric>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

struct fast_visitor {
  fast_visitor(const registry& r, const query& qq, const platform& pp, bool refuse = false) noexcept
      : reg(r), q(qq), p(pp), refuse_advisories(refuse) {}
  const registry& reg;
  const query& q;
  const platform& p;
  bool refuse_advisories = false;
  std::size_t rank = 0;
  std::size_t winner = 0;
  bool found = false;
  bool winner_forced = false;

  bool tried(std::size_t index, bool forced) noexcept {
    ++rank;
    const auto& b = reg.backends()[index];
    if (first_failure(b, q, p) || refused_by_advisory(b, q, p, refuse_advisories)) return false;
    winner = index;
    found = true;
    winner_forced = forced;
    return true;
  }
  void skipped(std::size_t, reason_code, const policy_entry*) noexcept {}
};

}  // namespace detail

ATTNSEL_INLINE ATTNSEL_INTERNAL_COLD void selection_result::throw_error() const { throw selection_exception(*error_); }

ATTNSEL_INLINE ATTNSEL_INTERNAL_COLD void selection_result::release() noexcept {
  value_.~selection();
  delete error_;
}

ATTNSEL_INLINE ATTNSEL_INTERNAL_COLD void selection_result::throw_no_error() {
  throw std::logic_error("attnsel: selection_result::error() called on a successful selection");
}

ATTNSEL_INLINE std::uint32_t selection::block_size_for(std::uint32_t current) const noexcept {
  if (variant == nullptr) return current;
  const auto& multiples = variant->block_size_multiples;
  const auto accepts = [&](std::uint32_t b) {
    return multiples.empty() ||
           std::any_of(multiples.begin(), multiples.end(), [&](std::uint32_t m) { return m != 0 && b % m == 0; });
  };
  if (current != 0 && accepts(current)) return current;
  if (variant->preferred_block_size != 0) return variant->preferred_block_size;
  if (!multiples.empty()) return *std::min_element(multiples.begin(), multiples.end());
  return current;
}

namespace detail {
// What the engine does with a forced backend for `q`: the matching rule's `forced`, honoured when no
// rule matches.
inline forced_handling forced_handling_for(const registry& reg, const query& q, const platform& p) noexcept {
  const policy_rule* rule = reg.match_rule(q, p);
  return rule ? rule->forced : forced_handling::honoured;
}

// A rule whose `forced` is `ignored` matched: the engine runs its automatic choice, and the selection
// lists each forced backend with the reason it was passed over.
inline selection_result select_ignoring_override(const registry& reg, const query& q, const platform& p,
                                                 const override_plan& plan, const override_request& ovr,
                                                 const select_options& options) {
  auto result = select(reg, q, p, override_request{}, options);
  if (!result) return result;
  selection s = result.value();
  s.source = ovr.source;
  s.fell_back = true;
  const policy_rule* rule = reg.match_rule(q, p);
  const std::string why = "the engine does not read a forced backend here" +
                          (rule && !rule->note.empty() ? " (" + rule->note + ")" : std::string());
  plan.for_each([&](const override_token& t) {
    if (t.type != override_token::kind::name) return;
    candidate_report c;
    c.name = reg.backends()[t.backend].name;
    c.forced = true;
    c.outcome = verdict::skipped;
    c.reasons.push_back(reason{reason_code::forced_ignored, why});
    s.fallback.push_back(std::move(c));
  });
  return s;
}
}  // namespace detail

namespace detail {
// `q` in the domain whose backends and rules select for it (registry::selecting_domain): a drafter
// query becomes a decoder one where the catalog states nothing of its drafter.
inline query in_selecting_domain(const registry& reg, const query& q) {
  query out = q;
  out.domain = reg.selecting_domain(q.domain);
  return out;
}
}  // namespace detail

ATTNSEL_INLINE selection_result select(const registry& reg, const query& q, const platform& p,
                                       const override_request& ovr, const select_options& options) {
  if (reg.selecting_domain(q.domain) != q.domain)
    return select(reg, detail::in_selecting_domain(reg, q), p, ovr, options);
  // Catalog implications first (aiter_mha => aiter_enabled => aiter): checking costs no allocation.
  if (!is_closed(reg, p)) return select(reg, q, close_platform(reg, p).value, ovr, options);
  if (!is_valid(q)) {
    selection_error e;
    e.code = error_code::bad_query;
    e.message = "invalid query: " + validation_message(q);
    return e;
  }
  if (ovr.source == override_source::none && !detail::trim(ovr.spec).empty()) {
    // "none" means no override: a spec with it would be reported as forced by nobody.
    selection_error e;
    e.code = error_code::bad_override;
    e.message = "override '" + detail::escape_text(ovr.spec) +
                "' has source none; give it the source it came from (api, flag, env or config)";
    return e;
  }
  const auto plan = override_plan::parse(ovr.spec, reg);
  if (!plan.ok()) {
    selection_error e;
    e.code = plan.problem()->code();
    std::string hint;
    if (e.code == error_code::unknown_backend) hint = suggest_backend(plan.problem()->token, reg);
    e.message = plan.problem()->message(reg, hint);
    if (!hint.empty()) e.suggestions.push_back(hint);
    return e;
  }
  // The matching rule may state an engine that substitutes its own choice for a forced backend.
  const auto handling = plan.has_forced() ? detail::forced_handling_for(reg, q, p) : forced_handling::honoured;
  if (handling == forced_handling::ignored) return detail::select_ignoring_override(reg, q, p, plan, ovr, options);
  const bool fallback_auto = (options.prefer || handling == forced_handling::fallback) && plan.has_forced();
  const auto fast = detail::walk(detail::registry_source{reg, q, p, plan}, fallback_auto,
                                 detail::fast_visitor{reg, q, p, options.refuse_advisories});
  if (fast.found) {
    selection s;
    s.backend = &reg.backends()[fast.winner];
    s.variant = resolve_variant(*s.backend, q.domain, p);
    s.rank = fast.rank;
    s.overridden = fast.winner_forced;
    s.source = plan.spec().empty() ? override_source::none : ovr.source;
    if (!s.backend->advisories.empty() && s.variant != nullptr) s.warning = first_warning(*s.backend, *s.variant, q, p);
    if (fallback_auto && !fast.winner_forced && !plan.explicit_auto()) {
      // Prefer mode, or an engine that substitutes, fell back: record why each forced backend was passed over.
      s.fell_back = true;
      detail::trace_visitor trace{reg, q, p, options.refuse_advisories};
      plan.for_each([&](const override_token& t) {
        if (t.type == override_token::kind::name) trace.tried(t.backend, true);
      });
      s.fallback = std::move(trace.out);
    }
    return s;
  }
  // Error path: re-run with the tracing visitor so the error carries every reason.
  auto trace = detail::walk(detail::registry_source{reg, q, p, plan}, fallback_auto,
                            detail::trace_visitor{reg, q, p, options.refuse_advisories});
  return detail::make_error(reg, q, p, plan, options.refuse_advisories, std::move(trace.out));
}

ATTNSEL_INLINE selection select_or_throw(const registry& reg, const query& q, const platform& p,
                                         const override_request& ovr, const select_options& options) {
  auto result = select(reg, q, p, ovr, options);
  if (!result) throw selection_exception(result.error());
  return result.value();
}

namespace detail {
// The measured rules in front of `used` (every rule when null) that would match `q` but for the
// platform: their timings were taken elsewhere.
inline std::vector<stale_measurement> stale_measurements(const registry& reg, const query& q, const platform& p,
                                                         const policy_rule* used) {
  std::vector<stale_measurement> out;
  for (const auto& r : reg.policy().rules) {
    if (&r == used) break;
    if (!r.measured || r.domain != q.domain || !r.matches_query(q)) continue;
    stale_measurement s{to_string(r), to_string(*r.measured), r.measured->differences(p)};
    if (p.vendor() != r.vendor || !r.arch_filter::accepts(p))
      s.differences.insert(s.differences.begin(), "platform " + to_string(p) + " is outside the rule's arch");
    out.push_back(std::move(s));
  }
  return out;
}
}  // namespace detail

ATTNSEL_INLINE explanation explain(const registry& reg, const query& q, const platform& p, const override_request& ovr,
                                   const select_options& options) {
  if (reg.selecting_domain(q.domain) != q.domain)
    return explain(reg, detail::in_selecting_domain(reg, q), p, ovr, options);
  if (!is_closed(reg, p)) {
    auto closed = close_platform(reg, p);
    auto ex = explain(reg, q, closed.value, ovr, options);
    ex.implied = std::move(closed.implied);
    return ex;
  }
  explanation ex{select(reg, q, p, ovr, options), {}, {}, {}, {}, {}, {}};
  const auto plan = override_plan::parse(ovr.spec, reg);
  if (!plan.ok() || !is_valid(q)) return ex;
  // The rule is reported whenever the automatic order was walked: plain auto, --prefer falling back, or
  // an engine that substitutes for a forced backend.
  const auto handling = plan.has_forced() ? detail::forced_handling_for(reg, q, p) : forced_handling::honoured;
  const bool fallback_auto = (options.prefer || handling == forced_handling::fallback) && plan.has_forced();
  const bool walked_automatic = plan.automatic() || fallback_auto || handling == forced_handling::ignored;
  const policy_rule* rule = walked_automatic ? reg.match_rule(q, p) : nullptr;
  if (rule) {
    ex.rule = to_string(*rule);
    ex.note = rule->note;
  }
  if (walked_automatic) ex.stale = detail::stale_measurements(reg, q, p, rule);
  if (!ex.result.ok()) {
    // select() already traced the same walk to build its error: reuse it instead of walking twice.
    ex.candidates = ex.result.error().candidates;
  } else {
    detail::trace_visitor start{reg, q, p, options.refuse_advisories};
    start.winner = ex.result->backend;  // verdicts follow select()'s choice, decided before the walk
    if (handling == forced_handling::ignored) {
      // The engine walked its automatic order: trace that, after the passed-over forced backends.
      const auto no_override = override_plan::parse("", reg);
      auto trace = detail::walk(detail::registry_source{reg, q, p, no_override}, false, std::move(start));
      ex.candidates = ex.result->fallback;
      for (auto& c : trace.out) ex.candidates.push_back(std::move(c));
    } else {
      ex.candidates = detail::walk(detail::registry_source{reg, q, p, plan}, fallback_auto, std::move(start)).out;
    }
  }
  if (walked_automatic) detail::append_unvisited(reg, q, p, ex.candidates);
  if (rule && rule->measured)
    for (auto& c : ex.candidates)
      if (const auto* t = rule->measured->time_of(c.name)) c.measured = *t;
  ex.unstated = detail::unstated_dependencies(reg, q, p, ex.candidates);
  return ex;
}

namespace detail {
inline bool accepts_block(const selection& s, std::uint32_t block) noexcept {
  return block != 0 && s.variant != nullptr && s.block_size_for(block) == block;
}

// The smallest block size within limits::block_size that both selections accept, or 0: each accepts
// the multiples of any of its bases (vLLM's MultipleOf), so the candidates are the least common
// multiples of one base of each (48 and 32 share 96).
inline std::uint32_t common_block(const selection& a, const selection& b) noexcept {
  std::uint64_t best = 0;
  for (const std::uint32_t x : a.variant->block_size_multiples)
    for (const std::uint32_t y : b.variant->block_size_multiples) {
      if (x == 0 || y == 0) continue;
      const std::uint64_t l = std::uint64_t{x} / std::gcd(x, y) * y;
      if (l <= limits::block_size && (best == 0 || l < best)) best = l;
    }
  return static_cast<std::uint32_t>(best);
}
}  // namespace detail

ATTNSEL_INLINE phase_plan plan_phases(const registry& reg, const query& layer, const platform& p,
                                      const override_set& overrides, const select_options& options) {
  query decode = layer;
  decode.seq_len_q = 1;  // one new token per sequence
  return plan_phases(reg, layer, decode, p, overrides, options);
}

ATTNSEL_INLINE phase_plan plan_phases(const registry& reg, query prefill, query decode, const platform& p,
                                      const override_set& overrides, const select_options& options) {
  if (prefill.kv_cache_dtype != decode.kv_cache_dtype)
    throw std::invalid_argument("plan_phases: the prefill and decode queries name different kv-cache dtypes (" +
                                std::string(to_string(prefill.kv_cache_dtype)) + ", " +
                                std::string(to_string(decode.kv_cache_dtype)) + "); one KV cache has one dtype");
  if (prefill.block_size != 0 && decode.block_size != 0 && prefill.block_size != decode.block_size)
    throw std::invalid_argument("plan_phases: the prefill and decode queries pin different block sizes (" +
                                std::to_string(prefill.block_size) + ", " + std::to_string(decode.block_size) +
                                "); one KV cache has one block size");
  prefill.phase = attention_phase::prefill;
  decode.phase = attention_phase::decode;
  phase_plan out{
      select(reg, prefill, p, overrides, options), select(reg, decode, p, overrides, options), prefill, decode, 0, {}};
  if (!out.prefill.ok() || !out.decode.ok()) return out;
  const selection& pre = out.prefill.value();
  const selection& dec = out.decode.value();
  if (const std::uint32_t pinned = prefill.block_size != 0 ? prefill.block_size : decode.block_size; pinned != 0) {
    if (detail::accepts_block(pre, pinned) && detail::accepts_block(dec, pinned))
      out.block_size = pinned;  // the pinned side passed its gate with it; the other accepts it too
    else
      out.conflict = "the pinned KV-cache block size " + std::to_string(pinned) + " is not accepted by " +
                     std::string(detail::accepts_block(pre, pinned) ? dec.name() : pre.name());
    return out;
  }
  const std::uint32_t decode_choice = dec.block_size_for(0);
  const std::uint32_t prefill_choice = pre.block_size_for(0);
  if (decode_choice == 0 && prefill_choice == 0) return out;  // neither cares: any block size
  if (decode_choice == 0 || detail::accepts_block(pre, decode_choice)) {
    out.block_size = decode_choice != 0 ? decode_choice : prefill_choice;
  } else if (detail::accepts_block(dec, prefill_choice)) {
    out.block_size = prefill_choice;
  } else if (const std::uint32_t common = detail::common_block(pre, dec); common != 0) {
    out.block_size = common;  // neither's own choice suits the other, but a common multiple does
  } else {
    out.conflict = "prefill backend " + std::string(pre.name()) + " wants KV-cache block size " +
                   std::to_string(prefill_choice) + " and decode backend " + std::string(dec.name()) + " wants " +
                   std::to_string(decode_choice) + "; no block size up to " + std::to_string(limits::block_size) +
                   " suits both";
  }
  return out;
}

ATTNSEL_END_NAMESPACE
