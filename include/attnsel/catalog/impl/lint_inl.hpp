// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for lint.hpp: one small check per kind of finding.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/lint.hpp>
#endif

#include <attnsel/catalog/builtin_catalog.hpp>
#include <attnsel/catalog/reference.hpp>

#include <attnsel/core/impl/text.hpp>

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

inline std::string lint_ptr(const std::string& base, std::size_t index) { return base + "/" + std::to_string(index); }

// True when every gfx target of family `inner` is in family `outer`.
inline bool family_within(gfx_family inner, gfx_family outer) { return span_of(outer).covers(span_of(inner)); }

// Platform constraints and policy rules are both an arch_filter and a vendor.
// True when (outer_vendor, outer) accepts every platform (inner_vendor, inner) accepts.
inline bool filter_covers(device_vendor outer_vendor, const arch_filter& outer, device_vendor inner_vendor,
                          const arch_filter& inner) {
  if (outer_vendor != inner_vendor) return false;
  if (outer.min_capability && (!inner.min_capability || *inner.min_capability < *outer.min_capability)) return false;
  if (outer.max_capability && (!inner.max_capability || *outer.max_capability < *inner.max_capability)) return false;
  if (outer.archs.empty() && outer.families.empty()) return true;
  if (inner.archs.empty() && inner.families.empty()) return false;
  for (const auto& g : inner.archs) {
    const bool named = std::find(outer.archs.begin(), outer.archs.end(), g) != outer.archs.end();
    const bool in_family =
        std::any_of(outer.families.begin(), outer.families.end(), [&](gfx_family f) { return g.in_family(f); });
    if (!named && !in_family) return false;
  }
  for (auto f : inner.families)
    if (std::none_of(outer.families.begin(), outer.families.end(), [&](gfx_family o) { return family_within(f, o); }))
      return false;
  return true;
}

// Why a filter can never accept a platform of its vendor; empty when it can.
inline std::string filter_impossible(device_vendor vendor, const arch_filter& f) {
  const auto name = std::string(to_string(vendor));
  if ((f.min_capability || f.max_capability) && vendor != device_vendor::cuda)
    return "a compute-capability range on vendor " + name + " never matches (only CUDA platforms have one)";
  if ((!f.archs.empty() || !f.families.empty()) && vendor != device_vendor::rocm)
    return "gfx targets on vendor " + name + " never match (only ROCm platforms have one)";
  if (f.min_capability && f.max_capability && *f.max_capability < *f.min_capability)
    return "min_capability is above max_capability";
  return {};
}

template <class E>
bool set_covers(enum_set<E> outer, enum_set<E> inner) {
  if (outer.empty()) return true;
  if (inner.empty()) return false;
  return (inner.bits() & ~outer.bits()) == 0;
}

// True when every value `inner` admits for a stated field, `outer` admits too (an unset range admits all).
inline bool shape_covers(const shape_limits& outer, const shape_limits& inner) {
  return std::all_of(shape_fields.begin(), shape_fields.end(), [&](shape_field f) {
    const auto& o = outer[f];
    const auto& i = inner[f];
    return !o || (i && i->min >= o->min && i->max <= o->max);
  });
}

// True when rule `outer` matches every query and platform rule `inner` matches.
inline bool rule_covers(const policy_rule& outer, const policy_rule& inner) {
  if (outer.domain != inner.domain || outer.measured) return false;
  if (!filter_covers(outer.vendor, outer, inner.vendor, inner)) return false;
  if (!set_covers(outer.modes, inner.modes) || !set_covers(outer.attn_types, inner.attn_types)) return false;
  if (outer.min_num_heads || outer.max_num_heads) {
    if (!inner.min_num_heads && !inner.max_num_heads) return false;
    if (std::max<std::uint32_t>(inner.min_num_heads, 1) < std::max<std::uint32_t>(outer.min_num_heads, 1)) return false;
    if (outer.max_num_heads && (!inner.max_num_heads || inner.max_num_heads > outer.max_num_heads)) return false;
  }
  if (!set_covers(outer.kv_cache_dtypes, inner.kv_cache_dtypes)) return false;
  if (!set_covers(outer.dtypes, inner.dtypes)) return false;
  if (!outer.head_sizes.empty() &&
      (inner.head_sizes.empty() || !std::includes(outer.head_sizes.begin(), outer.head_sizes.end(),
                                                  inner.head_sizes.begin(), inner.head_sizes.end())))
    return false;
  if (!set_covers(outer.phases, inner.phases) || !shape_covers(outer.shape, inner.shape)) return false;
  return inner.features.includes(outer.features) && inner.without_features.includes(outer.without_features);
}

