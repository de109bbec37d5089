// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for diff.hpp: the configuration space, the comparison and its reports.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/diff.hpp>
#endif

#include <attnsel/report.hpp>
#include <attnsel/selector.hpp>

#include <attnsel/impl/shape_classes.hpp>
#include <attnsel/impl/text.hpp>

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

inline bool runs_on_vendor(const capabilities& c, device_vendor v) {
  if (c.platforms.empty()) return true;
  return std::any_of(c.platforms.begin(), c.platforms.end(),
                     [&](const platform_constraint& pc) { return pc.vendor == v; });
}

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
  for (const auto& comp : a.when.components)
    c.requires_components.push_back(component_requirement{comp.name, comp.min_version, comp.below_version});
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
    const auto add = [&](const char* name) {
      if (auto g = parse_gfx_arch(name)) candidates.push_back(*g);
    };
    for (const auto& f : filters) {
      candidates.insert(candidates.end(), f.archs.begin(), f.archs.end());
      for (auto fam : f.families) {
        switch (fam) {
          case gfx_family::gfx9:
            add("gfx90a");
            break;
          case gfx_family::gfx10:
            add("gfx1030");
            break;
          case gfx_family::gfx11:
            add("gfx1100");
            break;
          case gfx_family::gfx12:
            add("gfx1201");
            break;
          case gfx_family::mi300:
            add("gfx942");
            add("gfx950");
            break;
          case gfx_family::cdna:
            add("gfx908");
            break;
          case gfx_family::rdna:
            add("gfx1100");
            break;
        }
      }
    }
    add("gfx942");  // the usual MI300 target, so a catalog without ROCm filters still gets one point
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
  choices.push_back({kind::listed, 0});  // the empty set
  hashes.push_back(none_set);
  for (std::size_t c = 0; c < n; ++c) {
    choices.push_back({kind::single, c});
    auto h = none_set;
    h.flip(single_flips[c]);
    hashes.push_back(h);
  }
  choices.push_back({kind::all, 0});
  hashes.push_back(all_set);
  for (std::size_t skip = 0; skip < n; ++skip) {
    choices.push_back({kind::all_but, skip});
    auto h = all_set;
    h.flip(all_but_flips[skip]);
    hashes.push_back(h);
  }
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
  // Every version condition, by the name it reads: (min, below), for the signatures.
  std::vector<const component_condition*> conditions;  // every call-rule component condition
  std::map<std::string, std::vector<std::pair<std::optional<component_version>, std::optional<component_version>>>>
      ranges;
  const auto note = [&](const std::string& name, const std::optional<component_version>& version) {
    auto& slot = names[name];
    if (version && (!slot || *slot < *version)) slot = version;
  };
  const auto bound = [&](const std::string& name, const std::optional<component_version>& min,
                         const std::optional<component_version>& below) {
    names.emplace(name, std::nullopt);
    if (min) bounds[name].insert(*min);
    if (below) bounds[name].insert(*below);
    if (min || below) ranges[name].emplace_back(min, below);
  };
  for (const auto* c : s.caps) {
    for (const auto& req : c->requires_components) {
      note(req.name, req.min_version);
      bound(req.name, req.min_version, req.below_version);
    }
    for (const auto& r : c->call_rules)
      for (const auto* cond : {&r.when, &r.require})
        for (const auto& comp : cond->components) {
          bound(comp.name, comp.min_version, comp.below_version);
          conditions.push_back(&comp);
        }
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
  const auto version_in = [](const std::optional<component_version>& v, const std::optional<component_version>& min,
                             const std::optional<component_version>& below) {
    if (!min && !below) return true;
    if (!v) return false;
    return !(min && *v < *min) && !(below && !(*v < *below));
  };
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
      for (const auto& [min, below] : conds) sig.push_back(version_in(v, min, below));
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
  const auto in_range = [&](const std::vector<component>& set, const std::string& name,
                            const std::optional<component_version>& min,
                            const std::optional<component_version>& below) {
    const component* c = find(set, name);
    return c != nullptr && version_in(c->version, min, below);
  };
  // Components matter only through requirements, call-rule conditions and entry conditions: merge sets
  // that satisfy the same ones.
  component_family out;
  out.listed = distinct_by(sets, [&](const std::vector<component>& set) {
    std::vector<bool> sig;
    for (const auto* c : s.caps)
      sig.push_back(std::all_of(
          c->requires_components.begin(), c->requires_components.end(),
          [&](const component_requirement& r) { return in_range(set, r.name, r.min_version, r.below_version); }));
    for (const auto* cond : conditions)
      sig.push_back(in_range(set, cond->name, cond->min_version, cond->below_version));
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

// The query axes of a scope, each reduced to the values some check or rule tells apart.
// One call a diff asks about (catalog format 2): a phase and the shape fields; 0 = unstated.
struct call_point {
  attention_phase phase = attention_phase::unstated;
  std::uint32_t seq_len_q = 0;
  std::uint32_t seq_len_kv = 0;
  std::uint32_t batch_size = 0;
  std::uint32_t gqa_group = 0;  ///< stated through num_kv_heads = num_heads / gqa_group; 0: unstated

  friend bool operator==(const call_point& a, const call_point& b) {
    return a.phase == b.phase && a.seq_len_q == b.seq_len_q && a.seq_len_kv == b.seq_len_kv &&
           a.batch_size == b.batch_size && a.gqa_group == b.gqa_group;
  }
  friend bool operator<(const call_point& a, const call_point& b) {
    const auto key = [](const call_point& c) {
      return std::make_tuple(static_cast<int>(c.phase), c.seq_len_q, c.seq_len_kv, c.batch_size, c.gqa_group);
    };
    return key(a) < key(b);
  }
};

inline std::string call_text(const call_point& c) {
  std::string out(to_string(c.phase));
  if (c.seq_len_q) out += " seq_len_q=" + std::to_string(c.seq_len_q);
  if (c.seq_len_kv) out += " seq_len_kv=" + std::to_string(c.seq_len_kv);
  if (c.batch_size) out += " batch_size=" + std::to_string(c.batch_size);
  if (c.gqa_group) out += " gqa_group=" + std::to_string(c.gqa_group);
  return out;
}

// a * b, or SIZE_MAX when that overflows: counts are compared with a limit before anything is built.
inline std::size_t saturating_product(std::initializer_list<std::size_t> factors) {
  std::size_t out = 1;
  for (auto f : factors) {
    if (f == 0) return 0;
    if (out > SIZE_MAX / f) return SIZE_MAX;
    out *= f;
  }
  return out;
}

inline std::size_t saturating_sum(std::size_t a, std::size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; }

inline std::string with_commas(std::size_t n) {
  auto digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The calls axis by its factors (issue 35): each phase x each query length x each key length x each
// batch size x each GQA group, plus the corners of measured rules. Each factor is linear in the
// catalogs; the product is counted (size()) and walked (for_each()), never stored, so a space too
// large to compare is refused before any of it is built.
struct call_axes {
  std::vector<attention_phase> phases = {attention_phase::unstated};
  std::vector<std::uint32_t> seq_len_q = {0};  // ascending, 0 (unstated) first
  std::vector<std::uint32_t> seq_len_kv = {0};
  std::vector<std::uint32_t> batch_size = {0};
  std::vector<std::uint32_t> gqa_group = {0};
  std::vector<call_point> corners;  // measured rules' own corners, in rule order (issue 23)

  [[nodiscard]] std::size_t product_size() const {
    return saturating_product(
        {phases.size(), seq_len_q.size(), seq_len_kv.size(), batch_size.size(), gqa_group.size()});
  }
  [[nodiscard]] std::size_t size() const { return saturating_sum(product_size(), corners.size()); }
  template <class F>
  void for_each(F&& f) const {
    for (auto ph : phases)
      for (auto q : seq_len_q)
        for (auto kv : seq_len_kv)
          for (auto b : batch_size)
            for (auto g : gqa_group) f(call_point{ph, q, kv, b, g});
    for (const auto& c : corners) f(c);
  }
  // How many of the calls state the GQA group g.
  [[nodiscard]] std::size_t with_group(std::uint32_t g) const {
    std::size_t n = std::binary_search(gqa_group.begin(), gqa_group.end(), g)
                        ? saturating_product({phases.size(), seq_len_q.size(), seq_len_kv.size(), batch_size.size()})
                        : 0;
    for (const auto& c : corners)
      if (c.gqa_group == g) n = saturating_sum(n, 1);
    return n;
  }
  [[nodiscard]] std::string sizes_text() const {
    return "phases " + with_commas(phases.size()) + " x seq_len_q " + with_commas(seq_len_q.size()) + " x seq_len_kv " +
           with_commas(seq_len_kv.size()) + " x batch_size " + with_commas(batch_size.size()) + " x gqa_group " +
           with_commas(gqa_group.size()) + " + " + with_commas(corners.size()) + " measured corners";
  }
  friend bool operator==(const call_axes& a, const call_axes& b) {
    return a.phases == b.phases && a.seq_len_q == b.seq_len_q && a.seq_len_kv == b.seq_len_kv &&
           a.batch_size == b.batch_size && a.gqa_group == b.gqa_group && a.corners == b.corners;
  }
};

struct diff_axes {
  call_axes calls;  // just the unstated call when the scope reads no phase or shape
  std::vector<std::uint32_t> head_sizes;
  std::vector<data_type> dtypes;
  std::vector<cache_dtype> kv_cache_dtypes;
  std::vector<std::uint32_t> block_sizes;
  std::vector<attention_type> attn_types;
  std::vector<std::string> features;  // "" = none
  std::vector<std::uint32_t> num_heads;
  // Head-count classes, for stating a GQA group with a head count of the same class (issue 35): the
  // positive counts cut into intervals [head_starts[k], head_starts[k + 1]) that no rule tells apart
  // inside, the class of each interval, and the class of each value of `num_heads` (0: unknown).
  std::vector<std::uint32_t> head_starts;
  std::vector<std::uint32_t> interval_class;
  std::vector<std::uint32_t> head_class;
  // Filled by realise_groups() once the space is accepted: for num_heads[i] and group groups[j], the
  // head count that states it (0: none in the class can) at realised[i * groups.size() + j].
  std::vector<std::uint32_t> groups;
  std::vector<std::uint32_t> realised;
};

inline bool block_accepted(const std::vector<std::uint32_t>& multiples, std::uint32_t size) {
  if (multiples.empty() || size == 0) return true;
  return std::any_of(multiples.begin(), multiples.end(), [&](std::uint32_t m) { return size % m == 0; });
}

// One value per class of a shape field (issue 35; before, both sides of every cut, up to twice as
// many per field and 16 times as many calls): 0 (unstated), and for cuts c1 < ... < ck (a class is
// [ci, ci+1 - 1]) each ci - 1 and ck, up to the field's limit. `both_sides` also keeps each ci, so
// two unequal lengths of one class exist where `equal_seq_lens` compares the query and key lengths.
inline std::vector<std::uint32_t> field_values(const std::vector<std::uint32_t>& cuts, std::uint32_t limit,
                                               bool both_sides) {
  std::vector<std::uint32_t> out = {0};
  for (auto c : cuts) {
    if (c > 1) out.push_back(c - 1);
    if (both_sides) out.push_back(c);
  }
  if (!cuts.empty()) out.push_back(*std::max_element(cuts.begin(), cuts.end()));
  out.erase(std::remove_if(out.begin(), out.end(), [&](std::uint32_t v) { return v > limit; }), out.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The calls that tell the scope's format-2 limits and conditions apart: the unstated call, and when
// something reads them, each phase and one value per class of every length, batch and GQA-group
// threshold (a query length equal to each key length among them, for `equal_seq_lens`).
inline call_axes calls_of(const diff_scope& s) {
  bool phases = false;
  bool equal_lens = false;
  shape_thresholds cuts;
  for (const auto* c : s.caps) {
    add_cuts(*c, cuts);
    for (const auto& r : c->call_rules) {
      phases = phases || !r.when.phases.empty() || !r.require.phases.empty();
      equal_lens = equal_lens || r.when.equal_seq_lens || r.require.equal_seq_lens;
    }
  }
  for (const auto* r : s.rules) {
    if (r->measured) continue;  // its own corners below
    add_cuts(r->shape, cuts);
    phases = phases || !r->phases.empty();
    for (const auto& e : r->order) {
      add_cuts(e.shape, cuts);
      phases = phases || !e.phases.empty();
    }
  }
  const auto values = [&](shape_field f, std::uint32_t limit) {
    return field_values(cuts.cuts[static_cast<std::size_t>(f)], limit, equal_lens);
  };
  call_axes out;
  if (phases) out.phases = {attention_phase::unstated, attention_phase::prefill, attention_phase::decode};
  out.seq_len_q = values(shape_field::seq_len_q, limits::seq_len);
  out.seq_len_kv = values(shape_field::seq_len_kv, limits::seq_len);
  out.batch_size = values(shape_field::batch_size, limits::batch_size);
  // GQA groups, one per class (stated through num_kv_heads: for_each_query).
  out.gqa_group = values(shape_field::gqa_group, limits::num_heads);
  out.seq_len_q.insert(out.seq_len_q.end(), out.seq_len_kv.begin(), out.seq_len_kv.end());
  std::sort(out.seq_len_q.begin(), out.seq_len_q.end());
  out.seq_len_q.erase(std::unique(out.seq_len_q.begin(), out.seq_len_q.end()), out.seq_len_q.end());
  // A measured rule's class: the corners of its own ranges, with its GQA group. Crossed with every
  // other rule's cuts they would multiply as classes are added (an overlay has dozens).
  for (const auto* r : s.rules) {
    if (!r->measured) continue;
    const auto ends = [&](shape_field f) {
      std::vector<std::uint32_t> v;
      const auto& range = r->shape[f];
      if (!range) return std::vector<std::uint32_t>{0};
      v.push_back(range->min);
      if (range->bounded_above() && range->max != range->min) v.push_back(range->max);
      return v;
    };
    const auto& g = r->shape[shape_field::gqa_group];
    const std::uint32_t gqa = g ? g->min : 0;
    std::vector<attention_phase> rule_phases;
    r->phases.for_each([&](attention_phase ph) { rule_phases.push_back(ph); });
    if (rule_phases.empty()) rule_phases.push_back(attention_phase::unstated);
    for (auto ph : rule_phases)
      for (auto q : ends(shape_field::seq_len_q))
        for (auto kv : ends(shape_field::seq_len_kv))
          for (auto b : ends(shape_field::batch_size)) out.corners.push_back({ph, q, kv, b, gqa});
  }
  return out;
}

inline diff_axes axes_of(const diff_scope& s) {
  diff_axes ax;
  ax.calls = calls_of(s);
  // Head sizes: the usual sizes first, then every boundary a spec names.
  std::vector<std::uint32_t> heads = {128, 64, 80, 96, 256, 512, 576};
  const auto add_boundaries = [&heads](const head_size_spec& h) {
    if (h.form == head_size_spec::kind::set) {
      heads.insert(heads.end(), h.values.begin(), h.values.end());
    } else if (h.form == head_size_spec::kind::range) {
      heads.push_back(h.min);
      if (h.min > 1) heads.push_back(h.min - 1);
      if (h.max < max_head_size) {
        heads.push_back(h.max);
        heads.push_back(h.max + 1);
      }
      if (h.multiple_of > 1) heads.push_back(((h.min + h.multiple_of - 1) / h.multiple_of) * h.multiple_of + 4);
    }
  };
  // A call rule's head sizes (its `when` or its `require`) tell heads apart as a variant's own do.
  const auto call_rule_heads = [](const capabilities& c, auto&& visit) {
    for (const auto& r : c.call_rules)
      for (const auto* cond : {&r.when, &r.require})
        if (cond->head_sizes) visit(*cond->head_sizes);
  };
  for (const auto* c : s.caps) {
    add_boundaries(c->head_sizes);
    for (const auto& d : c->head_sizes_by_dtype) add_boundaries(d.head_sizes);
    call_rule_heads(*c, add_boundaries);
  }
  for (const auto* r : s.rules) heads.insert(heads.end(), r->head_sizes.begin(), r->head_sizes.end());
  heads.erase(std::remove_if(heads.begin(), heads.end(), [](std::uint32_t h) { return h == 0 || h > max_head_size; }),
              heads.end());
  ax.head_sizes = distinct_by(first_occurrences(heads), [&](std::uint32_t h) {
    std::vector<bool> sig;
    for (const auto* c : s.caps) {
      sig.push_back(c->head_sizes.accepts(h));
      for (const auto& d : c->head_sizes_by_dtype) sig.push_back(d.head_sizes.accepts(h));
      call_rule_heads(*c, [&](const head_size_spec& spec) { sig.push_back(spec.accepts(h)); });
    }
    for (const auto* r : s.rules)
      sig.push_back(r->head_sizes.empty() || std::binary_search(r->head_sizes.begin(), r->head_sizes.end(), h));
    return sig;
  });

  const auto dts = enum_values<data_type>();
  ax.dtypes = distinct_by(std::vector<data_type>(dts.begin(), dts.end()), [&](data_type d) {
    std::vector<bool> sig;
    for (const auto* c : s.caps) {
      sig.push_back(c->dtypes.empty() || c->dtypes.contains(d));
      sig.push_back(&c->head_sizes_for(d) != &c->head_sizes);  // a dtype with head sizes of its own
    }
    for (const auto* r : s.rules) sig.push_back(r->dtypes.empty() || r->dtypes.contains(d));
    // `auto` KV passes when the compute dtype's cache dtype is listed: keep dtypes apart there too.
    for (const auto* c : s.caps) {
      const auto as_cache = d == data_type::float16    ? cache_dtype::float16
                            : d == data_type::bfloat16 ? cache_dtype::bfloat16
                                                       : cache_dtype::float32;
      sig.push_back(c->kv_cache_dtypes.contains(as_cache));
    }
    return sig;
  });

  const auto kvs = enum_values<cache_dtype>();
  ax.kv_cache_dtypes = distinct_by(std::vector<cache_dtype>(kvs.begin(), kvs.end()), [&](cache_dtype k) {
    std::vector<bool> sig{k == cache_dtype::automatic};  // `auto` depends on the dtype: its own class
    for (const auto* c : s.caps) sig.push_back(c->kv_cache_dtypes.empty() || c->kv_cache_dtypes.contains(k));
    for (const auto* r : s.rules) sig.push_back(r->kv_cache_dtypes.empty() || r->kv_cache_dtypes.contains(k));
    return sig;
  });

  std::vector<std::uint32_t> blocks = {0, 1, 8, 16, 32, 64, 128, 256};
  for (const auto* c : s.caps) {
    blocks.insert(blocks.end(), c->block_size_multiples.begin(), c->block_size_multiples.end());
    if (c->preferred_block_size) blocks.push_back(c->preferred_block_size);
  }
  ax.block_sizes = distinct_by(first_occurrences(blocks), [&](std::uint32_t size) {
    std::vector<bool> sig;
    for (const auto* c : s.caps) sig.push_back(block_accepted(c->block_size_multiples, size));
    return sig;
  });

  const auto ats = enum_values<attention_type>();
  ax.attn_types = distinct_by(std::vector<attention_type>(ats.begin(), ats.end()), [&](attention_type t) {
    std::vector<bool> sig;
    for (const auto* c : s.caps) sig.push_back(c->attn_types.empty() || c->attn_types.contains(t));
    return sig;
  });

  std::vector<std::string> feats = {""};
  for (const auto* c : s.caps) feats.insert(feats.end(), c->features.begin(), c->features.end());
  for (const auto* r : s.rules) {
    feats.insert(feats.end(), r->features.begin(), r->features.end());
    feats.insert(feats.end(), r->without_features.begin(), r->without_features.end());
    for (const auto& e : r->order) feats.insert(feats.end(), e.unless_features.begin(), e.unless_features.end());
  }
  {
    std::set<std::string> seen;
    feats.erase(
        std::remove_if(feats.begin(), feats.end(), [&](const std::string& f) { return !seen.insert(f).second; }),
        feats.end());
  }
  {
    // Predicate 0 is "no feature"; every other one is a feature list, true of the names it holds.
    std::map<std::string, sig_hash> by_name;
    std::size_t predicate = 1;
    const auto list = [&](const feature_set& names) {
      for (const auto& f : names) by_name[f].flip(predicate);
      ++predicate;
    };
    for (const auto* c : s.caps) list(c->features);
    for (const auto* r : s.rules) {
      list(r->features);
      list(r->without_features);
      for (const auto& e : r->order) list(e.unless_features);
    }
    std::vector<sig_hash> hashes;
    hashes.reserve(feats.size());
    for (const auto& f : feats) hashes.push_back(f.empty() ? sig_hash::of(0) : by_name[f]);
    ax.features = distinct_by_hash(feats, hashes);
  }

  std::vector<std::uint32_t> heads_count = {0};
  // A GQA group is stated through num_kv_heads = num_heads / group: when some call states one, the
  // first stated head count is one every group divides (their least common multiple, within limits);
  // a group it misses is stated with a head count of the same class (realise_groups()).
  std::uint32_t divisible = 1;
  bool any_group = false;
  const auto note_group = [&](std::uint32_t g) {
    if (g == 0) return;
    any_group = true;
    const auto lcm = std::uint64_t{divisible} / std::gcd(divisible, g) * g;
    if (lcm <= limits::num_heads) divisible = static_cast<std::uint32_t>(lcm);
  };
  for (auto g : ax.calls.gqa_group) note_group(g);
  for (const auto& c : ax.calls.corners) note_group(c.gqa_group);
  if (any_group) heads_count.push_back(divisible);
  for (const auto* r : s.rules) {
    if (!r->min_num_heads && !r->max_num_heads) continue;
    heads_count.push_back(std::max<std::uint32_t>(r->min_num_heads, 1));
    if (r->min_num_heads > 1) heads_count.push_back(r->min_num_heads - 1);
    if (r->max_num_heads) {
      heads_count.push_back(r->max_num_heads);
      heads_count.push_back(r->max_num_heads + 1);
    }
  }
  {
    // Predicate 0 is "unknown" (0); each bounded rule is an interval over the sorted candidate
    // values: its key is flipped at the interval's first value and again past its last, and a
    // prefix XOR gives each value its hash.
    const auto values = first_occurrences(heads_count);
    std::vector<std::uint32_t> sorted(values);
    std::sort(sorted.begin(), sorted.end());
    std::vector<sig_hash> diff(sorted.size() + 1);
    // The same flips over the interval starts, for the classes of head counts that are no candidate.
    std::vector<std::uint32_t> starts = {1};
    for (const auto* r : s.rules) {
      if (!r->min_num_heads && !r->max_num_heads) continue;
      starts.push_back(std::max<std::uint32_t>(r->min_num_heads, 1));
      if (r->max_num_heads && r->max_num_heads < limits::num_heads) starts.push_back(r->max_num_heads + 1);
    }
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    starts.erase(std::upper_bound(starts.begin(), starts.end(), limits::num_heads), starts.end());
    std::vector<sig_hash> start_diff(starts.size() + 1);
    std::size_t predicate = 1;
    for (const auto* r : s.rules) {
      if (!r->min_num_heads && !r->max_num_heads) continue;
      const auto lo = std::max<std::uint32_t>(r->min_num_heads, 1);
      const auto hi = r->max_num_heads ? r->max_num_heads : UINT32_MAX;
      if (lo <= hi) {
        const auto a = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), lo) - sorted.begin());
        const auto b = static_cast<std::size_t>(std::upper_bound(sorted.begin(), sorted.end(), hi) - sorted.begin());
        diff[a].flip(predicate);
        diff[b].flip(predicate);
        const auto sa = static_cast<std::size_t>(std::lower_bound(starts.begin(), starts.end(), lo) - starts.begin());
        const auto sb = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), hi) - starts.begin());
        start_diff[sa].flip(predicate);
        start_diff[sb].flip(predicate);
      }
      ++predicate;
    }
    std::map<std::uint32_t, sig_hash> at;
    sig_hash running;
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      running.flip(diff[i]);
      at[sorted[i]] = sorted[i] == 0 ? sig_hash::of(0) : running;
    }
    std::vector<sig_hash> hashes;
    hashes.reserve(values.size());
    for (auto v : values) hashes.push_back(at[v]);
    ax.num_heads = distinct_by_hash(values, hashes);
    // Classes numbered in order of first interval; each value of the axis takes its interval's class.
    std::unordered_map<sig_hash, std::uint32_t, sig_hash_hasher> class_of;
    sig_hash start_running;
    ax.interval_class.reserve(starts.size());
    for (std::size_t k = 0; k < starts.size(); ++k) {
      start_running.flip(start_diff[k]);
      const auto id = static_cast<std::uint32_t>(class_of.size());
      ax.interval_class.push_back(class_of.emplace(start_running, id).first->second);
    }
    ax.head_starts = std::move(starts);
    for (auto n : ax.num_heads) {
      std::uint32_t id = UINT32_MAX;  // unknown, or above the limit: no class to realise a group in
      if (n != 0 && n <= limits::num_heads) {
        const auto k = static_cast<std::size_t>(std::upper_bound(ax.head_starts.begin(), ax.head_starts.end(), n) -
                                                ax.head_starts.begin() - 1);
        id = ax.interval_class[k];
      }
      ax.head_class.push_back(id);
    }
  }
  return ax;
}

