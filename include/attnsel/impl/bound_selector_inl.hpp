// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for bound_selector.hpp: the platform-only precomputation and the query walk.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/bound_selector.hpp>
#endif

#include <attnsel/impl/hot.hpp>

#include <algorithm>
#include <cstring>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// The packed answer of a successful walk: bit 0 set, winner index, rank, forced and fell-back flags.
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

inline void collect_feature_names(const registry& reg, std::vector<std::string>& out) {
  const auto add = [&](const feature_set& set) {
    for (const auto& f : set) out.push_back(f);
  };
  for (const auto& b : reg.backends()) {
    add(b.caps.features);
    for (const auto& v : b.variants) add(v.features);
  }
  for (const auto& r : reg.policy().rules) {
    add(r.features);
    add(r.without_features);
    for (const auto& e : r.order) add(e.unless_features);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
}

// Bits of `set` in the sorted dictionary `names`. Precondition: every name is in it (the dictionary
// was collected from the same registry).
inline feature_words words_of(const feature_set& set, const std::vector<std::string>& names) {
  feature_words out{};
  for (const auto& f : set) {
    const auto bit = static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), f) - names.begin());
    out[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }
  return out;
}

// The first 8 bytes of a name as a word (zero-padded).
inline std::uint64_t name_head(const std::string& name) noexcept {
  std::uint64_t head = 0;
  // Bind and look-up compute a name's head the same way, so the byte order of the load does not matter.
  if (name.size() >= 8) {
    std::memcpy(&head, name.data(), 8);
    return head;
  }
  for (std::size_t i = 0; i < name.size() && i < 8; ++i)
    head |= static_cast<std::uint64_t>(static_cast<unsigned char>(name[i])) << (8 * i);
  return head;
}

inline bool covers(const feature_words& have, const feature_words& want) noexcept {
  return ((want[0] & ~have[0]) | (want[1] & ~have[1])) == 0;
}

inline bool overlaps(const feature_words& a, const feature_words& b) noexcept {
  return ((a[0] & b[0]) | (a[1] & b[1])) != 0;
}

// The query words (query_gates.hpp) whose mode, dtype and kv-cache dtype a rule's fields match; the
// attention type is no field of a rule. Equal to policy_rule::matches_fields but for the head count.
inline std::uint64_t rule_accepts(const policy_rule& r) {
  std::uint64_t out = 0;
  for (const auto m : enum_values<attention_mode>())
    if (r.modes.empty() || r.modes.contains(m)) out |= mode_bit(m);
  for (const auto t : enum_values<attention_type>()) out |= attn_type_bit(t);
  for (const auto d : enum_values<data_type>())
    for (const auto k : enum_values<cache_dtype>())
      if ((r.dtypes.empty() || r.dtypes.contains(d)) && (r.kv_cache_dtypes.empty() || r.kv_cache_dtypes.contains(k)))
        out |= dtype_kv_bit(d, k);
  return out;
}

inline bool heads_match(const bound_rule& r, std::uint32_t num_heads) noexcept {
  if (r.min_num_heads == 0 && r.max_num_heads == 0) return true;
  if (num_heads == 0 || num_heads < r.min_num_heads) return false;
  return r.max_num_heads == 0 || num_heads <= r.max_num_heads;
}