// A rule with no narrowing but domain, vendor and (optionally) modes: nothing of that mode falls past it.
inline bool catches_all(const policy_rule& r, attention_mode m) {
  return !r.measured && !r.min_capability && !r.max_capability && r.archs.empty() && r.families.empty() &&
         (r.modes.empty() || r.modes.contains(m)) && r.attn_types.empty() && !r.min_num_heads && !r.max_num_heads &&
         r.kv_cache_dtypes.empty() && r.dtypes.empty() && r.head_sizes.empty() && r.features.empty() &&
         r.without_features.empty() && r.phases.empty() && r.shape.empty();
}

// Why a range of a call rule's `when` can never meet the variant's own range of that field (a stated
// value outside the variant's range fails its gate first), or empty.
inline std::string dead_call_rule(const capabilities& c, const call_rule& r) {
  for (shape_field f : shape_fields) {
    const auto& own = c.shape[f];
    const auto& when = r.when.shape[f];
    if (own && when && (when->max < own->min || when->min > own->max))
      return std::string("its condition ") + std::string(to_string(f)) + " " + to_string(*when) +
             " lies outside the variant's own range " + to_string(*own) + ": the rule never applies";
  }
  return {};
}

// The earlier rules a rule is compared with for shadowed_rule, indexed so that a comparison is made
// only with rules that could cover it (issue 22, issue 23: comparing every pair was quadratic in
// rules). A rule covers another only with the same domain and vendor, and each constraint it states
// the other must state too, narrower. So each earlier rule is filed under its first required feature
// (else its first excluded one, else neither; looked up by each of the later rule's), and there under
// the first of: its head sizes (under each; looked up by the later rule's smallest), its head-count
// range, its first shape range (a range index, looked up by the later rule's lower bound), else plain.
// Rules that are themselves shadowed are left out: whatever they cover, the rule covering them covers,
// and earlier. An identical filter is found by hashing.
class rule_cover_index {
 public:
  [[nodiscard]] std::optional<std::size_t> first_cover(const std::vector<policy_rule>& rules, std::size_t j) const {
    const auto& r = rules[j];
    const auto g = groups_.find(group_key(r));
    if (g == groups_.end()) return std::nullopt;
    const auto& grp = g->second;
    std::optional<std::size_t> best;
    const auto consider_all = [&](const std::vector<std::size_t>& list) {
      for (auto i : list)
        if ((!best || i < *best) && rule_covers(rules[i], r)) best = i;
    };
    if (const auto e = grp.exact.find(filter_key(r)); e != grp.exact.end()) best = e->second;
    grp.rest.visit(r, consider_all);
    for (const auto& f : r.features)
      if (const auto it = grp.by_feature.find(f); it != grp.by_feature.end()) it->second.visit(r, consider_all);
    for (const auto& f : r.without_features)
      if (const auto it = grp.by_without.find(f); it != grp.by_without.end()) it->second.visit(r, consider_all);
    return best;
  }

  void add(const std::vector<policy_rule>& rules, std::size_t i) {
    const auto& r = rules[i];
    auto& grp = groups_[group_key(r)];
    grp.exact.emplace(filter_key(r), i);
    if (!r.features.empty())
      grp.by_feature[*r.features.begin()].add(r, i);
    else if (!r.without_features.empty())
      grp.by_without[*r.without_features.begin()].add(r, i);
    else
      grp.rest.add(r, i);
  }

 private:
  // Ranges filed so that those containing a point are found in a fixed number of look-ups: a range is
  // filed at the level of the smallest power of two at least its length, under the (at most two)
  // blocks of that size it overlaps; a point visits its block at each of the 33 levels.
  class range_index {
   public:
    void add(unsigned field, count_range range, std::size_t rule) {
      const std::uint64_t length = std::uint64_t{range.max} - range.min + 1;
      unsigned level = 0;
      while ((std::uint64_t{1} << level) < length) ++level;
      const std::uint64_t first = std::uint64_t{range.min} >> level;
      const std::uint64_t last = std::uint64_t{range.max} >> level;
      for (std::uint64_t b = first; b <= last; ++b) lists_[key(field, level, b)].push_back(rule);
    }
    template <class Visit>
    void stabbing(unsigned field, std::uint32_t point, Visit&& visit) const {
      if (lists_.empty()) return;
      for (unsigned level = 0; level <= 32; ++level)
        if (const auto it = lists_.find(key(field, level, std::uint64_t{point} >> level)); it != lists_.end())
          visit(it->second);
    }

