// SPDX-License-Identifier: Apache-2.0
// diff_catalogs' platform side: the scopes (vendor, domain, mode), the arch points and component
// sets a comparison visits, and when two catalogs provably decide alike.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/diff.hpp>
#endif

#include <attnsel/catalog/report.hpp>
#include <attnsel/core/select.hpp>

#include <attnsel/core/impl/shape_classes.hpp>
#include <attnsel/core/impl/text.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE
namespace detail {

// Every capability block a registry declares, with its backend: the backend's own, or each variant.
template <class F>
void for_each_capabilities(const registry& reg, F&& f) {
  for (const auto& b : reg.backends()) {
    if (b.variants.empty()) {
      f(b, b.caps);
    } else {
      for (const auto& v : b.variants) f(b, v);
    }
  }
}

inline bool runs_on_vendor(const capabilities& c, device_vendor v) { return platforms_name_vendor(c.platforms, v); }

inline bool serves(const backend_descriptor& b, const capabilities& c, attention_domain d) {
  return b.domains.contains(d) && (c.domains.empty() || c.domains.contains(d));
}

inline bool rule_applies(const policy_rule& r, device_vendor v, attention_domain d, attention_mode m) {
  return r.vendor == v && r.domain == d && (r.modes.empty() || r.modes.contains(m));
}

// Keeps the first candidate of each signature: values no predicate tells apart give the same answers.
template <class T, class Signature>
std::vector<T> distinct_by(const std::vector<T>& candidates, Signature&& signature) {
  std::set<std::vector<bool>> seen;
  std::vector<T> out;
  for (const auto& c : candidates)
    if (seen.insert(signature(c)).second) out.push_back(c);
  return out;
}

// Signatures as hashes (issue 22): a candidate's signature is the set of predicates true of it, and
// its hash the XOR of a 128-bit key per true predicate. Where a predicate is true of few candidates
// (a feature list, a name list, an interval), the hashes are built by visiting each predicate once,
// so reducing an axis is near-linear instead of candidates x predicates. Two different signatures
// share a hash with probability about 2^-128 per pair.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct sig_hash {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  void flip(std::size_t predicate) {
    a ^= mix64(2 * static_cast<std::uint64_t>(predicate) + 1);
    b ^= mix64(2 * static_cast<std::uint64_t>(predicate) + 2);
  }
  void flip(const sig_hash& other) {
    a ^= other.a;
    b ^= other.b;
  }
  static sig_hash of(std::size_t predicate) {
    sig_hash h;
    h.flip(predicate);
    return h;
  }
  friend bool operator==(const sig_hash& x, const sig_hash& y) { return x.a == y.a && x.b == y.b; }
};

struct sig_hash_hasher {
  std::size_t operator()(const sig_hash& h) const noexcept { return static_cast<std::size_t>(h.a ^ (h.b << 1)); }
};

// Keeps the first candidate of each hash, in order.
template <class T>
std::vector<T> distinct_by_hash(const std::vector<T>& candidates, const std::vector<sig_hash>& hashes) {
  std::unordered_set<sig_hash, sig_hash_hasher> seen;
  std::vector<T> out;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (seen.insert(hashes[i]).second) out.push_back(candidates[i]);
  return out;
}

// The candidates once each, first occurrences in order.
template <class T>
std::vector<T> first_occurrences(const std::vector<T>& candidates) {
  std::set<T> seen;
  std::vector<T> out;
  for (const auto& c : candidates)
    if (seen.insert(c).second) out.push_back(c);
  return out;
}

// The capability blocks and rules of both catalogs that bear on one (vendor, domain, mode).
struct diff_scope {
  std::vector<const capabilities*> caps;
  std::vector<const policy_rule*> rules;
  // An advisory as the capabilities whose axes tell its condition apart (its platforms, KV dtypes,
  // dtypes, features and call condition as a forbidding call rule): the space then holds a call where
  // it holds and one where it does not. Never checked against; `caps` points into it (stable: a deque).
  std::deque<capabilities> advisory_caps;
};

