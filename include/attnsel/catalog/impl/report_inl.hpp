// SPDX-License-Identifier: Apache-2.0
// Out-of-line definitions for report.hpp: JSON for platforms, queries and traces.
#pragma once

#ifndef ATTNSEL_HEADER_ONLY
#  include <attnsel/catalog/report.hpp>
#endif

#include <attnsel/catalog/impl/json_reader.hpp>
#include <attnsel/core/override.hpp>  // printable

#include <stdexcept>
#include <string>

ATTNSEL_BEGIN_NAMESPACE

ATTNSEL_INLINE nlohmann::json to_json(const platform& p) {
  nlohmann::json j = {{"vendor", std::string(to_string(p.vendor()))}};
  if (!p.device_name().empty()) j["device"] = p.device_name();
  if (p.gfx())
    j["arch"] = p.gfx()->name();
  else if (p.capability())
    j["arch"] = to_string(*p.capability());
  else
    j["arch"] = nullptr;
  j["components"] = nlohmann::json::array();
  for (const auto& c : p.components())
    j["components"].push_back(
        {{"name", c.name}, {"version", c.version ? nlohmann::json(to_string(*c.version)) : nullptr}});
  return j;
}

namespace detail {
// One query field's JSON: an enumerator's name, a count, the features as an array; null for an unstated
// value (a field whose query_field::unstated is set).
template <class T>
nlohmann::json query_field_json(const query_field& field, const T& value) {
  if constexpr (std::is_same_v<T, feature_set>) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : value) out.push_back(f);
    return out;
  } else {
    if (!field.unstated.empty() && value == T{}) return nullptr;
    if constexpr (std::is_enum_v<T>)
      return std::string(to_string(value));
    else
      return value;
  }
}
}  // namespace detail

ATTNSEL_INLINE nlohmann::json to_json(const query& q) {
  nlohmann::json j = nlohmann::json::object();
  for_each_field(q, [&j](const query_field& field, const auto& value) {
    j[std::string(field.name)] = detail::query_field_json(field, value);
  });
  j["head_size_v"] = q.value_head_size();  // the one exception: written as the size it stands for
  return j;
}

ATTNSEL_INLINE nlohmann::json to_json(const candidate_report& c) {
  nlohmann::json j = {{"name", c.name},
                      {"variant", c.variant.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.variant)},
                      {"rank", c.rank},
                      {"verdict", std::string(to_string(c.outcome))},
                      {"forced", c.forced}};
  j["reasons"] = nlohmann::json::array();
  for (const auto& r : c.reasons)
    j["reasons"].push_back({{"code", std::string(to_string(r.code))}, {"message", r.message}});
  if (c.measured)
    j["measured"] = {{"median_us", c.measured->median_us}, {"spread_pct", c.measured->spread_pct}};
  else
    j["measured"] = nullptr;
  j["warnings"] = nlohmann::json::array();
  for (const auto& r : c.warnings)
    j["warnings"].push_back({{"code", std::string(to_string(r.code))}, {"message", r.message}});
  return j;
}

