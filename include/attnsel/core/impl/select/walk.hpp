// SPDX-License-Identifier: Apache-2.0
// The candidate walk: the one place that says in which order a selection tries backends. The free select
// walks the registry itself (registry_source); the bound selector walks what it decided once per
// platform (selector_inl.hpp's bound_source). Visitors decide what trying a backend means.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/select.hpp>
#endif

#include <attnsel/core/impl/hot.hpp>

#include <cstddef>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// Tries backends in trial order, until the visitor stops it:
// - the override's entries left to right: each forced name, and "auto" expanding to the automatic order;
// - then the automatic order, when the override has not walked it and either lets it run (no forced
//   name) or falls back to it (`fallback_auto`: prefer mode, an engine that substitutes);
// - each backend at most once: the automatic order passes over the names forced before it, and a name
//   forced after "auto" is not tried again when the automatic order holds it.
// The automatic order is the first matching rule's order, or every backend that serves the query's
// domain in registration order when no rule matches.
//
// Source (where the orders come from):
//   using order;             the automatic order once matched (a rule, or none)
//   using forced_set;        the names forced so far: insert(index), and contains(index) where the
//                            source's walk_order reads it (a source that folds them into its order
//                            keeps none)
//   bool automatic();        no forced name, or an "auto" entry
//   bool has_tokens();       a forced name or an "auto" entry
//   for_each_token(f);       the override's forced names and "auto", in order, until f(automatic, index)
//                            returns true
//   order automatic_order(); the rule that matches the query
//   bool holds(order, index);
//   bool walk_order(order, forced, visitor);  true when the visitor stopped
// Visitor: bool tried(index, forced) returns true to stop; void skipped(index, code, entry) hears of
// each backend the automatic order passes over for a reason a report names.
template <class Source, class Visitor>
ATTNSEL_INTERNAL_NOINLINE Visitor walk_override(const Source& source, bool fallback_auto, Visitor visitor) {
  typename Source::forced_set forced;
  typename Source::order order{};
  bool automatic_done = false;
  bool stop = false;
  source.for_each_token([&](bool automatic, std::size_t index) {
    if (automatic) {
      order = source.automatic_order();
      automatic_done = true;
      stop = source.walk_order(order, forced, visitor);
    } else if (!(automatic_done && source.holds(order, index))) {
      // Parsing refused repeated names, so only the automatic walk can have tried this one.
      forced.insert(index);
      stop = visitor.tried(index, true);
    }
    return stop;
  });
  if (!stop && !automatic_done && (source.automatic() || fallback_auto))
    source.walk_order(source.automatic_order(), forced, visitor);
  return visitor;
}

// The walk; returns the visitor, as the walk left it. Without a forced name or "auto" in the override
// (none, or only exclusions) it is the automatic order alone, inline in the caller, and the visitor
// never leaves it (its counters stay in registers); the override's walk is out of line.
template <class Source, class Visitor>
ATTNSEL_INTERNAL_ALWAYS_INLINE Visitor walk(const Source& source, bool fallback_auto, Visitor visitor) {
  if (source.has_tokens()) return walk_override(source, fallback_auto, std::move(visitor));
  if (source.automatic()) source.walk_order(source.automatic_order(), typename Source::forced_set{}, visitor);
  return visitor;
}

// The free select's source: the registry's rules and backends, and the override as parsed.
struct registry_source {
  const registry& reg;
  const query& q;
  const platform& p;
  const override_plan& plan;

  // An override names a few backends: index_set keeps them inline, so nothing is allocated however
  // large the registry.
  using forced_set = index_set;
  using order = const policy_rule*;

  [[nodiscard]] bool automatic() const noexcept { return plan.automatic(); }
  [[nodiscard]] bool has_tokens() const noexcept { return plan.has_forced() || plan.explicit_auto(); }
  template <class F>
  void for_each_token(F&& f) const {
    bool stop = false;
    plan.for_each([&](const override_token& t) {
      if (!stop && t.type != override_token::kind::exclude)
        stop = f(t.type == override_token::kind::automatic, t.backend);
    });
  }
  [[nodiscard]] order automatic_order() const noexcept { return reg.match_rule(q, p); }
  [[nodiscard]] bool holds(order rule, std::size_t index) const noexcept {
    if (rule == nullptr) return reg.backends()[index].domains.contains(q.domain);
    const auto r = rule_index(rule);
    for (std::size_t k = 0; k < rule->order.size(); ++k)
      if (reg.resolved(r, k) == index) return true;
    return false;
  }
  template <class Visitor>
  bool walk_order(order rule, const forced_set& forced, Visitor& visitor) const {
    const std::size_t count = rule != nullptr ? rule->order.size() : reg.size();
    const bool has_forced = plan.has_forced();
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t index = rule != nullptr ? reg.resolved(rule_index(rule), k) : k;
      if (rule == nullptr && !reg.backends()[index].domains.contains(q.domain)) continue;
      if (has_forced && forced.contains(index)) continue;
      if (plan.excluded(index)) {
        visitor.skipped(index, reason_code::excluded, nullptr);
      } else if (rule != nullptr && !rule->order[k].enabled(p, q)) {
        visitor.skipped(index, reason_code::policy_condition, &rule->order[k]);
      } else if (visitor.tried(index, false)) {
        return true;
      }
    }
    return false;
  }

 private:
  [[nodiscard]] std::size_t rule_index(order rule) const noexcept {
    return static_cast<std::size_t>(rule - reg.policy().rules.data());
  }
};

}  // namespace detail

ATTNSEL_END_NAMESPACE
