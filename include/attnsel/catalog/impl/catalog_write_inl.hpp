// SPDX-License-Identifier: Apache-2.0
// Catalog writing: a catalog to the JSON document the reader takes back unchanged.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/catalog.hpp>
#endif

#include <attnsel/catalog/impl/json_reader.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

ATTNSEL_BEGIN_NAMESPACE

namespace detail {

template <class E>
nlohmann::json enum_list_json(enum_set<E> set) {
  if (set.empty()) return "any";
  nlohmann::json out = nlohmann::json::array();
  set.for_each([&](E v) { out.push_back(std::string(to_string(v))); });
  return out;
}

inline nlohmann::json names_json(const feature_set& f) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& n : f) out.push_back(n);
  return out;
}

inline nlohmann::json head_sizes_json(const head_size_spec& s) {
  switch (s.form) {
    case head_size_spec::kind::any:
      return "any";
    case head_size_spec::kind::set:
      return s.values;
    case head_size_spec::kind::range: {
      nlohmann::json out = nlohmann::json::object();
      out["min"] = s.min;
      if (s.max != std::numeric_limits<std::uint32_t>::max()) out["max"] = s.max;
      out["multiple_of"] = s.multiple_of;
      return out;
    }
  }
  return "any";
}

// The one writer of an arch filter: the keys the reader's arch_filter_of takes, set ones only.
inline void arch_filter_json(const arch_filter& f, nlohmann::json& out) {
  if (f.min_capability) out["min_capability"] = to_string(*f.min_capability);
  if (f.max_capability) out["max_capability"] = to_string(*f.max_capability);
  if (!f.archs.empty()) {
    out["archs"] = nlohmann::json::array();
    for (const auto& a : f.archs) out["archs"].push_back(a.name());
  }
  if (!f.families.empty()) {
    out["families"] = nlohmann::json::array();
    for (auto fam : f.families) out["families"].push_back(std::string(to_string(fam)));
  }
}

inline nlohmann::json range_json(const count_range& r) {
  nlohmann::json out = nlohmann::json::object();
  if (r.min != 1 || !r.bounded_above()) out["min"] = r.min;
  if (r.bounded_above()) out["max"] = r.max;
  return out;
}

inline nlohmann::json component_condition_json(const component_condition& c) {
  json out = {{"component", c.name}};
  if (c.min_version) out["min_version"] = to_string(*c.min_version);
  if (c.below_version) out["below_version"] = to_string(*c.below_version);
  return out;
}

// The shape ranges of `limits`: set ones, or with `all` every field ("any" when unset, so a variant
// that drops its backend's range reads back without it).
inline void shape_json(const shape_limits& limits, bool all, nlohmann::json& out) {
  for (shape_field f : shape_fields) {
    const auto key = std::string(to_string(f));
    if (limits[f])
      out[key] = range_json(*limits[f]);
    else if (all)
      out[key] = "any";
  }
}

// A call condition: `{"never": true}` alone, else its field list's set fields (below).
inline nlohmann::json condition_json(const call_condition& c);

// One value's JSON, by its type: the codec the field lists' writers share (capabilities, advisories,
// model rules). An empty list of platforms or block sizes is "any", an unset value head size "equal".
inline json value_json(const std::string& s) { return s; }
inline json value_json(const std::vector<std::string>& v) { return v; }
inline json value_json(std::uint32_t n) { return n; }
json value_json(bool) = delete;  // a flag is no count: give it its own codec
template <class E, std::enable_if_t<std::is_enum_v<E>, int> = 0>
json value_json(E v) {
  return std::string(to_string(v));
}
template <class E>
json value_json(enum_set<E> set) {
  return enum_list_json(set);
}
inline json value_json(const head_size_spec& s) { return head_sizes_json(s); }
inline json value_json(const std::optional<head_size_spec>& s) { return s ? head_sizes_json(*s) : json("equal"); }
inline json value_json(const std::vector<std::uint32_t>& sizes) { return sizes.empty() ? json("any") : json(sizes); }
inline json value_json(const feature_set& f) { return names_json(f); }
inline json value_json(const call_condition& c) { return condition_json(c); }
inline json value_json(const std::vector<platform_constraint>& platforms) {
  if (platforms.empty()) return "any";
  json out = json::array();
  for (const auto& pc : platforms) {
    json p = {{"vendor", std::string(to_string(pc.vendor))}};
    arch_filter_json(pc, p);
    out.push_back(std::move(p));
  }
  return out;
}
inline json value_json(const std::vector<component_condition>& components) {
  json out = json::array();
  for (const auto& c : components) out.push_back(component_condition_json(c));
  return out;
}
inline json value_json(const std::vector<dtype_head_sizes>& by_dtype) {
  json out = json::object();
  for (const auto& d : by_dtype) out[std::string(to_string(d.dtype))] = head_sizes_json(d.head_sizes);
  return out;
}
inline json value_json(const std::vector<call_rule>& rules) {
  json out = json::array();
  for (const auto& r : rules) {
    json rj = json::object();
    if (!r.when.empty()) rj["when"] = condition_json(r.when);
    rj["require"] = condition_json(r.require);
    if (!r.note.empty()) rj["note"] = r.note;
    out.push_back(std::move(rj));
  }
  return out;
}

