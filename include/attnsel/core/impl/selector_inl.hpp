// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for selector.hpp: the platform half decided once, the query gates of
// checks_inl.hpp run per query, and the decision cache.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/core/selector.hpp>
#endif

#include <attnsel/core/checks.hpp>
#include <attnsel/core/impl/checks_inl.hpp>
#include <attnsel/core/impl/decision_cache.hpp>
#include <attnsel/core/impl/hot.hpp>
#include <attnsel/core/impl/select/walk.hpp>
#include <attnsel/core/impl/shape_classes.hpp>
#include <attnsel/core/impl/text.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

static_assert(max_cache_slots == selector_options::max_cache_slots, "one bound on the cache's slots");

// One backend as a domain's walk sees it.
struct bound_candidate {
  const backend_descriptor* backend = nullptr;  // the registry's descriptor
  const capabilities* variant = nullptr;        // the variant that runs here; null when none resolved
  const capabilities* checked = nullptr;        // what the query gates read: `variant`, or its resolved_on copy
  std::uint32_t live_gates = 0;                 // the query gates that can refuse a query (live_query_gates)
  bool usable = false;                          // every domain and platform gate passed
  bool serves = false;                          // the backend serves the domain (the order when no rule matches)
};

// One entry of a rule's order with its platform half decided.
struct bound_entry {
  const policy_entry* entry = nullptr;
  std::uint32_t backend = 0;
  bool skip = false;         // excluded, forced before the automatic walk, or its component condition fails
  bool reads_query = false;  // its query half (policy_entry::enabled_for) states a condition
};

// A rule whose platform half matches; its query half (policy_rule::matches_query) is left.
struct bound_rule {
  const policy_rule* rule = nullptr;
  std::vector<bound_entry> order;
  rule_screen screen;        // its cheap tests, run before the query half
  bool reads_query = false;  // false: the query half holds for every query, so it is not tested
};

// A name entry of the override (resolved to a registry index) or "auto"; exclusions are folded into
// the skip flags.
struct bound_token {
  bool automatic = false;
  std::uint32_t backend = 0;
};

// Everything the selector decided for one domain.
struct bound_domain {
  attention_domain domain = attention_domain::decoder;  // the domain its backends and rules serve
  std::vector<bound_candidate> candidates;              // by registry index
  std::vector<capabilities> resolved;                   // variants resolved_on the platform (never grows after bind)
  std::vector<bound_rule> rules;                        // in policy order
  std::vector<std::uint32_t> registration_order;        // serving backends not skipped, when no rule matches
  std::vector<bound_token> tokens;
  std::string spec;  // the override, owned
  override_source source = override_source::none;
  override_source answer_source = override_source::none;  // a selection's source: none without a spec
  bool plan_ok = true;
  bool automatic = true;
  bool explicit_auto = false;
  bool has_forced = false;
};

// A (domain, phase) pair's place in bound_state::slot.
constexpr std::size_t domain_count = enum_values<attention_domain>().size();
constexpr std::size_t phase_count = enum_values<attention_phase>().size();
constexpr std::size_t slot_count = domain_count * phase_count;
constexpr std::size_t slot_index(attention_domain domain, attention_phase phase) noexcept {
  const auto d = static_cast<std::size_t>(domain);
  const auto ph = static_cast<std::size_t>(phase);
  // An out-of-range domain or phase reads slot 0, whose walk refuses the query (is_valid).
  return d < domain_count && ph < phase_count ? d * phase_count + ph : 0;
}

struct bound_state {
  const registry* reg = nullptr;
  platform plat;
  std::vector<implied_component> implied;  // what closing the given platform added (explain reports it)
  selector_options options;
  // The decided halves: one for each distinct (selecting domain, override) pair the overrides give a
  // (domain, phase), so a query finds its own in one load: domains[slot[slot_index(q)]].
  std::array<bound_domain, slot_count> domains;
  std::array<std::uint8_t, slot_count> slot{};
  shape_thresholds thresholds;                  // the registry's shape classes (catalog format 2)
  feature_vocabulary features;                  // the registry's feature names: the cache keys features by value
  bool key_by_class = true;                     // false when a custom check may read any length: the key holds values
  mutable std::optional<decision_cache> cache;  // filled by const select()
};

