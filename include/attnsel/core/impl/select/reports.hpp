// SPDX-License-Identifier: Apache-2.0
// What a selection tells beyond its answer: the tracing visitor behind explain, the backends never reached,
// the advisories that hold, and the error of a failed select (its message, candidates and suggestions).
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/select.hpp>
#endif

#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/impl/value_text.hpp>

#include <algorithm>
#include <string>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// True when `b` passed its checks but the caller refuses advisories and a warning one holds.
inline bool refused_by_advisory(const backend_descriptor& b, const query& q, const platform& p,
                                bool refuse_advisories) noexcept {
  if (!refuse_advisories || b.advisories.empty()) return false;
  const auto* v = resolve_variant(b, q.domain, p);
  return v != nullptr && first_warning(b, *v, q, p) != nullptr;
}

// Every warning advisory of `b` that holds for the call, as reasons (explain path).
inline std::vector<reason> holding_warnings(const backend_descriptor& b, const query& q, const platform& p) {
  std::vector<reason> out;
  const auto* v = b.advisories.empty() ? nullptr : resolve_variant(b, q.domain, p);
  if (v == nullptr) return out;
  for (const auto& a : b.advisories)
    if (a.action == advisory_action::warn && a.holds(*v, q, p) == truth::yes)
      out.push_back(reason{reason_code::advisory, advisory_message(a)});
  return out;
}

inline std::string condition_message(const policy_entry& e) {
  std::string out = "the policy tries it only";
  std::string sep = " when ";
  for (const auto& c : e.when) {
    out.append(sep).append("component ").append(c).append(" is present");
    sep = " and ";
  }
  for (const auto& c : e.unless) {
    out.append(sep).append("component ").append(c).append(" is absent");
    sep = " and ";
  }
  for (const auto& f : e.unless_features) {
    out.append(sep).append("feature ").append(f).append(" is not required");
    sep = " and ";
  }
  if (!e.phases.empty()) {
    out.append(sep).append("in the ").append(format_enum_list(e.phases, " or ")).append(" phase");
    sep = " and ";
  }
  for (shape_field f : shape_fields)
    if (const auto& r = e.shape[f]) {
      out.append(sep).append(to_string(f)).append(" is in ").append(to_string(*r));
      sep = " and ";
    }
  return out;
}

// The limits and policy conditions the answer hangs on that read a field `q` leaves unstated: the
// shape ranges and call rules of each listed candidate's variant, the rules above the matching one
// that only an unstated field kept from matching, and the matching rule's entries conditioned on one.
inline std::vector<unstated_dependency> unstated_dependencies(const registry& reg, const query& q, const platform& p,
                                                              const std::vector<candidate_report>& candidates) {
  std::vector<unstated_dependency> out;
  for (const auto& c : candidates) {
    const auto index = reg.index_of(c.name);
    if (!index) continue;
    const auto* v = resolve_variant(reg.backends()[*index], q.domain, p);
    if (v == nullptr) continue;
    const auto subject = c.name + (v->variant.empty() ? "" : "/" + v->variant);
    for (shape_field f : shape_fields)
      if (v->shape[f] && !shape_value(q, f))
        out.push_back({subject, std::string(to_string(f)), std::string(to_string(f)) + " " + to_string(*v->shape[f])});
    for (const auto& rule : v->call_rules) {
      const truth when = rule.when.evaluate(q, p);
      if (when == truth::no) continue;
      if (when == truth::yes && rule.require.evaluate(q, p) != truth::unknown) continue;
      auto fields = unstated_fields(rule.when, q);
      const auto more = unstated_fields(rule.require, q);
      if (!more.empty() && fields.find(more) == std::string::npos) fields += (fields.empty() ? "" : ", ") + more;
      out.push_back({subject, fields, to_string(rule) + (rule.note.empty() ? "" : " (" + rule.note + ")")});
    }
    // An advisory that hangs on an unstated field is not applied.
    for (const auto& a : reg.backends()[*index].advisories)
      if (a.holds(*v, q, p) == truth::unknown)
        out.push_back({subject, unstated_fields(a.when, q), "advisory " + to_string(a)});
  }
  const auto* matched = reg.match_rule(q, p);
  for (const auto& rule : reg.policy().rules) {
    if (&rule == matched) {
      for (const auto& e : rule.order) {
        call_condition c;
        c.phases = e.phases;
        c.shape = e.shape;
        const auto fields = unstated_fields(c, q);
        if (!fields.empty()) out.push_back({"policy entry " + e.backend, fields, condition_message(e)});
      }
      break;
    }
    if (rule.domain != q.domain || !rule.matches_platform(p)) continue;
    call_condition c;
    c.phases = rule.phases;
    c.shape = rule.shape;
    const auto fields = unstated_fields(c, q);
    if (fields.empty()) continue;
    // Would it match with its call conditions stated? Test the rest of the rule on its own.
    policy_rule rest = rule;
    rest.phases = {};
    rest.shape = {};
    if (rest.matches_query(q)) out.push_back({"policy rule " + to_string(rule), fields, to_string(c)});
  }
  return out;
}