// The codecs above are found by ordinary lookup, not ADL: a new one is declared before this point.
// One capability field into `out`: its key, or a shape's own keys (every one, "any" when unset, so a
// variant that drops its backend's range reads back without it).
template <class T>
void field_json(json& out, const capability_field& f, const T& value) {
  out[std::string(f.name)] = value_json(value);
}
inline void field_json(json& out, const capability_field&, const shape_limits& shape) { shape_json(shape, true, out); }

// Every capability field of catalog format `version` or older (all of them, so variants read back
// without inheriting), but a variant's name and domains, which the descriptor writes.
inline nlohmann::json capabilities_json(const capabilities& c, nlohmann::json out, int version) {
  field_list<capabilities>::members([&](const capability_field& f, auto m) {
    if (!f.own_key && f.since <= version) field_json(out, f, c.*decltype(m)::value);
  });
  return out;
}

// Every key of the advisory's field list but the narrowing ones left empty (the required keys always).
inline bool advisory_value_unset(const std::string& s) { return s.empty(); }
inline bool advisory_value_unset(const std::vector<platform_constraint>& v) { return v.empty(); }
inline bool advisory_value_unset(const cache_dtype_set& set) { return set.empty(); }
inline bool advisory_value_unset(const call_condition& c) { return c.empty(); }
template <class T>
bool advisory_value_unset(const T&) {
  return false;  // id, action, message, upstream: required
}

inline json advisory_json(const advisory& a) {
  json out = json::object();
  for_each_field(a, [&](std::string_view key, const auto& value) {
    if (key != "id" && key != "message" && advisory_value_unset(value)) return;
    out[std::string(key)] = value_json(value);
  });
  return out;
}

inline nlohmann::json backend_json(const backend_descriptor& b, int version) {
  json j = {{"name", b.name}};
  if (!b.aliases.empty()) j["aliases"] = b.aliases;
  if (!b.description.empty()) j["description"] = b.description;
  j["domains"] = enum_list_json(b.domains);
  if (b.forced_only) j["forced_only"] = true;
  j = capabilities_json(b.caps, std::move(j), version);
  if (!b.variants.empty()) {
    j["variants"] = json::array();
    for (const auto& v : b.variants) {
      json vj = {{"name", v.variant}};
      if (!v.domains.empty()) vj["domains"] = enum_list_json(v.domains);
      j["variants"].push_back(capabilities_json(v, std::move(vj), version));
    }
  }
  if (!b.advisories.empty()) {
    j["advisories"] = json::array();
    for (const auto& a : b.advisories) j["advisories"].push_back(advisory_json(a));
  }
  return j;
}

// The codecs of the rule's and entry's own types, and whether a value is left unset (a default
// value: an empty list, 0, an unset capability, `honoured`), which the writer leaves out.
inline json value_json(const std::optional<cuda_capability>& c) { return c ? json(to_string(*c)) : json(nullptr); }
inline json value_json(const std::vector<gfx_arch>& archs) {
  json out = json::array();
  for (const auto& a : archs) out.push_back(a.name());
  return out;
}
inline json value_json(const std::vector<gfx_family>& families) {
  json out = json::array();
  for (auto f : families) out.push_back(std::string(to_string(f)));
  return out;
}
inline json value_json(const std::optional<measurement>& m) {
  if (!m) return nullptr;
  json out = json::object();
  if (!m->device.empty()) out["device"] = m->device;
  if (!m->components.empty()) {
    out["components"] = json::array();
    for (const auto& c : m->components) out["components"].push_back(to_string(c));
  }
  if (!m->present.empty()) out["present"] = m->present;
  if (!m->absent.empty()) out["absent"] = m->absent;
  out["times"] = json::array();
  for (const auto& t : m->times)
    out["times"].push_back({{"backend", t.backend}, {"median_us", t.median_us}, {"spread_pct", t.spread_pct}});
  return out;
}
inline json value_json(const std::vector<policy_entry>& order);  // below: an entry is written through these