// The head count that states group g for the head-count value num_heads[i]: the value itself when g
// divides it, else the smallest multiple of g in an interval of its class (same answer from every
// rule), else 0. Run once the space is accepted: the table has num_heads x groups entries.
inline void realise_groups(diff_axes& ax) {
  std::set<std::uint32_t> groups;
  for (auto g : ax.calls.gqa_group)
    if (g) groups.insert(g);
  for (const auto& c : ax.calls.corners)
    if (c.gqa_group) groups.insert(c.gqa_group);
  ax.groups.assign(groups.begin(), groups.end());
  if (ax.groups.empty()) return;
  std::vector<std::vector<std::size_t>> intervals;  // by class, ascending
  for (std::size_t k = 0; k < ax.interval_class.size(); ++k) {
    if (ax.interval_class[k] >= intervals.size()) intervals.resize(ax.interval_class[k] + 1);
    intervals[ax.interval_class[k]].push_back(k);
  }
  ax.realised.assign(ax.num_heads.size() * ax.groups.size(), 0);
  for (std::size_t i = 0; i < ax.num_heads.size(); ++i) {
    const auto n = ax.num_heads[i];
    if (ax.head_class[i] == UINT32_MAX) continue;
    for (std::size_t j = 0; j < ax.groups.size(); ++j) {
      const std::uint64_t g = ax.groups[j];
      auto& slot = ax.realised[i * ax.groups.size() + j];
      if (n % g == 0) {
        slot = n;
        continue;
      }
      for (auto k : intervals[ax.head_class[i]]) {
        const std::uint64_t lo = ax.head_starts[k];
        const std::uint64_t hi = k + 1 < ax.head_starts.size() ? ax.head_starts[k + 1] - 1 : limits::num_heads;
        const auto m = (lo + g - 1) / g * g;
        if (m <= hi) {
          slot = static_cast<std::uint32_t>(m);
          break;
        }
      }
    }
  }
}