// The answer of a successful walk as one word (the cache's value): bit 0 set, winner index, rank,
// forced and fell-back flags.
constexpr std::uint64_t pack_answer(std::size_t winner, std::size_t rank, bool forced) noexcept {
  return 1U | (static_cast<std::uint64_t>(winner & 0x7fffffffU) << 1) |
         (static_cast<std::uint64_t>(rank & 0xffffU) << 32) | (static_cast<std::uint64_t>(forced) << 48);
}
constexpr std::uint64_t answer_fell_back_bit = std::uint64_t{1} << 49;
constexpr std::size_t answer_winner(std::uint64_t a) noexcept {
  return static_cast<std::size_t>((a >> 1) & 0x7fffffffU);
}
constexpr std::size_t answer_rank(std::uint64_t a) noexcept { return static_cast<std::size_t>((a >> 32) & 0xffffU); }
constexpr bool answer_forced(std::uint64_t a) noexcept { return ((a >> 48) & 1U) != 0; }
constexpr bool answer_fell_back(std::uint64_t a) noexcept { return (a & answer_fell_back_bit) != 0; }

inline void bind_domain(const registry& reg, const platform& p, attention_domain domain, const override_request& ovr,
                        bound_domain& d) {
  d.domain = domain;
  d.spec = std::string(ovr.spec);
  d.source = ovr.source;
  d.answer_source = trim(d.spec).empty() ? override_source::none : d.source;  // as the free select
  const auto plan = override_plan::parse(d.spec, reg);
  // A spec whose source is none is the free select's bad_override error.
  d.plan_ok = plan.ok() && !(d.source == override_source::none && !trim(d.spec).empty());
  if (!d.plan_ok) return;
  d.automatic = plan.automatic();
  d.explicit_auto = plan.explicit_auto();
  d.has_forced = plan.has_forced();
  // What the automatic walk never tries: excluded backends, and forced names it comes after (all of
  // them when there is no "auto": prefer mode walks the automatic order last).
  std::vector<char> skip(reg.size(), 0);
  bool after_auto = false;
  plan.for_each([&](const override_token& t) {
    if (t.type == override_token::kind::automatic) after_auto = true;
    if (t.type == override_token::kind::exclude || (t.type == override_token::kind::name && !after_auto))
      skip[t.backend] = 1;
    if (t.type != override_token::kind::exclude)
      d.tokens.push_back(bound_token{t.type == override_token::kind::automatic, static_cast<std::uint32_t>(t.backend)});
  });

  d.candidates.resize(reg.size());
  std::vector<std::uint32_t> to_resolve;  // candidates whose call rules name a component
  for (std::size_t i = 0; i < reg.size(); ++i) {
    const auto& b = reg.backends()[i];
    auto& c = d.candidates[i];
    c.backend = &b;
    c.serves = b.domains.contains(domain);
    c.usable = !first_platform_failure(b, domain, p);
    c.variant = c.serves ? resolve_variant(b, domain, p) : nullptr;
    c.checked = c.variant;
    // The call rules' component conditions are decided here, once (a custom check may read the variant,
    // so its backend keeps the registry's).
    if (c.usable && c.variant != nullptr && !b.extra_check && platform_decides_call_rules(*c.variant))
      to_resolve.push_back(static_cast<std::uint32_t>(i));
    if (c.serves && skip[i] == 0) d.registration_order.push_back(static_cast<std::uint32_t>(i));
  }
  d.resolved.reserve(to_resolve.size());  // exact: the candidates keep pointers into it
  for (const auto i : to_resolve) {
    d.resolved.push_back(resolved_on(*d.candidates[i].variant, p));
    d.candidates[i].checked = &d.resolved.back();
  }
  for (auto& c : d.candidates)
    if (c.checked != nullptr) c.live_gates = live_query_gates(*c.backend, *c.checked);
  const auto& rules = reg.policy().rules;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    if (rules[r].domain != domain || !rules[r].matches_platform(p)) continue;
    bound_rule br;
    br.rule = &rules[r];
    br.reads_query = rules[r].reads_query();
    br.screen = rule_screen::of(rules[r]);
    br.order.reserve(rules[r].order.size());
    for (std::size_t k = 0; k < rules[r].order.size(); ++k) {
      const auto& e = rules[r].order[k];
      bound_entry be;
      be.entry = &e;
      be.backend = static_cast<std::uint32_t>(reg.resolved(r, k));
      be.skip = skip[be.backend] != 0 || !e.enabled_on(p);
      be.reads_query = e.reads_query();
      br.order.push_back(be);
    }
    d.rules.push_back(std::move(br));
  }
}