inline void bind_domain(const registry& reg, const platform& p, attention_domain domain, const override_request& ovr,
                        const std::vector<std::string>& names, bound_domain& d) {
  d.spec = std::string(ovr.spec);
  d.source = ovr.source;
  d.answer_source = detail::trim(d.spec).empty() ? override_source::none : d.source;  // as the free select
  const auto plan = override_plan::parse(d.spec, reg);
  d.plan_ok = plan.ok();
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
  for (std::size_t i = 0; i < reg.size(); ++i) {
    const auto& b = reg.backends()[i];
    auto& c = d.candidates[i];
    c.backend = &b;
    c.serves = b.domains.contains(domain);
    c.usable = !first_platform_failure(b, domain, p);
    if (const auto* variant = c.serves ? resolve_variant(b, domain, p) : nullptr)
      c.gates = compile_query_gates(b, *variant, words_of(variant->features, names));
    if (c.serves && skip[i] == 0) d.registration_order.push_back(static_cast<std::uint32_t>(i));
  }
  const auto& rules = reg.policy().rules;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    if (rules[r].domain != domain || !rules[r].matches_platform(p)) continue;
    bound_rule br;
    br.accepts = rule_accepts(rules[r]);
    br.min_num_heads = rules[r].min_num_heads;
    br.max_num_heads = rules[r].max_num_heads;
    br.features = words_of(rules[r].features, names);
    br.without_features = words_of(rules[r].without_features, names);
    for (std::size_t k = 0; k < rules[r].order.size(); ++k) {
      const auto& e = rules[r].order[k];
      bound_entry be;
      be.backend = static_cast<std::uint32_t>(reg.resolved(r, k));
      be.skip = skip[be.backend] != 0 || !e.enabled_on(p);
      be.unless_features = words_of(e.unless_features, names);
      br.order.push_back(be);
    }
    d.rules.push_back(std::move(br));
  }
}

// A name no other selector in the process has had: this copy of the library's counter (its address
// tells copies in different shared objects apart) and its next count.
inline memo_owner next_memo_owner() noexcept {
  static std::atomic<std::uint64_t> count{0};
  return {static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&count)),
          count.fetch_add(1, std::memory_order_relaxed) + 1};
}

// Open addressing over the dictionary, at most half full: a query's feature is found in a probe or two.
inline std::size_t feature_hash(std::uint64_t head, std::size_t size) noexcept {
  return static_cast<std::size_t>(((head ^ size) * 0x9e3779b97f4a7c15ULL) >> 40);
}

inline std::vector<feature_slot> feature_table_of(const std::vector<std::string>& names) {
  std::size_t slots = 16;
  while (slots < 2 * names.size()) slots <<= 1;
  std::vector<feature_slot> table(slots);
  for (std::size_t bit = 0; bit < names.size(); ++bit) {
    const auto head = name_head(names[bit]);
    auto i = feature_hash(head, names[bit].size()) & (slots - 1);
    while (table[i].bit_plus_one != 0) i = (i + 1) & (slots - 1);
    table[i] = feature_slot{head, static_cast<std::uint32_t>(names[bit].size()), static_cast<std::uint32_t>(bit + 1)};
  }
  return table;
}

}  // namespace detail

namespace detail {
// True when the query states a field of the call (format 2).
inline bool states_call(const query& q) noexcept {
  return q.phase != attention_phase::unstated || q.seq_len_q != 0 || q.seq_len_kv != 0 || q.batch_size != 0 ||
         q.num_kv_heads != 0;
}

}  // namespace detail

ATTNSEL_INLINE selector::selector(const registry& reg, platform p, const override_set& overrides,
                                  selector_options options) {
  auto& s = state_;
  s.reg = &reg;
  // Closed under the catalog's implications once, here, so select() never has to (and the free select
  // it falls back to sees a closed platform too).
  s.plat = is_closed(reg, p) ? std::move(p) : close_platform(reg, p).value;
  s.options = options;
  s.memo_id = detail::next_memo_owner();
  detail::collect_feature_names(reg, s.feature_names);
  for (const auto& f : s.feature_names) s.feature_names_valid = s.feature_names_valid && is_valid_feature_name(f);
  const override_request* ovr[2] = {&overrides.decoder, &overrides.encoder};
  if (s.feature_names.size() > 128 || detail::registry_reads_call(reg)) {
    // More names than the bit words hold: every select goes to the free select (still correct). One
    // empty dictionary slot: every feature look-up misses.
    s.feature_table.resize(1);
    for (std::size_t i = 0; i < 2; ++i) {
      s.domains[i].spec = std::string(ovr[i]->spec);
      s.domains[i].source = ovr[i]->source;
      s.domains[i].plan_ok = false;
    }
    return;
  }
  s.feature_table = detail::feature_table_of(s.feature_names);
  detail::bind_domain(reg, s.plat, attention_domain::decoder, *ovr[0], s.feature_names, s.domains[0]);
  detail::bind_domain(reg, s.plat, attention_domain::encoder, *ovr[1], s.feature_names, s.domains[1]);
  // The cache key holds the enums above the first cache_feature_limit feature bits: a catalog with more
  // feature names selects through the walk alone.
  if (options.cache && options.cache_slots > 0 && s.feature_names.size() <= detail::cache_feature_limit)
    s.cache.emplace(options.cache_slots);
}