   private:
    static std::uint64_t key(unsigned field, unsigned level, std::uint64_t block) {
      return (std::uint64_t{field} << 60) | (std::uint64_t{level} << 53) | block;
    }
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> lists_;
  };

  // Rules filed by the first of their head sizes, head-count range and shape ranges they state.
  class sub_index {
   public:
    void add(const policy_rule& r, std::size_t i) {
      if (!r.head_sizes.empty()) {
        for (auto h : r.head_sizes) by_head_size_[h].push_back(i);
        return;
      }
      if (r.min_num_heads || r.max_num_heads) {
        ranges_.add(heads_field, heads_range(r), i);
        return;
      }
      for (shape_field f : shape_fields)
        if (const auto& own = r.shape[f]) {
          ranges_.add(field_number(f), *own, i);
          return;
        }
      plain_.push_back(i);
    }
    // Visits every list that may hold a rule covering `r`.
    template <class Visit>
    void visit(const policy_rule& r, Visit&& visit_list) const {
      visit_list(plain_);
      if (!r.head_sizes.empty())
        if (const auto it = by_head_size_.find(r.head_sizes.front()); it != by_head_size_.end()) visit_list(it->second);
      if (r.min_num_heads || r.max_num_heads) ranges_.stabbing(heads_field, heads_range(r).min, visit_list);
      for (shape_field f : shape_fields)
        if (const auto& own = r.shape[f]) ranges_.stabbing(field_number(f), own->min, visit_list);
    }

   private:
    std::unordered_map<std::uint32_t, std::vector<std::size_t>> by_head_size_;  // under each head size
    range_index ranges_;
    std::vector<std::size_t> plain_;
  };

  struct group {
    std::unordered_map<std::string, std::size_t> exact;
    std::unordered_map<std::string, sub_index> by_feature;  // by the first required feature
    std::unordered_map<std::string, sub_index> by_without;  // by the first excluded one
    sub_index rest;                                         // neither
  };

  static constexpr unsigned heads_field = 15;
  static unsigned field_number(shape_field f) { return static_cast<unsigned>(f); }
  // The head counts a rule's min/max admit (rule_covers reads a min of 0 as 1 and a max of 0 as none).
  static count_range heads_range(const policy_rule& r) {
    count_range out;
    out.min = std::max<std::uint32_t>(r.min_num_heads, 1);
    if (r.max_num_heads) out.max = r.max_num_heads;
    return out;
  }

  static unsigned group_key(const policy_rule& r) {
    return static_cast<unsigned>(r.domain) * 256u + static_cast<unsigned>(r.vendor);
  }

  // Everything rule_covers reads, as text: equal keys, equal filters.
  static std::string filter_key(const policy_rule& r) {
    std::string k = std::to_string(r.min_capability ? r.min_capability->value() : -1) + "," +
                    std::to_string(r.max_capability ? r.max_capability->value() : -1) + "," +
                    std::to_string(r.modes.bits()) + "," + std::to_string(r.attn_types.bits()) + "," +
                    std::to_string(r.min_num_heads) + "," + std::to_string(r.max_num_heads) + "," +
                    std::to_string(r.kv_cache_dtypes.bits()) + "," + std::to_string(r.dtypes.bits()) + "|";
    for (const auto& g : r.archs) k += g.name() + ",";
    k += "|";
    for (auto f : r.families) k += std::to_string(static_cast<unsigned>(f)) + ",";
    k += "|";
    for (const auto& f : r.features) k += f + ",";
    k += "|";
    for (const auto& f : r.without_features) k += f + ",";
    k += "|";
    for (auto h : r.head_sizes) k += std::to_string(h) + ",";
    k += "|" + std::to_string(r.phases.bits()) + "|" + to_string(r.shape);
    return k;
  }

  std::unordered_map<unsigned, group> groups_;
};

