// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for bound_selector.hpp: the platform-only precomputation and the query walk.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/bound_selector.hpp>
#endif

#include <attnsel/impl/hot.hpp>

#include <algorithm>
#include <utility>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

// The packed answer of a successful walk: bit 0 set, winner index, rank, forced flag.
constexpr std::uint64_t pack_answer(std::size_t winner, std::size_t rank, bool forced) noexcept {
  return 1U | (static_cast<std::uint64_t>(winner & 0x7fffffffU) << 1) |
         (static_cast<std::uint64_t>(rank & 0xffffU) << 32) | (static_cast<std::uint64_t>(forced) << 48);
}
constexpr std::size_t answer_winner(std::uint64_t a) noexcept {
  return static_cast<std::size_t>((a >> 1) & 0x7fffffffU);
}
constexpr std::size_t answer_rank(std::uint64_t a) noexcept { return static_cast<std::size_t>((a >> 32) & 0xffffU); }
constexpr bool answer_forced(std::uint64_t a) noexcept { return ((a >> 48) & 1U) != 0; }

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

inline void bind_domain(const registry& reg, const platform& p, attention_domain domain, const override_request& ovr,
                        const std::vector<std::string>& names, bound_domain& d) {
  d.backends.resize(reg.size());
  for (std::size_t i = 0; i < reg.size(); ++i) {
    const auto& b = reg.backends()[i];
    auto& bb = d.backends[i];
    bb.usable = !first_platform_failure(b, domain, p);
    bb.variant = b.domains.contains(domain) ? resolve_variant(b, domain, p) : nullptr;
    if (bb.variant != nullptr) bb.declared = words_of(bb.variant->features, names);
    if (b.domains.contains(domain)) d.registration_order.push_back(static_cast<std::uint32_t>(i));
  }
  const auto& rules = reg.policy().rules;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    if (rules[r].domain != domain || !rules[r].matches_platform(p)) continue;
    bound_rule br;
    br.rule = &rules[r];
    br.features = words_of(rules[r].features, names);
    br.without_features = words_of(rules[r].without_features, names);
    for (std::size_t k = 0; k < rules[r].order.size(); ++k) {
      const auto& e = rules[r].order[k];
      bound_entry be;
      be.backend = static_cast<std::uint32_t>(reg.resolved(r, k));
      be.enabled_on_platform = e.enabled_on(p);
      be.unless_features = words_of(e.unless_features, names);
      br.order.push_back(be);
    }
    d.rules.push_back(std::move(br));
  }
  d.spec = std::string(ovr.spec);
  d.source = ovr.source;
  const auto plan = override_plan::parse(d.spec, reg);
  d.plan_ok = plan.ok();
  if (!d.plan_ok) return;
  d.automatic = plan.automatic();
  d.explicit_auto = plan.explicit_auto();
  d.has_forced = plan.has_forced();
  plan.for_each([&](const override_token& t) {
    d.tokens.push_back(bound_token{t.type, static_cast<std::uint32_t>(t.backend)});
    if (t.type == override_token::kind::exclude) d.excluded.insert(t.backend);
  });
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
  detail::collect_feature_names(reg, s.feature_names);
  for (const auto& f : s.feature_names) {
    s.feature_heads.emplace_back(detail::name_head(f), f.size());
    s.feature_names_valid = s.feature_names_valid && is_valid_feature_name(f);
  }
  if (s.feature_names.size() > 128) {
    // More names than the bit words hold: every select goes to the free select (still correct).
    for (auto& d : s.domains) d.plan_ok = false;
    return;
  }
  detail::bind_domain(reg, s.plat, attention_domain::decoder, overrides.decoder, s.feature_names, s.domains[0]);
  detail::bind_domain(reg, s.plat, attention_domain::encoder, overrides.encoder, s.feature_names, s.domains[1]);
  if (options.cache && options.cache_slots > 0) s.cache.emplace(options.cache_slots);
}

ATTNSEL_INLINE selector::selector(const registry& reg, platform p, const override_request& ovr,
                                  selector_options options)
    : selector(reg, std::move(p), override_set{ovr, ovr}, options) {}

ATTNSEL_INLINE override_request selector::bound_override(attention_domain domain) const noexcept {
  const auto& d = state_.domains[static_cast<std::size_t>(domain)];
  return override_request{d.spec, d.source};
}

// The same walk as detail::walk (forced entries, then the policy order), over precomputed data.
ATTNSEL_INLINE std::uint64_t selector::decide(const detail::bound_domain& d, const query& q,
                                              const detail::feature_words& required) const {
  const auto& s = state_;
  const auto& backends = s.reg->backends();
  index_set seen;
  std::size_t rank = 0;
  std::uint64_t answer = 0;
  detail::feature_bits bits;
  bits.required = required;
  const auto try_backend = [&](std::uint32_t index, bool forced) {
    ++rank;
    const auto& bb = d.backends[index];
    if (!bb.usable) return false;
    bits.declared = bb.declared;
    if (detail::first_query_failure(backends[index], *bb.variant, q, s.plat, &bits)) return false;
    answer = detail::pack_answer(index, rank, forced);
    return true;
  };
  const auto walk_automatic = [&] {
    const detail::bound_rule* rule = nullptr;
    for (const auto& r : d.rules) {
      if (detail::covers(required, r.features) && !detail::overlaps(required, r.without_features) &&
          r.rule->matches_fields(q)) {
        rule = &r;
        break;
      }
    }
    if (rule == nullptr) {
      for (const auto index : d.registration_order) {
        if (seen.contains(index)) continue;
        seen.insert(index);
        if (!d.excluded.contains(index) && try_backend(index, false)) return true;
      }
      return false;
    }
    for (const auto& e : rule->order) {
      if (seen.contains(e.backend)) continue;
      seen.insert(e.backend);
      if (d.excluded.contains(e.backend) || !e.enabled_on_platform || detail::overlaps(required, e.unless_features))
        continue;
      if (try_backend(e.backend, false)) return true;
    }
    return false;
  };
  const bool fallback_auto = s.options.select.prefer && d.has_forced;
  bool automatic_done = false;
  for (const auto& t : d.tokens) {
    if (t.type == override_token::kind::name) {
      if (seen.contains(t.backend)) continue;
      seen.insert(t.backend);
      if (try_backend(t.backend, true)) break;
    } else if (t.type == override_token::kind::automatic) {
      automatic_done = true;
      if (walk_automatic()) break;
    }
  }
  if (answer == 0 && !automatic_done && (d.automatic || fallback_auto)) walk_automatic();
  // Prefer mode fell back to automatic: the result records why each forced backend failed, which
  // only the tracing path builds.
  if (answer != 0 && fallback_auto && !detail::answer_forced(answer) && !d.explicit_auto) return 0;
  return answer;
}