struct trace_visitor {
  trace_visitor(const registry& r, const query& qq, const platform& pp, bool refuse = false)
      : reg(r), q(qq), p(pp), refuse_advisories(refuse) {}
  const registry& reg;
  const query& q;
  const platform& p;
  bool refuse_advisories = false;
  std::vector<candidate_report> out;
  std::size_t rank = 0;
  bool found = false;
  // The backend select() chose, when it succeeded: it alone is `selected`, other passing ones
  // `supported`. Without one (error paths) the first that passes would be the choice.
  const backend_descriptor* winner = nullptr;

  bool tried(std::size_t index, bool forced) {
    const auto& b = reg.backends()[index];
    candidate_report r;
    r.name = b.name;
    r.rank = ++rank;
    r.forced = forced;
    if (const auto* v = resolve_variant(b, q.domain, p)) r.variant = v->variant;
    r.reasons = check_backend(b, q, p);
    if (r.reasons.empty()) {
      r.warnings = holding_warnings(b, q, p);
      if (refuse_advisories) {
        r.reasons = std::move(r.warnings);  // the caller refuses them
        r.warnings.clear();
      }
    }
    if (!r.reasons.empty()) {
      r.outcome = verdict::rejected;
    } else {
      const bool chosen = winner != nullptr ? &b == winner : !found;
      r.outcome = chosen ? verdict::selected : verdict::supported;
      found = true;
    }
    out.push_back(std::move(r));
    return false;  // keep going: a person wants to see what else would have worked
  }
  void skipped(std::size_t index, reason_code code, const policy_entry* entry) {
    candidate_report r;
    r.name = reg.backends()[index].name;
    r.outcome = verdict::skipped;
    r.reasons.push_back(reason{
        code, code == reason_code::excluded ? std::string("removed by the override") : condition_message(*entry)});
    out.push_back(std::move(r));
  }
};

inline std::string query_summary(const query& q, const platform& p) { return to_string(q) + " on " + to_string(p); }

inline std::string reasons_text(const std::vector<reason>& reasons) {
  std::string out;
  for (const auto& r : reasons) out += (out.empty() ? "" : "; ") + r.message;
  return out;
}

// Backends of the domain that would pass, in automatic order first, then registration order.
inline std::vector<std::string> working_alternatives(const registry& reg, const query& q, const platform& p,
                                                     bool refuse_advisories) {
  std::vector<std::string> out;
  std::vector<bool> listed(reg.size(), false);  // error path: linear, not a search per backend
  const auto consider = [&](std::size_t i) {
    if (listed[i] || out.size() >= limits::listed_alternatives) return;
    listed[i] = true;
    const auto& b = reg.backends()[i];
    if (!first_failure(b, q, p) && !refused_by_advisory(b, q, p, refuse_advisories)) out.push_back(b.name);
  };
  if (const auto* rule = reg.match_rule(q, p)) {
    const auto r = static_cast<std::size_t>(rule - reg.policy().rules.data());
    for (std::size_t k = 0; k < rule->order.size(); ++k) consider(reg.resolved(r, k));
  }
  for (std::size_t i = 0; i < reg.size(); ++i) consider(i);
  return out;
}