inline unsigned caught_key(attention_domain d, device_vendor v, attention_mode m) {
  return (static_cast<unsigned>(d) * 256u + static_cast<unsigned>(v)) * 256u + static_cast<unsigned>(m);
}

inline void check_backends(const registry& reg, std::vector<lint_finding>& out) {
  const auto& rules = reg.policy().rules;
  // One pass over the rules each (issue 22: per backend, they were quadratic): the backends some
  // rule lists, and the (domain, vendor, mode) triples some rule catches whole.
  std::vector<char> listed(reg.backends().size(), 0);
  std::unordered_set<unsigned> caught;
  for (std::size_t r = 0; r < rules.size(); ++r) {
    for (std::size_t e = 0; e < rules[r].order.size(); ++e)
      if (const auto b = reg.resolved(r, e); b < listed.size()) listed[b] = 1;
    for (auto m : enum_values<attention_mode>())
      if (catches_all(rules[r], m)) caught.insert(caught_key(rules[r].domain, rules[r].vendor, m));
  }
  for (std::size_t i = 0; i < reg.backends().size(); ++i) {
    const auto& b = reg.backends()[i];
    const auto bp = lint_ptr("/backends", i);

    // Platform constraints that can never accept.
    const auto check_platforms = [&](const capabilities& c, const std::string& base) {
      for (std::size_t k = 0; k < c.platforms.size(); ++k) {
        const auto why = filter_impossible(c.platforms[k].vendor, c.platforms[k]);
        if (!why.empty()) out.push_back({lint_code::impossible_platform, lint_ptr(base + "/platforms", k), why});
      }
    };
    if (b.variants.empty()) check_platforms(b.caps, bp);
    for (std::size_t k = 0; k < b.variants.size(); ++k) check_platforms(b.variants[k], lint_ptr(bp + "/variants", k));

    // Call rules whose condition the variant's own ranges exclude.
    const auto check_call_rules = [&](const capabilities& c, const std::string& base) {
      for (std::size_t k = 0; k < c.call_rules.size(); ++k) {
        auto why = dead_call_rule(c, c.call_rules[k]);
        if (!why.empty()) out.push_back({lint_code::impossible_call_rule, lint_ptr(base + "/call_rules", k), why});
      }
    };
    if (b.variants.empty()) check_call_rules(b.caps, bp);
    for (std::size_t k = 0; k < b.variants.size(); ++k) check_call_rules(b.variants[k], lint_ptr(bp + "/variants", k));

    // Variants no query can reach: an earlier variant takes each of its domains on each of its platforms.
    for (std::size_t k = 1; k < b.variants.size(); ++k) {
      const auto& v = b.variants[k];
      const domain_set doms = v.domains.empty() ? b.domains : v.domains;
      bool reachable = false;
      doms.for_each([&](attention_domain d) {
        if (!b.domains.contains(d)) return;
        const auto covered = [&](const platform_constraint* pc) {
          for (std::size_t e = 0; e < k; ++e) {
            const auto& earlier = b.variants[e];
            if (!earlier.domains.empty() && !earlier.domains.contains(d)) continue;
            if (earlier.platforms.empty()) return true;
            if (!pc) continue;
            for (const auto& epc : earlier.platforms)
              if (filter_covers(epc.vendor, epc, pc->vendor, *pc)) return true;
          }
          return false;
        };
        if (v.platforms.empty()) {
          if (!covered(nullptr)) reachable = true;
        } else {
          for (const auto& pc : v.platforms)
            if (!covered(&pc)) reachable = true;
        }
      });
      if (!reachable)
        out.push_back({lint_code::shadowed_variant, lint_ptr(bp + "/variants", k),
                       "variant " + v.variant + " of " + b.name +
                           " is never checked: an earlier variant takes every domain and platform it accepts"});
    }

    // Backends no automatic order reaches: listed by no rule, and every (domain, vendor, mode) it
    // could serve has a rule that catches everything, so registration order never applies.
    if (listed[i] || b.forced_only) continue;
    bool fallback_possible = false;
    const auto each_caps = [&](auto&& f) {
      if (b.variants.empty()) {
        f(b.caps);
      } else {
        for (const auto& v : b.variants) f(v);
      }
    };
    each_caps([&](const capabilities& c) {
      b.domains.for_each([&](attention_domain d) {
        if (!c.domains.empty() && !c.domains.contains(d)) return;
        for (auto vendor : enum_values<device_vendor>()) {
          if (!detail::platforms_name_vendor(c.platforms, vendor)) continue;
          if (!caught.count(caught_key(d, vendor, c.mode))) fallback_possible = true;
        }
      });
    });
    if (!fallback_possible)
      out.push_back({lint_code::unreachable_backend, bp,
                     b.name + " is in no rule's order, and every platform it runs on has a rule that catches "
                              "every query it could serve: it can only be forced"});
  }
}