ATTNSEL_INLINE selector::selector(const registry& reg, platform p, const override_request& ovr,
                                  selector_options options)
    : selector(reg, std::move(p), override_set{ovr, ovr}, options) {}

ATTNSEL_INLINE override_request selector::bound_override(attention_domain domain) const noexcept {
  const auto& d = state_.domains[static_cast<std::size_t>(domain)];
  return override_request{d.spec, d.source};
}

// The same walk as detail::walk (forced entries, then the policy order), over precomputed data: the
// platform half of every check, condition and exclusion is already folded into flags and masks.
ATTNSEL_INLINE ATTNSEL_FLATTEN std::uint64_t selector::walk(const detail::bound_domain& d, const query& q,
                                                            const detail::query_facts& f) const noexcept {
  const auto& s = state_;
  std::size_t rank = 0;
  std::uint64_t answer = 0;
  const auto try_backend = [&](std::uint32_t index, bool forced) {
    ++rank;
    const auto& c = d.candidates[index];
    if (!c.usable || !detail::passes(c.gates, f, q, s.plat)) return false;
    answer = detail::pack_answer(index, rank, forced);
    return true;
  };
  const detail::bound_rule* rule = nullptr;  // the automatic walk's rule, once it ran
  const auto walk_automatic = [&] {
    for (const auto& r : d.rules) {
      if ((r.accepts & f.bits) == f.bits && detail::heads_match(r, q.num_heads) &&
          detail::covers(f.required, r.features) && !detail::overlaps(f.required, r.without_features)) {
        rule = &r;
        break;
      }
    }
    // try_backend records the answer; the walk stops at the first backend that takes the query.
    if (rule == nullptr)
      return std::any_of(d.registration_order.begin(), d.registration_order.end(),
                         [&](std::uint32_t index) { return try_backend(index, false); });
    return std::any_of(rule->order.begin(), rule->order.end(), [&](const detail::bound_entry& e) {
      return !e.skip && !detail::overlaps(f.required, e.unless_features) && try_backend(e.backend, false);
    });
  };
  // A forced name after "auto" is skipped when the automatic walk already visited it.
  const auto in_automatic_order = [&](std::uint32_t index) {
    if (rule == nullptr) return d.candidates[index].serves;
    return std::any_of(rule->order.begin(), rule->order.end(),
                       [&](const detail::bound_entry& e) { return e.backend == index; });
  };
  const bool fallback_auto = s.options.select.prefer && d.has_forced;
  bool automatic_done = false;
  for (const auto& t : d.tokens) {
    if (!t.automatic) {
      if (automatic_done && in_automatic_order(t.backend)) continue;
      if (try_backend(t.backend, true)) break;
    } else {
      automatic_done = true;
      if (walk_automatic()) break;
    }
  }
  if (answer == 0 && !automatic_done && (d.automatic || fallback_auto)) walk_automatic();
  // Prefer mode fell back to automatic: select() records why each forced backend failed, which only
  // the tracing path builds.
  if (answer != 0 && fallback_auto && !detail::answer_forced(answer) && !d.explicit_auto)
    answer |= detail::answer_fell_back_bit;
  return answer;
}

