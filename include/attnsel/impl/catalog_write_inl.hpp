// SPDX-License-Identifier: Apache-2.0
// Catalog writing: a catalog to the JSON document the reader takes back unchanged.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog.hpp>
#endif

#include <attnsel/impl/json_reader.hpp>

#include <limits>
#include <string>

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

inline nlohmann::json capabilities_json(const capabilities& c, nlohmann::json out) {
  out["dtypes"] = enum_list_json(c.dtypes);
  out["kv_cache_dtypes"] = enum_list_json(c.kv_cache_dtypes);
  out["head_sizes"] = head_sizes_json(c.head_sizes);
  out["value_head_sizes"] = c.value_head_sizes ? head_sizes_json(*c.value_head_sizes) : json("equal");
  out["block_size_multiples"] = c.block_size_multiples.empty() ? json("any") : json(c.block_size_multiples);
  out["preferred_block_size"] = c.preferred_block_size;
  out["attn_types"] = enum_list_json(c.attn_types);
  out["mode"] = std::string(to_string(c.mode));
  out["features"] = names_json(c.features);
  if (c.platforms.empty()) {
    out["platforms"] = "any";
  } else {
    out["platforms"] = json::array();
    for (const auto& pc : c.platforms) {
      json p = {{"vendor", std::string(to_string(pc.vendor))}};
      arch_filter_json(pc, p);
      out["platforms"].push_back(std::move(p));
    }
  }
  out["requires"] = json::array();
  for (const auto& r : c.requires_components) {
    json req = {{"component", r.name}};
    if (r.min_version) req["min_version"] = to_string(*r.min_version);
    out["requires"].push_back(std::move(req));
  }
  return out;
}

inline nlohmann::json backend_json(const backend_descriptor& b) {
  json j = {{"name", b.name}};
  if (!b.aliases.empty()) j["aliases"] = b.aliases;
  if (!b.description.empty()) j["description"] = b.description;
  j["domains"] = enum_list_json(b.domains);
  j = capabilities_json(b.caps, std::move(j));
  if (!b.variants.empty()) {
    j["variants"] = json::array();
    for (const auto& v : b.variants) {
      json vj = {{"name", v.variant}};
      if (!v.domains.empty()) vj["domains"] = enum_list_json(v.domains);
      j["variants"].push_back(capabilities_json(v, std::move(vj)));
    }
  }
  return j;
}

inline nlohmann::json rule_json(const policy_rule& r) {
  json j = {{"domain", std::string(to_string(r.domain))}, {"vendor", std::string(to_string(r.vendor))}};
  arch_filter_json(r, j);
  if (!r.modes.empty()) j["modes"] = enum_list_json(r.modes);
  if (r.min_num_heads) j["min_num_heads"] = r.min_num_heads;
  if (r.max_num_heads) j["max_num_heads"] = r.max_num_heads;
  if (!r.kv_cache_dtypes.empty()) j["kv_cache_dtypes"] = enum_list_json(r.kv_cache_dtypes);
  if (!r.dtypes.empty()) j["dtypes"] = enum_list_json(r.dtypes);
  if (!r.features.empty()) j["features"] = names_json(r.features);
  if (!r.without_features.empty()) j["without_features"] = names_json(r.without_features);
  if (!r.note.empty()) j["note"] = r.note;
  j["order"] = json::array();
  for (const auto& e : r.order) {
    if (e.when.empty() && e.unless.empty() && e.unless_features.empty()) {
      j["order"].push_back(e.backend);
      continue;
    }
    json ej = {{"backend", e.backend}};
    if (!e.when.empty()) ej["when"] = e.when;
    if (!e.unless.empty()) ej["unless"] = e.unless;
    if (!e.unless_features.empty()) ej["unless_features"] = names_json(e.unless_features);
    j["order"].push_back(std::move(ej));
  }
  return j;
}

}  // namespace detail

ATTNSEL_INLINE nlohmann::json to_json(const catalog& c) {
  using detail::json;
  json out = {{"format", "attnsel-catalog"}, {"version", catalog_format_version}, {"name", c.info.name}};
  if (!c.info.description.empty()) out["description"] = c.info.description;
  if (!c.info.source.empty()) out["source"] = c.info.source;
  if (!c.info.commits.empty()) out["commits"] = c.info.commits;
  out["backends"] = json::array();
  for (const auto& b : c.registry.backends()) out["backends"].push_back(detail::backend_json(b));
  out["policies"] = json::array();
  for (const auto& r : c.registry.policy().rules) out["policies"].push_back(detail::rule_json(r));
  if (!c.registry.implications().empty()) {
    out["implications"] = json::object();
    for (const auto& imp : c.registry.implications()) out["implications"][imp.component] = imp.implies;
  }
  return out;
}

ATTNSEL_END_NAMESPACE