ATTNSEL_INLINE nlohmann::json to_json(const explanation& ex, const query& q, const platform& p,
                                      const override_request& ovr) {
  const auto spec = detail::trim(ovr.spec);
  nlohmann::json j;
  j["backend"] = ex.result.ok() ? nlohmann::json(std::string(ex.result->name())) : nlohmann::json(nullptr);
  j["variant"] = ex.result.ok() && !ex.result->variant_name().empty()
                     ? nlohmann::json(std::string(ex.result->variant_name()))
                     : nlohmann::json(nullptr);
  j["domain"] = std::string(to_string(q.domain));
  j["platform"] = to_json(p);
  j["query"] = to_json(q);
  j["override"] = {{"spec", spec.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::string(spec))},
                   {"source", std::string(to_string(spec.empty() ? override_source::none : ovr.source))}};
  j["rule"] = ex.rule.empty() ? nlohmann::json(nullptr) : nlohmann::json(ex.rule);
  const advisory* warning = ex.result.ok() ? ex.result->warning : nullptr;
  j["advisory"] = warning == nullptr ? nlohmann::json(nullptr)
                                     : nlohmann::json{{"id", warning->id},
                                                      {"action", std::string(to_string(warning->action))},
                                                      {"message", warning->message},
                                                      {"upstream", warning->upstream}};
  j["implied"] = nlohmann::json::array();
  for (const auto& i : ex.implied) j["implied"].push_back({{"component", i.name}, {"because", i.because}});
  j["candidates"] = nlohmann::json::array();
  for (const auto& c : ex.candidates) j["candidates"].push_back(to_json(c));
  j["unstated"] = nlohmann::json::array();
  for (const auto& u : ex.unstated)
    j["unstated"].push_back({{"subject", u.subject}, {"fields", u.fields}, {"condition", u.condition}});
  j["stale"] = nlohmann::json::array();
  for (const auto& s : ex.stale)
    j["stale"].push_back({{"rule", s.rule}, {"measured_on", s.measured_on}, {"differences", s.differences}});
  if (ex.result.ok()) {
    j["error"] = nullptr;
  } else {
    const auto& e = ex.result.error();
    j["error"] = {{"code", std::string(to_string(e.code))}, {"message", e.message}, {"suggestions", e.suggestions}};
  }
  return j;
}

ATTNSEL_INLINE platform platform_from_json(const nlohmann::json& j) {
  using detail::child;
  const detail::json_reader in("platform", detail::json_error_style::invalid_argument);
  in.object(j, "", {"vendor", "device", "arch", "capability", "components"});
  platform p(in.enumerator<device_vendor>(in.required(j, "", "vendor"), "/vendor"));
  if (const nlohmann::json* m = detail::json_reader::nullable_member(j, "device"))
    p.set_device_name(in.string(*m, "/device"));
  for (const char* key : {"arch", "capability"}) {
    const nlohmann::json* m = detail::json_reader::nullable_member(j, key);
    if (m == nullptr) continue;
    // Read as --arch and Platform() read what a person types: the vendor's own kind of arch, and no
    // arch-specific target (sm_100a).
    const auto text = in.string(*m, child("", key));
    if (const auto why = set_arch_text(p, text); !why.empty())
      in.fail(child("", key), "'" + printable(text, 64) + "' " + why);
  }
  if (const nlohmann::json* m = detail::json_reader::nullable_member(j, "components")) {
    in.list(*m, "/components", "an array of \"name[=version]\" or {name, version}", true);
    for (std::size_t i = 0; i < m->size(); ++i) {
      const auto& c = (*m)[i];
      const auto ptr = child("/components", i);
      std::string spec;
      if (c.is_string()) {
        spec = c.get<std::string>();
      } else {
        in.object(c, ptr, {"name", "version"});
        spec = in.string(in.required(c, ptr, "name"), child(ptr, "name"));
        if (const nlohmann::json* v = detail::json_reader::nullable_member(c, "version"))
          spec += "=" + in.string(*v, child(ptr, "version"));
      }
      if (const auto why = add_component_text(p, spec); !why.empty())  // as --component reads it
        in.fail(ptr, "'" + printable(spec, 64) + "' " + why);
    }
  }
  return p;
}

ATTNSEL_INLINE query query_from_json(const nlohmann::json& j) {
  const detail::json_reader in("query", detail::json_error_style::invalid_argument);
  // The field list's names, gathered once: a listed field is a known key.
  static const auto keys = detail::keys_of_fields<query>({});
  in.object(j, "", keys);
  query q;
  // Each field as the list states it; null is unstated. Counts take 0 to their bound (limits.hpp): a
  // value in range but still invalid (head_size 0) is select()'s bad_query.
  for_each_field(q, [&](const query_field& field, auto& member) {
    const auto* m = detail::json_reader::nullable_member(j, field.name);
    if (m == nullptr) return;
    const auto at = "/" + std::string(field.name);
    using T = std::decay_t<decltype(member)>;
    if constexpr (std::is_same_v<T, feature_set>)
      member = in.features(*m, at);
    else if constexpr (std::is_enum_v<T>)
      member = in.enumerator<T>(*m, at);
    else
      member = in.uint32(*m, at, 0, field.max);
  });
  return q;
}

ATTNSEL_END_NAMESPACE