// Configurations (per component set, override and platform point) whose GQA group no head count of
// their num_heads class states: they are compared with the group unstated, and the report says how many.
inline std::size_t unrealised_queries(const diff_axes& ax) {
  std::size_t calls = 0;
  for (std::size_t i = 0; i < ax.num_heads.size(); ++i)
    for (std::size_t j = 0; j < ax.groups.size(); ++j)
      if (ax.head_class[i] != UINT32_MAX && ax.realised[i * ax.groups.size() + j] == 0)
        calls = saturating_sum(calls, ax.calls.with_group(ax.groups[j]));
  return saturating_product({ax.head_sizes.size(), ax.dtypes.size(), ax.kv_cache_dtypes.size(), ax.block_sizes.size(),
                             ax.attn_types.size(), ax.features.size(), calls});
}

// How many queries for_each_query(ax) builds, computed from the axes alone.
inline std::size_t query_count(const diff_axes& ax) {
  return saturating_product({ax.head_sizes.size(), ax.dtypes.size(), ax.kv_cache_dtypes.size(), ax.block_sizes.size(),
                             ax.attn_types.size(), ax.features.size(), ax.num_heads.size(), ax.calls.size()});
}

inline std::string query_sizes_text(const diff_axes& ax) {
  return "head sizes " + with_commas(ax.head_sizes.size()) + " x dtypes " + with_commas(ax.dtypes.size()) +
         " x kv cache dtypes " + with_commas(ax.kv_cache_dtypes.size()) + " x block sizes " +
         with_commas(ax.block_sizes.size()) + " x attention types " + with_commas(ax.attn_types.size()) +
         " x features " + with_commas(ax.features.size()) + " x num_heads " + with_commas(ax.num_heads.size()) +
         " x calls " + with_commas(ax.calls.size()) + " (" + ax.calls.sizes_text() + ")";
}