inline capabilities advisory_axes(const advisory& a, attention_mode m) {
  capabilities c;
  c.mode = m;
  c.platforms = a.platforms;
  c.kv_cache_dtypes = a.kv_cache_dtypes;
  c.dtypes = a.when.dtypes;
  std::vector<std::string> names(a.when.features.begin(), a.when.features.end());
  names.insert(names.end(), a.when.without_features.begin(), a.when.without_features.end());
  c.features = feature_set(std::move(names));
  c.requires_components = a.when.components;
  call_condition never;
  never.never = true;
  c.call_rules.push_back(call_rule{a.when, never, a.id});
  return c;
}

inline diff_scope scope_of(const std::vector<const registry*>& regs, device_vendor v, attention_domain d,
                           attention_mode m) {
  diff_scope s;
  const attention_domain asked = d;
  for (const auto* reg : regs) {
    d = reg->selecting_domain(asked);  // a drafter this catalog does not serve selects as its decoder
    for_each_capabilities(*reg, [&](const backend_descriptor& b, const capabilities& c) {
      if (serves(b, c, d) && c.mode == m && runs_on_vendor(c, v)) s.caps.push_back(&c);
    });
    for (const auto& b : reg->backends()) {
      if (!b.domains.contains(d)) continue;
      for (const auto& a : b.advisories) {
        auto axes = advisory_axes(a, m);
        if (!runs_on_vendor(axes, v)) continue;
        s.advisory_caps.push_back(std::move(axes));
        s.caps.push_back(&s.advisory_caps.back());
      }
    }
    for (const auto& r : reg->policy().rules)
      if (rule_applies(r, v, d, m)) s.rules.push_back(&r);
  }
  return s;
}

// The arch points of a vendor: CUDA capabilities where a range starts or ends (and one below the
// lowest), gfx targets named plus one per family named (merged where no filter tells them apart).
// A platform point as the report names it: the arch, and for a measured rule's machine its fingerprint.
inline std::string point_text(const platform& p) {
  return p.device_name().empty() ? to_string(p) : to_string_with_components(p) + " on " + p.device_name();
}

inline std::vector<platform> arch_points(const std::vector<const registry*>& regs, device_vendor v) {
  struct filter {
    std::optional<cuda_capability> min, max;
    std::vector<gfx_arch> archs;
    std::vector<gfx_family> families;
  };
  std::vector<filter> filters;
  for (const auto* reg : regs) {
    for_each_capabilities(*reg, [&](const backend_descriptor&, const capabilities& c) {
      for (const auto& pc : c.platforms)
        if (pc.vendor == v) filters.push_back({pc.min_capability, pc.max_capability, pc.archs, pc.families});
    });
    for (const auto& r : reg->policy().rules)
      if (r.vendor == v) filters.push_back({r.min_capability, r.max_capability, r.archs, r.families});
  }
  std::vector<platform> out;
  if (v == device_vendor::cuda) {
    std::set<int> points;
    for (const auto& f : filters) {
      if (f.min) points.insert(f.min->value());
      if (f.max) points.insert(f.max->value() + 1);
    }
    if (points.empty()) points.insert(90);
    points.insert(*points.begin() - 1);
    for (int value : points)
      if (value >= 10 && value <= 999)
        out.push_back(platform::cuda(static_cast<std::uint8_t>(value / 10), static_cast<std::uint8_t>(value % 10)));
    // A measured rule holds on one machine: that machine (its arch, device name and exact component
    // versions) is a point of its own, or no point of the space would ever meet its fingerprint.
    for (const auto* reg : regs)
      for (const auto& r : reg->policy().rules) {
        if (r.vendor != v || !r.measured) continue;
        const auto cc = r.min_capability   ? *r.min_capability
                        : r.max_capability ? *r.max_capability
                                           : cuda_capability{9, 0};
        platform p = platform::cuda(cc.major, cc.minor);
        p.set_device_name(r.measured->device);
        for (const auto& c : r.measured->components) p.add_component(c.name, c.version);
        for (const auto& name : r.measured->present) p.add_component(name);
        if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(std::move(p));
      }
    return out;
  }
  if (v == device_vendor::rocm) {
    std::vector<gfx_arch> candidates;
    for (const auto& f : filters) {
      candidates.insert(candidates.end(), f.archs.begin(), f.archs.end());
      for (auto fam : f.families) {
        const auto& span = span_of(fam);
        if (span.count == 0) candidates.push_back(span.example);
        candidates.insert(candidates.end(), span.members.begin(), span.members.begin() + span.count);
      }
    }
    candidates.push_back(gfx942);  // the usual MI300 target, so a catalog without ROCm filters still gets one point
    // Each filter is true of a target it names or whose family it names. Families are few: the
    // family part of every target's hash comes from a table over family masks; names are visited once.
    std::vector<gfx_arch> unique;
    std::map<std::string, std::size_t> position;
    for (const auto& g : candidates)
      if (position.emplace(g.name(), unique.size()).second) unique.push_back(g);
    const auto families = enum_values<gfx_family>();
    const auto mask_of_target = [&](const gfx_arch& g) {
      unsigned m = 0;
      for (std::size_t k = 0; k < families.size(); ++k)
        if (g.in_family(families[k])) m |= 1u << k;
      return m;
    };
    const std::size_t masks = std::size_t{1} << families.size();
    std::vector<sig_hash> by_family(masks);
    std::vector<sig_hash> hashes(unique.size());
    std::vector<unsigned> target_mask(unique.size());
    for (std::size_t i = 0; i < unique.size(); ++i) target_mask[i] = mask_of_target(unique[i]);
    std::size_t predicate = 0;
    for (const auto& f : filters) {
      if (f.archs.empty() && f.families.empty()) continue;
      unsigned fm = 0;
      for (auto fam : f.families)
        for (std::size_t k = 0; k < families.size(); ++k)
          if (families[k] == fam) fm |= 1u << k;
      if (fm != 0)
        for (std::size_t m = 0; m < masks; ++m)
          if (m & fm) by_family[m].flip(predicate);
      std::set<std::size_t> named;
      for (const auto& g : f.archs)
        if (const auto it = position.find(g.name()); it != position.end()) named.insert(it->second);
      for (auto i : named)
        if (!(target_mask[i] & fm)) hashes[i].flip(predicate);
      ++predicate;
    }
    for (std::size_t i = 0; i < unique.size(); ++i) hashes[i].flip(by_family[target_mask[i]]);
    const auto distinct = distinct_by_hash(unique, hashes);
    for (const auto& g : distinct) out.push_back(platform(device_vendor::rocm).set_gfx(g));
    return out;
  }
  out.emplace_back(v);
  return out;
}