// One line per candidate for the first `limits::listed_alternatives`, then a count: the message
// stays short and linear however many backends were tried (candidates keep every reason).
inline std::string candidate_lines(const std::vector<candidate_report>& candidates, bool include_skipped) {
  std::string out;
  std::size_t listed = 0, more = 0;
  for (const auto& c : candidates) {
    if (!(c.outcome == verdict::rejected || (include_skipped && c.outcome == verdict::skipped))) continue;
    if (listed++ < limits::listed_alternatives)
      out += "\n  " + c.name + ": " + reasons_text(c.reasons);
    else
      ++more;
  }
  if (more) out += "\n  ... and " + std::to_string(more) + " more (see the candidates)";
  return out;
}

inline selection_error make_error(const registry& reg, const query& q, const platform& p, const override_plan& plan,
                                  bool refuse_advisories, std::vector<candidate_report> candidates) {
  selection_error e;
  const bool forced_only = !plan.automatic();
  e.code = forced_only ? error_code::backend_rejected : error_code::no_backend;
  const auto text = query_summary(q, p);
  if (forced_only) {
    std::vector<std::string_view> forced;
    for (const auto& c : candidates)
      if (c.forced) forced.push_back(c.name);
    e.message = "Selected backend " + join_limited(forced, ", ") + " is not valid for " + text + ".";
    e.message += candidate_lines(candidates, false);
    e.suggestions = working_alternatives(reg, q, p, refuse_advisories);
    if (!e.suggestions.empty()) {
      e.message += "\nBackends that support this configuration:";
      for (const auto& s : e.suggestions) e.message += " " + s;
    } else {
      e.message += "\nNo registered backend supports this configuration.";
    }
  } else {
    e.message = "No attention backend supports " + text + ".";
    e.message += candidate_lines(candidates, true);
    if (candidates.empty()) e.message += "\n  (no backend serves this domain on this platform)";
  }
  e.candidates = std::move(candidates);
  return e;
}

// Backends of the domain that run on this platform in the query's mode but were never reached by the
// walk: listed last (with their own check results) so a trace names every backend an operator could
// still force. Other modes' backends (MLA for a standard layer) are left out as noise.
inline void append_unvisited(const registry& reg, const query& q, const platform& p,
                             std::vector<candidate_report>& out) {
  const auto* rule = reg.match_rule(q, p);
  std::vector<char> listed(reg.size(), 0);  // by backend index: explain stays O(n log n) in the backends
  for (const auto& c : out)
    if (const auto i = reg.index_of(c.name)) listed[*i] = 1;
  for (std::size_t i = 0; i < reg.size(); ++i) {
    const auto& b = reg.backends()[i];
    if (!b.domains.contains(q.domain)) continue;
    const auto* variant = resolve_variant(b, q.domain, p);
    if (variant == nullptr || variant->mode != q.mode) continue;
    if (listed[i]) continue;
    listed[i] = 1;
    candidate_report r;
    r.name = b.name;
    r.variant = variant->variant;
    r.outcome = verdict::skipped;
    r.reasons.push_back(reason{
        reason_code::not_in_policy,
        "not in the automatic order for " + (rule ? to_string(*rule) : to_string(p)) + "; it can still be forced"});
    for (auto& extra : check_backend(b, q, p)) r.reasons.push_back(std::move(extra));
    out.push_back(std::move(r));
  }
}

}  // namespace detail

ATTNSEL_END_NAMESPACE