// Each query of the axes, in enumeration order, built as it is visited: a block's queries are never
// all held unless the caller keeps them. Needs realise_groups(ax) first.
template <class F>
void for_each_query(const diff_axes& ax, attention_domain d, attention_mode m, F&& f) {
  for (auto h : ax.head_sizes)
    for (auto dt : ax.dtypes)
      for (auto kv : ax.kv_cache_dtypes)
        for (auto bs : ax.block_sizes)
          for (auto at : ax.attn_types)
            for (const auto& feature : ax.features)
              for (std::size_t i = 0; i < ax.num_heads.size(); ++i) {
                const auto n = ax.num_heads[i];
                ax.calls.for_each([&](const call_point& c) {
                  query q;
                  q.domain = d;
                  q.mode = m;
                  q.head_size = h;
                  q.dtype = dt;
                  q.kv_cache_dtype = kv;
                  q.block_size = bs;
                  q.attn_type = at;
                  q.num_heads = n;
                  if (!feature.empty()) q.required.insert(feature);
                  q.phase = c.phase;
                  q.seq_len_q = c.seq_len_q;
                  q.seq_len_kv = c.seq_len_kv;
                  q.batch_size = c.batch_size;
                  if (c.gqa_group != 0 && n != 0) {
                    const auto j = static_cast<std::size_t>(
                        std::lower_bound(ax.groups.begin(), ax.groups.end(), c.gqa_group) - ax.groups.begin());
                    if (const auto r = ax.realised[i * ax.groups.size() + j]; r != 0) {
                      q.num_heads = r;
                      q.num_kv_heads = r / c.gqa_group;
                    }
                  }
                  f(std::move(q));
                });
              }
}