// The component sets of a scope, by description: up to 8 names, the distinct members of the power
// set as lists; beyond, "none", one name, all names or all but one, so that n sets of n names are
// never built when only counted (issue 22: they were, per mode and platform point).
struct component_choice {
  enum class kind : std::uint8_t { listed, single, all, all_but };
  kind k = kind::listed;
  std::size_t index = 0;  // listed: position in `listed`; single, all_but: the name's position in `all`
};

struct component_family {
  std::vector<component> all;
  std::vector<std::vector<component>> listed;
  std::vector<component_choice> choices;

  [[nodiscard]] std::size_t size() const noexcept { return choices.size(); }
  template <class F>
  void each(const component_choice& c, F&& f) const {
    switch (c.k) {
      case component_choice::kind::listed:
        for (const auto& x : listed[c.index]) f(x);
        break;
      case component_choice::kind::single:
        f(all[c.index]);
        break;
      case component_choice::kind::all:
        for (const auto& x : all) f(x);
        break;
      case component_choice::kind::all_but:
        for (std::size_t i = 0; i < all.size(); ++i)
          if (i != c.index) f(all[i]);
        break;
    }
  }
};

// Beyond 8 names: the empty set, each single name, all of them and all but each one, merged where
// they satisfy the same requirements and entry conditions. Each predicate (a block's required names R,
// or a rule entry's `when` R and `unless` U) is visited once: on {c} it holds when R is empty or {c}
// and c is not in U; on all-but-c when c is not in R and U is empty or {c} (issue 22: the signature
// of every set over every predicate was cubic in rules).
inline component_family component_sets_linear(const diff_scope& s, std::vector<component> all) {
  const std::size_t n = all.size();
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < n; ++i) index.emplace(all[i].name, i);
  sig_hash none_set;
  sig_hash all_set;
  std::vector<std::pair<std::set<std::size_t>, std::set<std::size_t>>> predicates;
  for (const auto* c : s.caps) {
    std::set<std::size_t> r;
    for (const auto& req : c->requires_components) r.insert(index.at(req.name));
    predicates.emplace_back(std::move(r), std::set<std::size_t>{});
  }
  for (const auto* rule : s.rules)
    for (const auto& e : rule->order) {
      std::set<std::size_t> r;
      std::set<std::size_t> u;
      for (const auto& x : e.when) r.insert(index.at(x));
      for (const auto& x : e.unless) u.insert(index.at(x));
      predicates.emplace_back(std::move(r), std::move(u));
    }
  std::vector<sig_hash> single_flips(n);
  std::vector<sig_hash> all_but_flips(n);
  for (std::size_t k = 0; k < predicates.size(); ++k) {
    const auto& [r, u] = predicates[k];
    const auto key = sig_hash::of(k);
    if (r.empty()) {
      none_set.flip(key);
      for (auto c : u) single_flips[c].flip(key);  // base has it; c in U removes it
    } else if (r.size() == 1 && !u.count(*r.begin())) {
      single_flips[*r.begin()].flip(key);
    }
    if (u.empty()) {
      all_set.flip(key);
      for (auto c : r) all_but_flips[c].flip(key);
    } else if (u.size() == 1 && !r.count(*u.begin())) {
      all_but_flips[*u.begin()].flip(key);
    }
  }
  using kind = component_choice::kind;
  std::vector<component_choice> choices;
  std::vector<sig_hash> hashes;
  // A choice with its hash: `base` with `flips` applied (null: none).
  const auto add = [&](kind k, std::size_t component, sig_hash base, const sig_hash* flips) {
    if (flips != nullptr) base.flip(*flips);
    choices.push_back({k, component});
    hashes.push_back(base);
  };
  add(kind::listed, 0, none_set, nullptr);  // the empty set
  for (std::size_t c = 0; c < n; ++c) add(kind::single, c, none_set, &single_flips[c]);
  add(kind::all, 0, all_set, nullptr);
  for (std::size_t skip = 0; skip < n; ++skip) add(kind::all_but, skip, all_set, &all_but_flips[skip]);
  component_family out;
  out.listed.emplace_back();
  out.choices = distinct_by_hash(choices, hashes);
  out.all = std::move(all);
  return out;
}