ATTNSEL_INLINE bool selector::feature_words_of(const query& q, detail::feature_words& out) const noexcept {
  if (remembered_words(q, out)) return true;
  const auto& table = state_.feature_table;
  const std::size_t mask = table.size() - 1;
  for (const auto& f : q.required) {
    const auto head = detail::name_head(f);
    auto i = detail::feature_hash(head, f.size()) & mask;
    while (table[i].bit_plus_one != 0 && (table[i].head != head || table[i].size != f.size())) i = (i + 1) & mask;
    if (table[i].bit_plus_one == 0) return false;
    const std::size_t bit = table[i].bit_plus_one - 1;
    // Names of up to 8 bytes are their head; a longer one is confirmed in full.
    if (f.size() > 8 && state_.feature_names[bit] != f) return false;
    out[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }
  // Remembered in the query's list (shared by its copies): the next call with it skips the loop.
  q.required.memo()->store(state_.memo_id, out);
  return true;
}

namespace detail {

// Every bound of a valid query but the head size's lower one: the walk relies on them.
inline bool packable(const query& q) noexcept {
  return q.head_size <= max_head_size && q.head_size_v <= max_head_size && q.block_size <= max_block_size &&
         q.num_heads <= max_num_heads && enums_in_range(q);
}

// The complete query in four words, each field whole (so the key is one-to-one on the raw fields and a
// look-up needs no validation: only valid queries are ever stored): the feature bits, with the five
// enums (a byte each) above the second word's feature bits, the head sizes, the block size and head
// count. Needs a dictionary of at most cache_feature_limit names (the selector checks it).
inline cache_key pack_query(const query& q, const feature_words& required) noexcept {
  static_assert(cache_feature_limit + 40 <= 128, "five enum bytes above the feature bits");
  const std::uint64_t enums = static_cast<std::uint64_t>(q.domain) | (static_cast<std::uint64_t>(q.dtype) << 8) |
                              (static_cast<std::uint64_t>(q.kv_cache_dtype) << 16) |
                              (static_cast<std::uint64_t>(q.attn_type) << 24) |
                              (static_cast<std::uint64_t>(q.mode) << 32);
  return {required[0], required[1] | (enums << (cache_feature_limit - 64)),
          static_cast<std::uint64_t>(q.head_size) | (static_cast<std::uint64_t>(q.head_size_v) << 32),
          static_cast<std::uint64_t>(q.block_size) | (static_cast<std::uint64_t>(q.num_heads) << 32)};
}

}  // namespace detail

ATTNSEL_INLINE ATTNSEL_COLD selection_result selector::delegate(const detail::bound_domain& d, const query& q) const {
  return attnsel::select(*state_.reg, q, state_.plat, override_request{d.spec, d.source}, state_.options.select);
}

// Always inlined: a cache hit is little more than this.
ATTNSEL_GATE selection_result selector::answer(const detail::bound_domain& d, std::uint64_t packed) {
  const auto& c = d.candidates[detail::answer_winner(packed)];
  selection_result out;  // built in place: no selection to move or destroy
  auto& chosen = out.value_;
  chosen.backend = c.backend;
  chosen.variant = c.gates.variant;
  chosen.rank = detail::answer_rank(packed);
  chosen.overridden = detail::answer_forced(packed);
  chosen.source = d.answer_source;
  return out;
}

ATTNSEL_GATE decision selector::answer_decision(const detail::bound_domain& d, std::uint64_t packed) noexcept {
  const auto& c = d.candidates[detail::answer_winner(packed)];
  decision out;
  out.backend = c.backend;
  out.variant = c.gates.variant;
  out.rank = static_cast<std::uint32_t>(detail::answer_rank(packed));
  out.overridden = detail::answer_forced(packed);
  out.fell_back = detail::answer_fell_back(packed);
  out.source = d.answer_source;
  return out;
}

// The general path (no cache, or feature bits not remembered yet): the bits, then the cache (a miss
// walks and stores, out of line in miss()) or the walk.
ATTNSEL_GATE std::uint64_t selector::fast_answer(const detail::bound_domain& d, const query& q) const noexcept {
  const auto& s = state_;
  detail::feature_words required{};
  // A feature outside the dictionary is declared by no variant, so every candidate fails: the free
  // select builds that error (or the bad_query one, for a malformed name).
  if (!feature_words_of(q, required)) return 0;
  if (!s.cache) return valid_for_walk(d, q) ? walk(d, q, detail::facts_of(q, required)) : 0;
  const auto key = detail::pack_query(q, required);
  std::uint64_t packed = 0;
  if (s.cache->find(key, packed)) return packed;
  return miss(d, q, required, key);
}

ATTNSEL_INLINE bool selector::valid_for_walk(const detail::bound_domain& d, const query& q) const noexcept {
  // With the upper bounds checked and every feature a (valid) dictionary name, is_valid(q) is this:
  return d.plan_ok && detail::packable(q) && q.head_size != 0 && state_.feature_names_valid;
}

ATTNSEL_INLINE ATTNSEL_COLD std::uint64_t selector::miss(const detail::bound_domain& d, const query& q,
                                                         const detail::feature_words& required,
                                                         const cache_key& key) const noexcept {
  if (!valid_for_walk(d, q)) return 0;
  const auto packed = walk(d, q, detail::facts_of(q, required));
  if (packed != 0) state_.cache->store(key, packed);
  return packed;
}

ATTNSEL_GATE const detail::bound_domain& selector::domain_of(const query& q) const noexcept {
  return state_.domains[static_cast<std::size_t>(q.domain) & 1U];
}

// With the cache on, the look-up is inlined into select and decide for a query without features or
// whose feature list remembers its bits for this selector; a hit returns without a call.
ATTNSEL_GATE bool selector::remembered_words(const query& q, detail::feature_words& out) const noexcept {
  const auto* memo = q.required.memo();
  return memo == nullptr || memo->find(state_.memo_id, out);
}

ATTNSEL_INLINE ATTNSEL_COLD std::uint64_t selector::miss_after_look_up(const detail::bound_domain& d,
                                                                       const query& q) const noexcept {
  detail::feature_words required{};
  if (!feature_words_of(q, required)) return 0;
  return miss(d, q, required, detail::pack_query(q, required));
}

ATTNSEL_INLINE ATTNSEL_NOINLINE selection_result selector::select_rest(const detail::bound_domain& d, const query& q,
                                                                       std::uint64_t packed, bool looked_up) const {
  if (packed == 0) packed = looked_up ? miss_after_look_up(d, q) : fast_answer(d, q);
  if (packed == 0 || detail::answer_fell_back(packed)) return delegate(d, q);
  return answer(d, packed);
}

ATTNSEL_INLINE selection_result selector::select(const query& q) const {
  if (detail::states_call(q)) return delegate(domain_of(q), q);
  detail::feature_words required{};
  if (state_.cache && remembered_words(q, required)) {
    std::uint64_t packed = 0;
    if (state_.cache->find(detail::pack_query(q, required), packed) && !detail::answer_fell_back(packed))
      return answer(domain_of(q), packed);
    return select_rest(domain_of(q), q, packed, true);
  }
  return select_rest(domain_of(q), q, 0, false);
}

ATTNSEL_INLINE ATTNSEL_COLD decision selector::delegate_decision(const detail::bound_domain& d, const query& q) const {
  decision out;
  const auto r = delegate(d, q);
  if (!r) return out;
  out.backend = r->backend;
  out.variant = r->variant;
  out.rank = static_cast<std::uint32_t>(r->rank);
  out.overridden = r->overridden;
  out.fell_back = r->fell_back;
  out.source = r->source;
  return out;
}

ATTNSEL_INLINE ATTNSEL_NOINLINE decision selector::decide_rest(const detail::bound_domain& d, const query& q,
                                                               bool looked_up) const {
  const auto packed = looked_up ? miss_after_look_up(d, q) : fast_answer(d, q);
  // Only the free select answers: an error, or a query or override the fast path does not take.
  if (packed == 0) return delegate_decision(d, q);
  return answer_decision(d, packed);
}

ATTNSEL_INLINE decision selector::decide(const query& q) const {
  if (detail::states_call(q)) return delegate_decision(domain_of(q), q);
  detail::feature_words required{};
  if (state_.cache && remembered_words(q, required)) {
    std::uint64_t packed = 0;
    if (state_.cache->find(detail::pack_query(q, required), packed)) return answer_decision(domain_of(q), packed);
    return decide_rest(domain_of(q), q, true);
  }
  return decide_rest(domain_of(q), q, false);
}

ATTNSEL_INLINE selection selector::select_or_throw(const query& q) const {
  auto result = select(q);
  if (!result) throw selection_exception(result.error());
  return result.value();
}

ATTNSEL_INLINE explanation selector::explain(const query& q) const {
  const auto& d = domain_of(q);
  return attnsel::explain(*state_.reg, q, state_.plat, override_request{d.spec, d.source}, state_.options.select);
}

ATTNSEL_END_NAMESPACE