// Backends whose descriptors differ between the catalogs (or exist in one only) and that could serve
// (v, d, m) in either: forcing any other backend gives the same answer in both, because a forced
// backend ignores the policy, and one that serves the scope in neither catalog is rejected by both.
inline std::vector<std::string> forced_candidates(const registry& a, const registry& b, device_vendor v,
                                                  attention_domain d, attention_mode m) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto could_serve = [&](const backend_descriptor* x, const registry& in) {
    if (!x) return false;
    bool any = false;
    const auto serving = in.selecting_domain(d);
    const auto look = [&](const capabilities& c) {
      if (serves(*x, c, serving) && c.mode == m && runs_on_vendor(c, v)) any = true;
    };
    if (x->variants.empty()) look(x->caps);
    for (const auto& c : x->variants) look(c);
    return any;
  };
  const auto consider = [&](const backend_descriptor& x) {
    if (!seen.insert(x.name).second) return;
    const auto* in_a = a.find(x.name);
    const auto* in_b = b.find(x.name);
    if (in_a && in_b && *in_a == *in_b) return;
    if (!in_a || !in_b || could_serve(in_a, a) || could_serve(in_b, b)) out.push_back(x.name);
  };
  for (const auto& x : a.backends()) consider(x);
  for (const auto& x : b.backends()) consider(x);
  // Where the rules of this domain and vendor differ and one of them substitutes for a forced backend
  // (policy_rule::forced), forcing any backend may decide differently, one that cannot run here most of
  // all: every backend is forced.
  const auto substitutes = [](const policy_rule* r) { return r->forced != forced_handling::honoured; };
  const auto ra = rules_for(a, v, d);
  const auto rb = rules_for(b, v, d);
  if (!same_rules(a, b, v, d) &&
      (std::any_of(ra.begin(), ra.end(), substitutes) || std::any_of(rb.begin(), rb.end(), substitutes))) {
    const auto add_all = [&](const registry& r) {
      for (const auto& x : r.backends())
        if (std::find(out.begin(), out.end(), x.name) == out.end()) out.push_back(x.name);
    };
    add_all(a);
    add_all(b);
  }
  return out;
}

// The backend, with the warning advisory the engine shows for it (`NAME warning:ID`), or the error code.
inline std::string decision_of(const selection_result& r) {
  if (!r) return "error:" + std::string(to_string(r.error().code));
  return r->warning == nullptr ? std::string(r->name()) : std::string(r->name()) + " warning:" + r->warning->id;
}