// Every set of the components this scope reads (power set up to 8 names; beyond, the empty set,
// each single name, all of them and all but each one). A present component takes the highest minimum
// version its requirements name and, up to 8 names, also each version a requirement or a call rule
// bounds (`cudnn >= 9.22.1`, `< 9.24.1`) and one below them all, one per range of versions that the
// conditions tell apart, so that version-keyed limits are sampled on both sides of every bound. Where
// those versions would make more than `max_version_sets` sets, each name keeps its one version.
inline constexpr std::size_t max_version_sets = 4096;

inline component_family component_sets(const diff_scope& s) {
  std::map<std::string, std::optional<component_version>> names;
  std::map<std::string, std::set<component_version>> bounds;
  std::vector<const component_condition*> conditions;  // every call-rule component condition
  // Every bounded condition, requirements too, by the name it reads: the ranges a version is sampled in.
  std::map<std::string, std::vector<const component_condition*>> ranges;
  const auto note = [&](const std::string& name, const std::optional<component_version>& version) {
    auto& slot = names[name];
    if (version && (!slot || *slot < *version)) slot = version;
  };
  const auto bound = [&](const component_condition& c) {
    names.emplace(c.name, std::nullopt);
    if (c.min_version) bounds[c.name].insert(*c.min_version);
    if (c.below_version) bounds[c.name].insert(*c.below_version);
    if (c.min_version || c.below_version) ranges[c.name].push_back(&c);
  };
  for (const auto* c : s.caps) {
    for (const auto& req : c->requires_components) {
      note(req.name, req.min_version);
      bound(req);
    }
    for_each_condition(c->call_rules, [&](const call_condition& cond, std::string_view) {
      for (const auto& comp : cond.components) {
        bound(comp);
        conditions.push_back(&comp);
      }
    });
  }
  for (const auto* r : s.rules)
    for (const auto& e : r->order) {
      for (const auto& n : e.when) note(n, std::nullopt);
      for (const auto& n : e.unless) note(n, std::nullopt);
    }
  std::vector<component> all;
  all.reserve(names.size());
  for (const auto& [name, version] : names) all.push_back({name, version});
  const std::size_t n = all.size();
  if (n > 8) return component_sets_linear(s, std::move(all));
  // Each name: absent, or present at one version of each range its conditions tell apart (its own
  // version first; then every bound, and a version below them all).
  std::vector<std::vector<component>> points(n);
  std::size_t total = 1;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::optional<component_version>> candidates{all[i].version};
    if (const auto it = bounds.find(all[i].name); it != bounds.end()) {
      component_version zero;  // `0`: below every bound
      zero.count = 1;
      candidates.emplace_back(zero);
      candidates.insert(candidates.end(), it->second.begin(), it->second.end());
    }
    const auto& conds = ranges[all[i].name];
    const auto seen = distinct_by(candidates, [&](const std::optional<component_version>& v) {
      std::vector<bool> sig;
      for (const auto* cond : conds) sig.push_back(cond->admits(v));
      return sig;
    });
    for (const auto& v : seen) points[i].push_back({all[i].name, v});
    total *= points[i].size() + 1;
  }
  if (total > max_version_sets)
    for (std::size_t i = 0; i < n; ++i) points[i].resize(1);
  // In the order of a binary count over the names (the first name varies fastest), so the first set
  // holding a name, which a diff's example shows, is the smallest.
  std::vector<std::vector<component>> sets{{}};
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t without = sets.size();
    sets.reserve(without * (points[i].size() + 1));
    for (const auto& c : points[i])
      for (std::size_t k = 0; k < without; ++k) {
        sets.push_back(sets[k]);
        sets.back().push_back(c);
      }
  }
  const auto find = [](const std::vector<component>& set, const std::string& name) -> const component* {
    const auto it = std::find_if(set.begin(), set.end(), [&](const component& c) { return c.name == name; });
    return it == set.end() ? nullptr : &*it;
  };
  const auto in_range = [&](const std::vector<component>& set, const component_condition& cond) {
    const component* c = find(set, cond.name);
    return c != nullptr && cond.admits(c->version);
  };
  // Components matter only through requirements, call-rule conditions and entry conditions: merge sets
  // that satisfy the same ones.
  component_family out;
  out.listed = distinct_by(sets, [&](const std::vector<component>& set) {
    std::vector<bool> sig;
    for (const auto* c : s.caps)
      sig.push_back(std::all_of(c->requires_components.begin(), c->requires_components.end(),
                                [&](const component_condition& r) { return in_range(set, r); }));
    for (const auto* cond : conditions) sig.push_back(in_range(set, *cond));
    for (const auto* r : s.rules)
      for (const auto& e : r->order) {
        const bool when =
            std::all_of(e.when.begin(), e.when.end(), [&](const std::string& x) { return find(set, x) != nullptr; });
        const bool unless = std::none_of(e.unless.begin(), e.unless.end(),
                                         [&](const std::string& x) { return find(set, x) != nullptr; });
        sig.push_back(when && unless);
      }
    return sig;
  });
  for (std::size_t k = 0; k < out.listed.size(); ++k) out.choices.push_back({component_choice::kind::listed, k});
  out.all = std::move(all);
  return out;
}

// True when both catalogs must decide alike on (vendor, domain): the same backends, and the same rules
// for that vendor and domain in the same order. Such configurations are counted, not evaluated.
// The rules of `reg` for one vendor and domain, in policy order.
inline std::vector<const policy_rule*> rules_for(const registry& reg, device_vendor v, attention_domain d) {
  std::vector<const policy_rule*> out;
  for (const auto& r : reg.policy().rules)
    if (r.vendor == v && r.domain == d) out.push_back(&r);
  return out;
}

// True when both catalogs state the same rules, in the same order, for one vendor and domain.
inline bool same_rules(const registry& a, const registry& b, device_vendor v, attention_domain d) {
  const auto ra = rules_for(a, v, d);
  const auto rb = rules_for(b, v, d);
  return std::equal(ra.begin(), ra.end(), rb.begin(), rb.end(),
                    [](const policy_rule* x, const policy_rule* y) { return *x == *y; });
}

inline bool same_behaviour(const registry& a, const registry& b, device_vendor v, attention_domain d) {
  return a.backends() == b.backends() && same_rules(a, b, v, d);
}

}  // namespace detail
ATTNSEL_END_NAMESPACE