inline void check_rules(const registry& reg, const std::set<std::string>& components,
                        const std::set<std::string>& declared, std::vector<lint_finding>& out) {
  const auto& rules = reg.policy().rules;
  rule_cover_index earlier;
  for (std::size_t j = 0; j < rules.size(); ++j) {
    const auto& r = rules[j];
    const auto rp = lint_ptr("/policies", j);
    auto why = filter_impossible(r.vendor, r);
    if (why.empty() && r.features.intersects(r.without_features))
      why = "a feature is both required (features) and excluded (without_features)";
    if (why.empty() && r.max_num_heads && r.min_num_heads > r.max_num_heads)
      why = "min_num_heads is above max_num_heads";
    if (!why.empty()) out.push_back({lint_code::impossible_rule, rp, "rule '" + to_string(r) + "': " + why});
    if (const auto i = earlier.first_cover(rules, j)) {
      out.push_back({lint_code::shadowed_rule, rp,
                     "rule '" + to_string(r) + "' never matches: earlier rule " + lint_ptr("/policies", *i) + " ('" +
                         to_string(rules[*i]) + "') matches everything it matches"});
    } else if (!r.measured) {
      // A measured rule holds on one device with exact component versions: it never covers a later rule.
      earlier.add(rules, j);
    }
    const auto check_features = [&](const feature_set& names, const std::string& ptr) {
      for (const auto& f : names)
        if (!declared.count(f))
          out.push_back({lint_code::unknown_feature, ptr, "feature '" + f + "' is declared by no backend"});
    };
    check_features(r.features, rp + "/features");
    check_features(r.without_features, rp + "/without_features");
    for (std::size_t e = 0; e < r.order.size(); ++e) {
      const auto& entry = r.order[e];
      const auto ep = lint_ptr(rp + "/order", e);
      const auto check_components = [&](const std::vector<std::string>& names, const std::string& key) {
        for (std::size_t n = 0; n < names.size(); ++n)
          if (!components.count(names[n]))
            out.push_back({lint_code::unknown_component, lint_ptr(detail::concat({ep, "/", key}), n),
                           "component '" + names[n] +
                               "' is required by no backend and named by no built-in catalog or detection mapping"});
      };
      check_components(entry.when, "when");
      check_components(entry.unless, "unless");
      check_features(entry.unless_features, ep + "/unless_features");
    }
  }
}

inline void note_components(const registry& reg, std::set<std::string>& out, bool conditions) {
  for (const auto& b : reg.backends()) {
    for (const auto& req : b.caps.requires_components) out.insert(req.name);
    for (const auto& v : b.variants)
      for (const auto& req : v.requires_components) out.insert(req.name);
  }
  if (!conditions) return;
  for (const auto& r : reg.policy().rules)
    for (const auto& e : r.order) {
      out.insert(e.when.begin(), e.when.end());
      out.insert(e.unless.begin(), e.unless.end());
    }
}

}  // namespace detail

ATTNSEL_INLINE std::vector<lint_finding> lint_catalog(const catalog& c, const lint_options& options) {
  std::set<std::string> components(options.known_components.begin(), options.known_components.end());
  detail::note_components(c.registry, components, false);
  if (options.builtin_components)
    for (auto name : builtin_catalog_names) detail::note_components(builtin_catalog(name).registry, components, true);
  std::set<std::string> declared;
  for (const auto& b : c.registry.backends()) {
    declared.insert(b.caps.features.begin(), b.caps.features.end());
    for (const auto& v : b.variants) declared.insert(v.features.begin(), v.features.end());
  }
  std::vector<lint_finding> out;
  detail::check_backends(c.registry, out);
  detail::check_rules(c.registry, components, declared, out);
  return out;
}

ATTNSEL_INLINE nlohmann::json to_json(const lint_finding& f) {
  return {{"code", to_string(f.code)}, {"pointer", f.pointer}, {"message", f.message}};
}

ATTNSEL_END_NAMESPACE