inline std::string rule_of(const registry& reg, const query& q, const platform& p, const std::string& spec) {
  if (!spec.empty()) return "forced " + spec;
  query selecting = q;
  selecting.domain = reg.selecting_domain(q.domain);  // a drafter this catalog does not serve: the decoder's rules
  const auto* rule = reg.policy().match(selecting, p);
  return rule ? to_string(*rule) : std::string("registration order");
}

inline std::string components_text(const platform& p) {
  if (p.components().empty()) return "none";
  return join(p.components(), ",", [](const component& c) { return to_string(c); });
}

// Appends each value not yet in `out`; `seen` mirrors `out` so the check is a lookup, not a scan.
template <class T, class F>
void append_unique(std::vector<std::string>& out, std::set<std::string>& seen, const std::vector<T>& values, F&& text) {
  for (const auto& v : values) {
    auto t = text(v);
    if (seen.insert(t).second) out.push_back(std::move(t));
  }
}

inline void append_unique_numbers(std::vector<std::uint32_t>& out, std::set<std::uint32_t>& seen,
                                  const std::vector<std::uint32_t>& values) {
  for (auto v : values)
    if (seen.insert(v).second) out.push_back(v);
}

// The distinct calls of several scopes' call axes, ascending: how many, and the first `keep` as text.
// Each axes' calls come out in order (the product walked like an odometer, merged with its sorted
// corners) and the streams are merged, so counting holds no set of calls (issue 35: the union of
// every block's calls was a set of strings, a 26 MB `calls:` line for a 4 KB catalog).
inline std::pair<std::size_t, std::vector<std::string>> distinct_calls(const std::vector<const call_axes*>& axes,
                                                                       std::size_t keep) {
  struct cursor {
    const call_axes* ax;
    std::vector<call_point> corners;  // sorted, unique
    std::size_t corner = 0;
    std::array<std::size_t, 5> at{};
    bool product_done = false;

    [[nodiscard]] std::array<std::size_t, 5> sizes() const {
      return {ax->phases.size(), ax->seq_len_q.size(), ax->seq_len_kv.size(), ax->batch_size.size(),
              ax->gqa_group.size()};
    }
    [[nodiscard]] std::optional<call_point> product() const {
      if (product_done) return std::nullopt;
      return call_point{ax->phases[at[0]], ax->seq_len_q[at[1]], ax->seq_len_kv[at[2]], ax->batch_size[at[3]],
                        ax->gqa_group[at[4]]};
    }
    [[nodiscard]] std::optional<call_point> current() const {
      auto p = product();
      if (corner == corners.size()) return p;
      if (!p || corners[corner] < *p) return corners[corner];
      return p;
    }
    void advance(const call_point& low) {
      if (const auto p = product(); p && *p == low) {
        const auto n = sizes();
        std::size_t k = n.size();
        while (k > 0) {
          --k;
          if (++at[k] < n[k]) break;
          at[k] = 0;
          if (k == 0) product_done = true;
        }
      }
      if (corner < corners.size() && corners[corner] == low) ++corner;
    }
  };
  std::vector<cursor> cursors;
  for (const auto* ax : axes) {
    cursor c{ax, ax->corners};
    std::sort(c.corners.begin(), c.corners.end());
    c.corners.erase(std::unique(c.corners.begin(), c.corners.end()), c.corners.end());
    cursors.push_back(std::move(c));
  }
  std::size_t count = 0;
  std::vector<std::string> listed;
  for (;;) {
    std::optional<call_point> low;
    for (const auto& c : cursors)
      if (const auto v = c.current(); v && (!low || *v < *low)) low = v;
    if (!low) break;
    ++count;
    if (listed.size() < keep) listed.push_back(call_text(*low));
    for (auto& c : cursors) c.advance(*low);
  }
  return {count, std::move(listed)};
}

}  // namespace detail