// True when candidate `c` takes the query: its query gates pass (the platform half was decided at
// bind time) and, when advisories refuse, no warning holds.
ATTNSEL_INTERNAL_ALWAYS_INLINE bool takes(const bound_state& s, const bound_candidate& c, const query& q) noexcept {
  if (!c.usable || !query_gates_pass(*c.backend, *c.checked, q, s.plat, c.live_gates)) return false;
  return !(s.options.select.refuse_advisories && !c.backend->advisories.empty() &&
           first_warning(*c.backend, *c.variant, q, s.plat) != nullptr);
}

// The first rule whose query half holds for `q` (a rule without query conditions holds untested), or null.
ATTNSEL_INTERNAL_ALWAYS_INLINE const bound_rule* rule_for(const bound_state& s, const bound_domain& d,
                                                          const query& q) noexcept {
  auto it = d.rules.begin();
  if (it == d.rules.end() || !it->reads_query) return it == d.rules.end() ? nullptr : &*it;
  // The rules' packed cheap tests first (their platform half passed at bind time, so only the query's
  // mode, phase, dtypes and feature count decide them).
  const auto facts = call_facts::of(q, s.plat);
  for (; it != d.rules.end(); ++it)
    if (!it->reads_query || (it->screen.passes(facts) && it->rule->matches_query(q))) return &*it;
  return nullptr;
}

// The one walk's source over a domain's decided half (see core/impl/select/walk.hpp): the rules that
// matched the platform, their entries with the platform half decided and the names the override forced
// before "auto" or excluded folded into each entry's skip flag (so no set of forced names is kept).
struct bound_source {
  const bound_state& s;
  const bound_domain& d;
  const query& q;

  struct forced_set {
    void insert(std::size_t) noexcept {}
  };
  using order = const bound_rule*;

  [[nodiscard]] bool automatic() const noexcept { return d.automatic; }
  [[nodiscard]] bool has_tokens() const noexcept { return !d.tokens.empty(); }
  // Inline, as the whole walk: the usual call runs as one body.
  template <class F>
  ATTNSEL_INTERNAL_ALWAYS_INLINE void for_each_token(F&& f) const {
    for (const auto& t : d.tokens)
      if (f(t.automatic, t.backend)) return;
  }
  [[nodiscard]] ATTNSEL_INTERNAL_ALWAYS_INLINE order automatic_order() const noexcept { return rule_for(s, d, q); }
  [[nodiscard]] bool holds(order rule, std::size_t index) const noexcept {
    if (rule == nullptr) return d.candidates[index].serves;
    return std::any_of(rule->order.begin(), rule->order.end(),
                       [&](const bound_entry& e) { return e.backend == index; });
  }
  template <class Visitor>
  ATTNSEL_INTERNAL_ALWAYS_INLINE bool walk_order(order rule, const forced_set&, Visitor& visitor) const {
    if (rule == nullptr) {
      for (const auto index : d.registration_order)
        if (visitor.tried(index, false)) return true;
      return false;
    }
    for (const auto& e : rule->order) {
      if (e.skip || (e.reads_query && !e.entry->enabled_for(q))) continue;
      if (visitor.tried(e.backend, false)) return true;
    }
    return false;
  }
};

// Trying a backend on the bound half: its query gates (and refusing advisories). Counts each backend
// tried; the winner as a packed answer, or 0.
struct bound_visitor {
  const bound_state& s;
  const bound_domain& d;
  const query& q;
  std::size_t rank = 0;
  std::uint64_t answer = 0;

  ATTNSEL_INTERNAL_ALWAYS_INLINE bool tried(std::size_t index, bool forced) noexcept {
    ++rank;
    if (!takes(s, d.candidates[index], q)) return false;
    answer = pack_answer(index, rank, forced);
    return true;
  }
  void skipped(std::size_t, reason_code, const policy_entry*) noexcept {}
};

// Declared without `inline` or the noinline attribute: g++ refuses either order of the two on a
// declaration that precedes the definition (tests/header_units builds this at -O0 with -Werror).
std::uint64_t walk_bound(const bound_state& s, const bound_domain& d, const query& q) noexcept;

