// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for diff.hpp: diff_catalogs and its text and JSON reports. The configuration
// space it walks and its evaluation helpers are in catalog/impl/diff/ (scope, axes, evaluate).
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/diff.hpp>
#endif

#include <attnsel/catalog/impl/diff/evaluate.hpp>
#include <attnsel/core/impl/text.hpp>
#include <attnsel/core/impl/value_text.hpp>

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

// The query's fields from its field list: each field without an "unstated" meaning (head size, dtypes,
// attention type, mode), and each other one the example states. The domain is its group's.
inline std::string example_text(const diff_configuration& c) {
  std::string out = "components " + components_text(c.platform) + "; " + query_fields_text(c.query, " ", true);
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