ATTNSEL_INLINE catalog_diff diff_catalogs(const catalog& a, const catalog& b, const diff_options& options) {
  using namespace detail;
  catalog_diff out;
  out.a = a.info.name;
  out.b = b.info.name;
  const std::vector<const registry*> regs = {&a.registry, &b.registry};

  // Vendors: every one the library knows (issue 35). Only those a rule or platform constraint named
  // used to be enumerated, so a change of registration order on any other vendor, or in a catalog
  // that names no platform at all, compared nothing and reported "no decision differs".
  const auto vendors = enum_values<device_vendor>();
  std::vector<attention_domain> domains;
  if (options.decoder) domains.push_back(attention_domain::decoder);
  if (options.encoder) domains.push_back(attention_domain::encoder);
  const auto served = [&](attention_domain d) { return a.registry.serves(d) || b.registry.serves(d); };
  // Modes no backend of either catalog has (the linear kinds, for catalogs without linear layers) are
  // not enumerated: every query of one fails alike in both.
  enum_set<attention_mode> modes;
  for (const auto* reg : regs)
    for_each_capabilities(*reg, [&](const backend_descriptor&, const capabilities& c) { modes.insert(c.mode); });
  if (options.drafter && served(attention_domain::drafter)) domains.push_back(attention_domain::drafter);
  if (options.linear && served(attention_domain::linear)) domains.push_back(attention_domain::linear);

  // One block of work: a platform point, a domain and mode, its component sets, query axes and overrides.
  struct block {
    platform point;
    attention_domain domain;
    attention_mode mode;
    std::shared_ptr<const component_family> components;  // shared by the block's platform points
    std::shared_ptr<const diff_axes> axes;               // likewise; queries are built from these
    std::vector<std::string> overrides;
    bool evaluate;  // false: both catalogs provably decide alike here
  };
  std::vector<block> blocks;
  std::vector<const call_axes*> distinct_call_axes;  // for stating the calls, counted without a set
  struct {
    std::set<std::string> dtypes, kv_cache_dtypes, attn_types, modes, features, overrides;
    std::set<std::uint32_t> head_sizes, block_sizes, num_heads;
  } seen;
  std::size_t total = 0;
  std::map<device_vendor, std::size_t> per_vendor_total;
  for (auto v : vendors) {
    const auto points = arch_points(regs, v);
    for (const auto& p : points) out.space.platforms.push_back(point_text(p));
    for (auto d : domains) {
      const bool evaluate = !options.skip_identical || !same_behaviour(a.registry, b.registry, v, d);
      for (auto m : enum_values<attention_mode>()) {
        if (!modes.contains(m)) continue;
        std::vector<std::string> overrides = {""};
        if (options.overrides) {
          const auto forced = forced_candidates(a.registry, b.registry, v, d, m);
          overrides.insert(overrides.end(), forced.begin(), forced.end());
        }
        const auto s = scope_of(regs, v, d, m);
        if (s.caps.empty() && s.rules.empty()) continue;  // no backend, no rule: no_backend in both
        auto ax = std::make_shared<diff_axes>(axes_of(s));
        const auto sets = std::make_shared<const component_family>(component_sets(s));
        // The block's size is checked against the limit from the sizes of its axes, each linear in
        // the catalogs, before any product of them (calls, queries) is built (issue 35: the calls
        // axis was built first, 2.6 GB for a 15 KB catalog).
        const auto queries = query_count(*ax);
        const auto planned = saturating_product({points.size(), sets->size(), overrides.size(), queries});
        if (planned > options.max_configurations || total > options.max_configurations - planned)
          throw std::length_error(
              "diff_catalogs: the configuration space has more than " + with_commas(options.max_configurations) +
              " configurations: " + (total ? with_commas(total) + " before " : std::string()) +
              detail::concat({to_string(v), " ", to_string(d), " ", to_string(m)}) + ", which has " +
              with_commas(planned) + " = platform points " + with_commas(points.size()) + " x component sets " +
              with_commas(sets->size()) + " x overrides " + with_commas(overrides.size()) + " x queries " +
              with_commas(queries) + " (" + query_sizes_text(*ax) +
              "); narrow it with diff_options (domains, overrides) or use fewer thresholds");
        realise_groups(*ax);
        out.space.gqa_unrealised +=
            saturating_product({points.size(), sets->size(), overrides.size(), unrealised_queries(*ax)});
        append_unique(out.space.dtypes, seen.dtypes, ax->dtypes, [](data_type x) { return std::string(to_string(x)); });
        append_unique_numbers(out.space.head_sizes, seen.head_sizes, ax->head_sizes);
        append_unique(out.space.kv_cache_dtypes, seen.kv_cache_dtypes, ax->kv_cache_dtypes,
                      [](cache_dtype x) { return std::string(to_string(x)); });
        append_unique_numbers(out.space.block_sizes, seen.block_sizes, ax->block_sizes);
        append_unique(out.space.attn_types, seen.attn_types, ax->attn_types,
                      [](attention_type x) { return std::string(to_string(x)); });
        append_unique(out.space.modes, seen.modes, std::vector<attention_mode>{m},
                      [](attention_mode x) { return std::string(to_string(x)); });
        append_unique(out.space.features, seen.features, ax->features,
                      [](const std::string& f) { return f.empty() ? std::string("none") : f; });
        append_unique_numbers(out.space.num_heads, seen.num_heads, ax->num_heads);
        append_unique(out.space.overrides, seen.overrides, overrides,
                      [](const std::string& o) { return o.empty() ? std::string("auto") : o; });
        if (std::none_of(distinct_call_axes.begin(), distinct_call_axes.end(),
                         [&](const call_axes* c) { return *c == ax->calls; }))
          distinct_call_axes.push_back(&ax->calls);
        const std::shared_ptr<const diff_axes> shared = std::move(ax);
        const std::size_t size = saturating_product({sets->size(), overrides.size(), queries});
        for (const auto& p : points) {
          total += size;
          per_vendor_total[v] += size;
          out.space.component_sets += sets->size();
          if (evaluate) out.space.evaluated += size;
          blocks.push_back({p, d, m, sets, shared, overrides, evaluate});
        }
      }
    }
  }
  out.space.configurations = total;
  std::tie(out.space.call_count, out.space.calls) = distinct_calls(distinct_call_axes, diff_space::listed_calls);
  std::sort(out.space.head_sizes.begin(), out.space.head_sizes.end());
  std::sort(out.space.block_sizes.begin(), out.space.block_sizes.end());
  std::sort(out.space.num_heads.begin(), out.space.num_heads.end());

  std::map<device_vendor, std::size_t> per_vendor_changed;
  std::map<std::string, std::size_t> group_index;
  // A block's queries are kept while it is evaluated (its platform points and component sets reuse
  // them) when they are few; a larger block builds each as it is visited, so memory stays bounded.
  constexpr std::size_t kept_queries = std::size_t{1} << 16;
  const diff_axes* kept_for = nullptr;
  std::vector<query> kept;
  for (const auto& blk : blocks) {
    if (!blk.evaluate) continue;
    const bool keep = query_count(*blk.axes) <= kept_queries;
    if (keep && kept_for != blk.axes.get()) {
      kept.clear();
      for_each_query(*blk.axes, blk.domain, blk.mode, [&](query&& q) { kept.push_back(std::move(q)); });
      kept_for = blk.axes.get();
    }
    const std::string where = point_text(blk.point);
    for (const auto& choice : blk.components->choices) {
      platform p = blk.point;
      blk.components->each(choice, [&](const component& c) { p.add_component(c.name, c.version); });
      // A measured point's own components keep their measured versions over the enumerated ones.
      for (const auto& c : blk.point.components()) p.add_component(c.name, c.version);
      const auto compare = [&](const query& q) {
        for (const auto& spec : blk.overrides) {
          const override_request ovr{spec, override_source::api};
          const auto ra = select(a.registry, q, p, ovr);
          const auto rb = select(b.registry, q, p, ovr);
          const bool same = decision_of(ra) == decision_of(rb);
          if (same) continue;
          ++out.changed;
          ++per_vendor_changed[p.vendor()];
          auto rule_a = rule_of(a.registry, q, p, spec);
          auto rule_b = rule_of(b.registry, q, p, spec);
          const std::string key = detail::concat({where, "\n", to_string(blk.domain), "\n", rule_a, "\n", rule_b});
          auto [it, added] = group_index.emplace(key, out.groups.size());
          if (added) out.groups.push_back({where, blk.domain, std::move(rule_a), std::move(rule_b), 0, {}});
          auto& g = out.groups[it->second];
          ++g.count;
          const auto from = decision_of(ra);
          const auto to = decision_of(rb);
          auto t = std::find_if(g.transitions.begin(), g.transitions.end(),
                                [&](const diff_transition& x) { return x.from == from && x.to == to; });
          if (t == g.transitions.end()) {
            g.transitions.push_back({from, to, 0, {}});
            t = g.transitions.end() - 1;
          }
          ++t->count;
          if (t->examples.size() < options.max_examples) t->examples.push_back({p, q, spec});
        }
      };
      if (keep) {
        for (const auto& q : kept) compare(q);
      } else {
        for_each_query(*blk.axes, blk.domain, blk.mode, [&](query&& q) { compare(q); });
      }
    }
  }
  for (auto& g : out.groups)
    std::stable_sort(g.transitions.begin(), g.transitions.end(),
                     [](const diff_transition& x, const diff_transition& y) { return x.count > y.count; });
  for (auto v : vendors) out.vendors.push_back({v, per_vendor_total[v], per_vendor_changed[v]});
  return out;
}