// A drafter the catalog does not serve walks the decoder's slot: the gates (a backend's own extra_check
// among them) see the query in that domain, as the free select's do. The cache key keeps the drafter's
// own domain. The copy shares the feature list: nothing is allocated.
ATTNSEL_INTERNAL_NOINLINE inline std::uint64_t walk_in_domain(const bound_state& s, const bound_domain& d,
                                                              const query& q) noexcept {
  query in_domain = q;
  in_domain.domain = d.domain;
  return walk_bound(s, d, in_domain);
}

// The one walk with an override's forced names: 0 where the free select answers, a forced backend where
// the matching rule states an engine that substitutes (policy_rule::forced), or prefer mode falling
// back (the free select records why each forced backend failed).
ATTNSEL_INTERNAL_NOINLINE inline std::uint64_t walk_forced(const bound_state& s, const bound_domain& d,
                                                           const query& q) noexcept {
  const bound_rule* r = rule_for(s, d, q);
  if (r != nullptr && r->rule->forced != forced_handling::honoured) return 0;
  const bool fallback_auto = s.options.select.prefer;
  const auto answer = walk(bound_source{s, d, q}, fallback_auto, bound_visitor{s, d, q}).answer;
  if (answer != 0 && fallback_auto && !answer_forced(answer) && !d.explicit_auto) return answer | answer_fell_back_bit;
  return answer;
}

// The one walk over the decided platform half: per query only each candidate's query gates, the rules'
// and the entries' query halves run. The packed answer, or 0 when the free select answers (no
// candidate passes, or walk_forced's cases). The usual call (no forced name, the query in the slot's
// domain) runs inline in its caller.
ATTNSEL_INTERNAL_ALWAYS_INLINE std::uint64_t walk_bound_inline(const bound_state& s, const bound_domain& d,
                                                               const query& q) noexcept {
  if (q.domain != d.domain) return walk_in_domain(s, d, q);
  if (d.has_forced) return walk_forced(s, d, q);
  return walk(bound_source{s, d, q}, false, bound_visitor{s, d, q}).answer;
}

// walk_bound_inline as one call, for the cache's misses and decide(): their callers stay small.
ATTNSEL_INTERNAL_NOINLINE inline std::uint64_t walk_bound(const bound_state& s, const bound_domain& d,
                                                          const query& q) noexcept {
  return walk_bound_inline(s, d, q);
}

// Every feature name a gate or a rule of `reg` reads: variants' and backends' features, call rules'
// conditions, advisories' conditions, policy rules' and entries' feature conditions. Two queries whose feature lists
// agree on these names get the same answer from every gate and rule.
inline std::vector<std::string> feature_names_of(const registry& reg) {
  std::vector<std::string> out;
  const auto add = [&out](const feature_set& f) { out.insert(out.end(), f.begin(), f.end()); };
  const auto add_caps = [&](const capabilities& c) {
    add(c.features);
    for_each_condition(c.call_rules, [&](const call_condition& k, std::string_view) { for_each_feature_list(k, add); });
  };
  for (const auto& b : reg.backends()) {
    add_caps(b.caps);
    for (const auto& v : b.variants) add_caps(v);
    for (const auto& a : b.advisories) for_each_feature_list(a.when, add);
  }
  for (const auto& r : reg.policy().rules) {
    for_each_feature_list(r, add);
    for (const auto& e : r.order) for_each_feature_list(e, add);
  }
  return out;
}

// True when the query's lengths and batch are within their limits: the part of is_valid that two
// queries of one key may not share (the key holds them by class, and every other field by value).
inline bool lengths_in_limits(const query& q) noexcept {
  return q.seq_len_q <= limits::seq_len && q.seq_len_kv <= limits::seq_len && q.batch_size <= limits::batch_size;
}

// The packed answer for `q` from the cache, or by the walk (then stored).
inline std::uint64_t cached_answer_of(const bound_state& s, const bound_domain& d, const query& q) noexcept {
  // Only valid queries are stored and the key is one-to-one on what the gates read (the lengths by
  // class, after their own limits are checked), so a hit needs no further validation.
  if (!lengths_in_limits(q)) return 0;
  std::uint64_t features = 0;
  // A feature no gate or rule names: no backend declares it, so no key is kept for it; the walk answers.
  if (!s.features.word_of(q.required, features)) return d.plan_ok && is_valid(q) ? walk_bound(s, d, q) : 0;
  const auto key = key_of(q, features, s.key_by_class ? &s.thresholds : nullptr);
  std::uint64_t packed = 0;
  if (s.cache->find(key, packed)) return packed;
  if (!d.plan_ok || !is_valid(q)) return 0;
  packed = walk_bound(s, d, q);
  if (packed != 0) s.cache->store(q, key, packed);
  return packed;
}