ATTNSEL_INLINE bool selector::feature_words_of(const query& q, detail::feature_words& out) const noexcept {
  // A linear scan over (first 8 bytes, size) pairs finds the one candidate; one compare confirms it.
  const auto& heads = state_.feature_heads;
  for (const auto& f : q.required) {
    const auto head = detail::name_head(f);
    std::size_t bit = 0;
    while (bit < heads.size() && (heads[bit].first != head || heads[bit].second != f.size())) ++bit;
    if (bit == heads.size() || (f.size() > 8 && state_.feature_names[bit] != f)) return false;
    out[bit / 64] |= std::uint64_t{1} << (bit % 64);
  }
  return true;
}

namespace detail {

// Upper bounds only: with them the packed key below is one-to-one (a head size of 0 packs too, but is
// never stored, because only valid queries are).
inline bool packable(const query& q) noexcept {
  return q.head_size <= max_head_size && q.head_size_v <= max_head_size && q.block_size <= max_block_size &&
         q.num_heads <= max_num_heads;
}

// The complete query in four words: feature bits, then every other field a gate or rule reads.
inline cache_key pack_query(const query& q, const feature_words& required) noexcept {
  return {required[0], required[1],
          static_cast<std::uint64_t>(q.head_size) | (static_cast<std::uint64_t>(q.value_head_size()) << 17) |
              (static_cast<std::uint64_t>(q.domain) << 34) | (static_cast<std::uint64_t>(q.dtype) << 36) |
              (static_cast<std::uint64_t>(q.kv_cache_dtype) << 40) | (static_cast<std::uint64_t>(q.attn_type) << 44) |
              (static_cast<std::uint64_t>(q.mode) << 48),
          static_cast<std::uint64_t>(q.block_size) | (static_cast<std::uint64_t>(q.num_heads) << 32)};
}

}  // namespace detail

ATTNSEL_INLINE selection_result selector::delegate(const detail::bound_domain& d, const query& q) const {
  return attnsel::select(*state_.reg, q, state_.plat, override_request{d.spec, d.source}, state_.options.select);
}

// Always inlined: a cache hit is little more than this.
ATTNSEL_GATE selection_result selector::answer(const detail::bound_domain& d, std::uint64_t packed) const {
  const auto winner = detail::answer_winner(packed);
  selection_result out;  // built in place: no selection to move or destroy
  auto& chosen = std::get<selection>(out.value_);
  chosen.backend = &state_.reg->backends()[winner];
  chosen.variant = d.backends[winner].variant;
  chosen.rank = detail::answer_rank(packed);
  chosen.overridden = detail::answer_forced(packed);
  chosen.source = d.spec.empty() ? override_source::none : d.source;
  return out;
}

ATTNSEL_INLINE selection_result selector::select(const query& q) const {
  const auto& s = state_;
  const auto& d = s.domains[static_cast<std::size_t>(q.domain) & 1U];
  detail::feature_words required{};
  // A feature outside the dictionary is declared by no variant, so every candidate fails: the free
  // select builds that error (or the bad_query one, for a malformed name).
  if (!d.plan_ok || !detail::packable(q) || !feature_words_of(q, required)) return delegate(d, q);
  // With the upper bounds checked and every feature a (valid) dictionary name, is_valid(q) is this:
  const bool valid = q.head_size != 0 && s.feature_names_valid;
  std::uint64_t packed = 0;
  if (s.cache) {
    const auto key = detail::pack_query(q, required);
    // Only valid queries are stored, and the key is one-to-one: a hit needs no validation.
    if (s.cache->find(key, packed)) return answer(d, packed);
    if (!valid) return delegate(d, q);
    packed = decide(d, q, required);
    if (packed == 0) return delegate(d, q);
    s.cache->store(key, packed);
    return answer(d, packed);
  }
  if (!valid) return delegate(d, q);
  packed = decide(d, q, required);
  return packed == 0 ? delegate(d, q) : answer(d, packed);
}

ATTNSEL_INLINE selection selector::select_or_throw(const query& q) const {
  auto result = select(q);
  if (!result) throw selection_exception(result.error());
  return result.value();
}

ATTNSEL_INLINE explanation selector::explain(const query& q) const {
  const auto& d = state_.domains[static_cast<std::size_t>(q.domain)];
  return attnsel::explain(*state_.reg, q, state_.plat, override_request{d.spec, d.source}, state_.options.select);
}

ATTNSEL_END_NAMESPACE