// One rule or entry field into `out` by its key: a shape as its fields' own keys, the others through
// their codec. A field equal to its declared default (`unset`, the member of a default-constructed
// rule or entry) is left out, unless `required`: the key is written whatever its value.
template <class T>
void rule_field_json(json& out, std::string_view key, const T& value, const T& unset, bool required) {
  if (!required && value == unset) return;
  out[std::string(key)] = value_json(value);
}
inline void rule_field_json(json& out, std::string_view, const shape_limits& shape, const shape_limits&, bool) {
  shape_json(shape, false, out);
}
// A flag is written only where set (`"equal_seq_lens": true`): its default is false.
inline void rule_field_json(json& out, std::string_view key, bool value, bool unset, bool) {
  if (value != unset) out[std::string(key)] = value;
}

inline nlohmann::json condition_json(const call_condition& c) {
  if (c.never) return {{"never", true}};
  json out = json::object();
  for_each_field(c, call_condition{}, [&](std::string_view key, const auto& value, const auto& unset) {
    rule_field_json(out, key, value, unset, false);
  });
  return out;
}

// An entry is its backend's name alone when it states nothing else.
inline json entry_json(const policy_entry& e) {
  json out = json::object();
  for_each_field(e, policy_entry{}, [&](std::string_view key, const auto& value, const auto& unset) {
    rule_field_json(out, key, value, unset, key == "backend");
  });
  return out.size() == 1 ? out.at("backend") : out;
}
inline json value_json(const std::vector<policy_entry>& order) {
  json out = json::array();
  for (const auto& e : order) out.push_back(entry_json(e));
  return out;
}

// Every field of the rule's list: the domain, vendor and order always, the others where set.
inline nlohmann::json rule_json(const policy_rule& r) {
  json out = json::object();
  for_each_field(r, policy_rule{}, [&](std::string_view key, const auto& value, const auto& unset) {
    rule_field_json(out, key, value, unset, key == "domain" || key == "vendor" || key == "order");
  });
  return out;
}

}  // namespace detail

ATTNSEL_INLINE nlohmann::json stock_json(const catalog_info& info) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& s : info.stock) {
    nlohmann::json components = nlohmann::json::array();
    for (const auto& component : s.components) components.push_back(to_string(component));
    out[std::string(to_string(s.vendor))] = {{"components", std::move(components)}, {"because", s.because}};
  }
  return out;
}

namespace detail {
inline json model_rules_json(const std::vector<model_rule>& rules) {
  json out = json::array();
  for (const auto& r : rules) {
    json j = {{"id", r.id}, {"architectures", r.architectures}};
    if (!r.mixed_head_sizes) j["mixed_head_sizes"] = false;
    if (!r.platforms.empty()) j["platforms"] = value_json(r.platforms);
    if (!r.requires_components.empty()) j["requires"] = value_json(r.requires_components);
    if (r.max_head_size != 0) j["max_head_size"] = r.max_head_size;
    if (!r.force.empty()) j["force"] = r.force;
    j["because"] = r.because;
    out.push_back(std::move(j));
  }
  return out;
}

inline json hybrid_pages_json(const hybrid_pages& h) {
  json alignments = json::array();
  for (const auto& a : h.checkpoint_alignments) {
    json modes = json::array();
    for (const auto m : a.linear_modes) modes.push_back(std::string(to_string(m)));
    alignments.push_back(
        {{"linear_modes", std::move(modes)}, {"platforms", value_json(a.platforms)}, {"tokens", a.tokens}});
  }
  return {{"checkpoint_alignments", std::move(alignments)}, {"because", h.because}};
}
}  // namespace detail

ATTNSEL_INLINE nlohmann::json to_json(const catalog& c) {
  using detail::json;
  // Version 1 unless the catalog states something about the call, a stock install or whole models: old
  // readers keep reading it.
  const int version = detail::registry_reads_call(c.registry) || !c.info.stock.empty() || !c.info.model_rules.empty() ||
                              c.info.hybrid_pages.has_value()
                          ? 2
                          : 1;
  json out = {{"format", "attnsel-catalog"}, {"version", version}, {"name", c.info.name}};
  if (!c.info.description.empty()) out["description"] = c.info.description;
  if (!c.info.source.empty()) out["source"] = c.info.source;
  if (!c.info.commits.empty()) out["commits"] = c.info.commits;
  if (!c.info.stock.empty()) out["stock"] = stock_json(c.info);
  if (!c.info.model_rules.empty()) out["model_rules"] = detail::model_rules_json(c.info.model_rules);
  if (c.info.hybrid_pages) out["hybrid_pages"] = detail::hybrid_pages_json(*c.info.hybrid_pages);
  out["backends"] = json::array();
  for (const auto& b : c.registry.backends()) out["backends"].push_back(detail::backend_json(b, version));
  out["policies"] = json::array();
  for (const auto& r : c.registry.policy().rules) out["policies"].push_back(detail::rule_json(r));
  if (!c.registry.implications().empty()) {
    out["implications"] = json::object();
    for (const auto& imp : c.registry.implications()) out["implications"][imp.component] = imp.implies;
  }
  return out;
}

ATTNSEL_END_NAMESPACE