// The packed answer for `q` without a cache: validation and the walk, inline in the caller (select()'s
// uncached call runs as one body).
ATTNSEL_INTERNAL_ALWAYS_INLINE std::uint64_t walked_answer_of(const bound_state& s, const bound_domain& d,
                                                              const query& q) noexcept {
  return d.plan_ok && is_valid(q) ? walk_bound_inline(s, d, q) : 0;
}

// The packed answer for `q`: from the cache, or by the walk. 0 when only the free select answers: no
// winner, an invalid query or override.
inline std::uint64_t answer_of(const bound_state& s, const bound_domain& d, const query& q) noexcept {
  if (s.cache) return cached_answer_of(s, d, q);
  return d.plan_ok && is_valid(q) ? walk_bound(s, d, q) : 0;
}

// The decided half a query reads: the one bound for the override override_set::for_query gives it.
inline const bound_domain& domain_of(const bound_state& s, const query& q) noexcept {
  return s.domains[s.slot[slot_index(q.domain, q.phase)]];
}

// The free select's answer: errors, bad overrides and queries, prefer-mode fallbacks.
inline selection_result delegate(const bound_state& s, const bound_domain& d, const query& q) {
  return attnsel::select(*s.reg, q, s.plat, override_request{d.spec, d.source}, s.options.select);
}

// select()'s result for a packed answer, built in place (no selection to move or destroy); the free
// select's when the walk leaves the answer to it.
struct bound_result {
  ATTNSEL_INTERNAL_ALWAYS_INLINE static selection_result of(const bound_state& s, const bound_domain& d, const query& q,
                                                            std::uint64_t packed) {
    if (packed == 0 || answer_fell_back(packed)) return delegate(s, d, q);
    const auto& c = d.candidates[answer_winner(packed)];
    selection_result out;
    auto& chosen = out.value_;
    chosen.backend = c.backend;
    chosen.variant = c.variant;
    chosen.rank = answer_rank(packed);
    chosen.overridden = answer_forced(packed);
    chosen.source = d.answer_source;
    // Not cached: one test when the backend has no advisories (none of most).
    if (!c.backend->advisories.empty()) chosen.warning = first_warning_inline(*c.backend, *c.variant, q, s.plat);
    return out;
  }
};

// select() with the cache on and off: each path one body with its own registers (select() only
// dispatches, so neither pays for the other's).
ATTNSEL_INTERNAL_NOINLINE inline selection_result select_cached(const bound_state& s, const query& q) {
  const auto& d = domain_of(s, q);
  return bound_result::of(s, d, q, cached_answer_of(s, d, q));
}
ATTNSEL_INTERNAL_NOINLINE inline selection_result select_walked(const bound_state& s, const query& q) {
  const auto& d = domain_of(s, q);
  return bound_result::of(s, d, q, walked_answer_of(s, d, q));
}

}  // namespace detail

ATTNSEL_INLINE selector::selector(const registry& reg, platform p, const override_set& overrides,
                                  selector_options options)
    : state_(new detail::bound_state) {
  auto& s = *state_;
  s.reg = &reg;
  // Closed under the catalog's implications once, here, so select() never has to (and the free select
  // it falls back to sees a closed platform too).
  if (is_closed(reg, p)) {
    s.plat = std::move(p);
  } else {
    auto closed = close_platform(reg, p);
    s.plat = std::move(closed.value);
    s.implied = std::move(closed.implied);
  }
  s.options = options;
  // Each (domain, phase) reads the override override_set::for_query gives it, in the domain whose
  // backends and rules select for it; pairs that agree on both share one decided half.
  std::size_t bound = 0;
  for (const auto domain : enum_values<attention_domain>())
    for (const auto phase : enum_values<attention_phase>()) {
      query q;
      q.domain = domain;
      q.phase = phase;
      const auto& ovr = overrides.for_query(q);
      const auto selecting = reg.selecting_domain(domain);
      std::size_t k = 0;
      while (k < bound &&
             !(s.domains[k].domain == selecting && s.domains[k].spec == ovr.spec && s.domains[k].source == ovr.source))
        ++k;
      if (k == bound) detail::bind_domain(reg, s.plat, selecting, ovr, s.domains[bound++]);
      s.slot[detail::slot_index(domain, phase)] = static_cast<std::uint8_t>(k);
    }
  s.thresholds = detail::thresholds_of(reg);
  s.features = detail::feature_vocabulary(detail::feature_names_of(reg));
  s.key_by_class = std::none_of(reg.backends().begin(), reg.backends().end(),
                                [](const backend_descriptor& b) { return static_cast<bool>(b.extra_check); });
  if (options.cache && options.cache_slots > 0) s.cache.emplace(options.cache_slots);
}