namespace detail {

// The first `shown_items` of an axis and how many more there are of `total` (issue 35: a whole axis
// made a 26 MB line).
constexpr std::size_t shown_items = 24;

template <class T>
std::string joined(const std::vector<T>& items, std::size_t total) {
  std::string out;
  std::size_t shown = 0;
  for (const auto& i : items) {
    if (shown == shown_items) break;
    if (!out.empty()) out += ", ";
    if constexpr (std::is_same_v<T, std::string>) {
      out += i;
    } else {
      out += std::to_string(i);
    }
    ++shown;
  }
  if (total > shown) out += ", ... (" + with_commas(total - shown) + " more)";
  return out;
}

inline std::string example_text(const diff_configuration& c) {
  const auto& q = c.query;
  std::string out = "components " + components_text(c.platform) + "; head_size=" + std::to_string(q.head_size) +
                    " dtype=" + std::string(to_string(q.dtype)) +
                    " kv_cache_dtype=" + std::string(to_string(q.kv_cache_dtype));
  if (q.block_size) out += " block_size=" + std::to_string(q.block_size);
  if (q.attn_type != attention_type::decoder) out += " attn_type=" + std::string(to_string(q.attn_type));
  if (q.mode != attention_mode::standard) out += " mode=" + std::string(to_string(q.mode));
  if (q.num_heads) out += " num_heads=" + std::to_string(q.num_heads);
  for (const auto& f : q.required) out += " +" + f;
  if (q.phase != attention_phase::unstated || q.seq_len_q || q.seq_len_kv || q.batch_size)
    out += " " + call_text({q.phase, q.seq_len_q, q.seq_len_kv, q.batch_size});
  if (!c.override_spec.empty()) out += " override=" + c.override_spec;
  return out;
}

}  // namespace detail

ATTNSEL_INLINE std::string diff_text(const catalog_diff& d) {
  using detail::with_commas;
  // Catalog text (names, rules, features) is escaped: a NUL or ESC in it must neither cut the report
  // nor reach a terminal, and a newline must not start a line of its own.
  const auto shown = [](const std::string& text) { return printable(text, 2000); };
  const auto joined = [&](const auto& items) { return shown(detail::joined(items, items.size())); };
  const auto& s = d.space;
  std::string out = "attnsel diff " + shown(d.a) + " -> " + shown(d.b) + "\n";
  out += "space: " + with_commas(s.configurations) + " configurations per catalog, " + with_commas(s.evaluated) +
         " evaluated (the rest have the same backends and rules in both catalogs)\n";
  out += "  platforms:        " + joined(s.platforms) + " (" + with_commas(s.component_sets) +
         " platform x component-set combinations)\n";
  out += "  modes:            " + joined(s.modes) + "\n";
  out += "  head sizes:       " + joined(s.head_sizes) + "\n";
  out += "  dtypes:           " + joined(s.dtypes) + "\n";
  out += "  kv cache dtypes:  " + joined(s.kv_cache_dtypes) + "\n";
  out += "  block sizes:      " + joined(s.block_sizes) + " (0: not pinned)\n";
  out += "  attention types:  " + joined(s.attn_types) + "\n";
  out += "  features:         " + joined(s.features) + "\n";
  out += "  num_heads:        " + joined(s.num_heads) + " (0: unknown)\n";
  if (s.call_count > 1) out += "  calls:            " + shown(detail::joined(s.calls, s.call_count)) + "\n";
  out += "  overrides:        " + joined(s.overrides) + "\n";
  if (s.gqa_unrealised)
    out += "  gqa groups:       " + with_commas(s.gqa_unrealised) +
           " configurations state a GQA group that no head count of their num_heads class realises: compared "
           "with the group unstated\n";
  std::string by_vendor;
  for (const auto& v : d.vendors)
    by_vendor += (by_vendor.empty() ? "" : ", ") + std::string(to_string(v.vendor)) + " " + with_commas(v.changed) +
                 "/" + with_commas(v.configurations);
  if (d.empty()) {
    out += "no decision differs (" + by_vendor + ")\n";
    return out;
  }
  out += with_commas(d.changed) + " configurations change, in " + with_commas(d.groups.size()) +
         " groups (changed/compared by vendor: " + by_vendor + ")\n";
  for (const auto& g : d.groups) {
    out += "\n" + shown(g.platform) + ", " + std::string(to_string(g.domain)) + ": " + with_commas(g.count) + "\n";
    if (g.rule_a == g.rule_b) {
      out += "  rule: " + shown(g.rule_b) + "\n";
    } else {
      out += "  rule: " + shown(g.rule_a) + "  =>  " + shown(g.rule_b) + "\n";
    }
    for (const auto& t : g.transitions) {
      out += "  " + shown(t.from) + " -> " + shown(t.to) + "  (" + with_commas(t.count) + ")\n";
      if (!t.examples.empty()) out += "      e.g. " + shown(detail::example_text(t.examples.front())) + "\n";
    }
  }
  return out;
}

ATTNSEL_INLINE nlohmann::json to_json(const catalog_diff& d) {
  using nlohmann::json;
  const auto& s = d.space;
  json space = {{"platforms", s.platforms},
                {"component_sets", s.component_sets},
                {"modes", s.modes},
                {"head_sizes", s.head_sizes},
                {"dtypes", s.dtypes},
                {"kv_cache_dtypes", s.kv_cache_dtypes},
                {"block_sizes", s.block_sizes},
                {"attn_types", s.attn_types},
                {"features", s.features},
                {"num_heads", s.num_heads},
                {"calls", s.calls},
                {"call_count", s.call_count},
                {"gqa_unrealised", s.gqa_unrealised},
                {"overrides", s.overrides},
                {"configurations", s.configurations},
                {"evaluated", s.evaluated}};
  json vendors = json::array();
  for (const auto& v : d.vendors)
    vendors.push_back({{"vendor", to_string(v.vendor)}, {"configurations", v.configurations}, {"changed", v.changed}});
  json groups = json::array();
  for (const auto& g : d.groups) {
    json transitions = json::array();
    for (const auto& t : g.transitions) {
      json examples = json::array();
      for (const auto& e : t.examples)
        examples.push_back({{"platform", to_json(e.platform)},
                            {"query", to_json(e.query)},
                            {"override", e.override_spec.empty() ? std::string("auto") : e.override_spec}});
      transitions.push_back({{"from", t.from}, {"to", t.to}, {"count", t.count}, {"examples", examples}});
    }
    groups.push_back({{"platform", g.platform},
                      {"domain", to_string(g.domain)},
                      {"rule_a", g.rule_a},
                      {"rule_b", g.rule_b},
                      {"count", g.count},
                      {"transitions", transitions}});
  }
  return {{"a", d.a},       {"b", d.b},           {"changed", d.changed}, {"configurations", s.configurations},
          {"space", space}, {"vendors", vendors}, {"groups", groups}};
}

ATTNSEL_END_NAMESPACE