ATTNSEL_INLINE selector::selector(const registry& reg, platform p, const override_request& ovr,
                                  selector_options options)
    : selector(reg, std::move(p), override_set{ovr, ovr, std::nullopt, std::nullopt, std::nullopt, ovr}, options) {}

ATTNSEL_INLINE selector::selector(selector&& other) noexcept : state_(other.state_) { other.state_ = nullptr; }

ATTNSEL_INLINE selector& selector::operator=(selector&& other) noexcept {
  std::swap(state_, other.state_);
  return *this;
}

ATTNSEL_INLINE selector::~selector() { delete state_; }

ATTNSEL_INLINE const registry& selector::bound_registry() const noexcept { return *state_->reg; }
ATTNSEL_INLINE const platform& selector::bound_platform() const noexcept { return state_->plat; }
ATTNSEL_INLINE bool selector::cache_enabled() const noexcept { return state_->cache.has_value(); }
ATTNSEL_INLINE cache_stats selector::stats() const noexcept {
  if (!state_->cache) return {};
  const auto counts = state_->cache->stats();
  return cache_stats{counts.hits, counts.misses};
}
ATTNSEL_INLINE void selector::clear_cache() noexcept {
  if (state_->cache) state_->cache->clear();
}

ATTNSEL_INLINE override_request selector::bound_override(attention_domain domain) const noexcept {
  query q;
  q.domain = domain;
  const auto& d = detail::domain_of(*state_, q);
  return override_request{d.spec, d.source};
}

ATTNSEL_INLINE selection_result selector::select(const query& q) const {
  return state_->cache ? detail::select_cached(*state_, q) : detail::select_walked(*state_, q);
}

ATTNSEL_INLINE decision selector::decide(const query& q) const {
  const auto& d = detail::domain_of(*state_, q);
  const auto packed = detail::answer_of(*state_, d, q);
  decision out;
  if (packed == 0) {
    // Only the free select answers: an error, or a query or override the walk does not take.
    const auto r = detail::delegate(*state_, d, q);
    if (!r) return out;
    out.backend = r->backend;
    out.variant = r->variant;
    out.rank = static_cast<std::uint32_t>(r->rank);
    out.overridden = r->overridden;
    out.fell_back = r->fell_back;
    out.source = r->source;
    out.warning = r->warning;
    return out;
  }
  const auto& c = d.candidates[detail::answer_winner(packed)];
  out.backend = c.backend;
  out.variant = c.variant;
  out.rank = static_cast<std::uint32_t>(detail::answer_rank(packed));
  out.overridden = detail::answer_forced(packed);
  out.fell_back = detail::answer_fell_back(packed);
  out.source = d.answer_source;
  if (!c.backend->advisories.empty())
    out.warning = detail::first_warning_inline(*c.backend, *c.variant, q, state_->plat);
  return out;
}

ATTNSEL_INLINE selection selector::select_or_throw(const query& q) const {
  auto result = select(q);
  if (!result) throw selection_exception(result.error());
  return result.value();
}

ATTNSEL_INLINE explanation selector::explain(const query& q) const {
  const auto& d = detail::domain_of(*state_, q);
  auto ex = attnsel::explain(*state_->reg, q, state_->plat, override_request{d.spec, d.source}, state_->options.select);
  ex.implied = state_->implied;  // the bound platform is closed already: state what closing it added
  return ex;
}

ATTNSEL_END_NAMESPACE
