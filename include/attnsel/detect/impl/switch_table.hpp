// SPDX-License-Identifier: Apache-2.0
// The engine switch table (catalog/engine_switches.json) read strictly: environment conditions and
// the components each switch requires.
#pragma once

#include <attnsel/detect/impl/probes.hpp>

ATTNSEL_BEGIN_NAMESPACE
namespace detail::detect {

inline bool truthy(const std::optional<std::string>& value, const switch_env_condition& c) {
  if (!value) return c.default_value;
  const auto v = lower(trim(*value));
  return std::any_of(c.true_values.begin(), c.true_values.end(), [&](const std::string& t) { return lower(t) == v; });
}

// The switch table through the one strict JSON reader: errors name the JSON pointer and what was found.
// Lists hold at most 256 items (a table is at most 1 MiB of text too).
inline json_reader switch_table_reader() {
  catalog_limits bounds;
  bounds.max_list_elements = 256;
  return {"switch table", json_error_style::pointer, bounds};
}

inline std::string component_name(const json_reader& r, const nlohmann::json& j, const std::string& ptr) {
  auto s = r.string(j, ptr);
  if (!is_valid_feature_name(s)) r.expected(ptr, "a lower_snake component name", j);
  return s;
}

inline switch_env_condition env_condition(const json_reader& r, const nlohmann::json& j, const std::string& ptr) {
  r.object(j, ptr, {"name", "default", "true_values", "want"});
  switch_env_condition c;
  const auto& name = r.required(j, ptr, "name");
  c.name = r.string(name, child(ptr, "name"));
  if (c.name.empty() || c.name.size() > 128) r.expected(child(ptr, "name"), "a variable name", name);
  if (const auto* m = json_reader::member(j, "default")) c.default_value = r.boolean(*m, child(ptr, "default"));
  if (const auto* m = json_reader::member(j, "want")) c.want = r.boolean(*m, child(ptr, "want"));
  const auto& values =
      r.list(r.required(j, ptr, "true_values"), child(ptr, "true_values"), "a non-empty array of strings");
  for (std::size_t t = 0; t < values.size(); ++t)
    c.true_values.push_back(r.string(values[t], child(child(ptr, "true_values"), t)));
  return c;
}

inline switch_requirement requirement(const json_reader& r, const nlohmann::json& j, const std::string& ptr) {
  r.object(j, ptr, {"component", "above"});
  switch_requirement q;
  q.component = component_name(r, r.required(j, ptr, "component"), child(ptr, "component"));
  if (const auto* m = json_reader::member(j, "above")) {
    q.above = parse_component_version(r.string(*m, child(ptr, "above")));
    if (!q.above) r.expected(child(ptr, "above"), "a dotted numeric version", *m);
  }
  return q;
}

inline engine_switch switch_row(const json_reader& r, const nlohmann::json& j, const std::string& ptr) {
  r.object(j, ptr, {"component", "engine", "vendor", "capabilities", "env", "requires", "source", "note"});
  engine_switch s;
  s.component = component_name(r, r.required(j, ptr, "component"), child(ptr, "component"));
  if (const auto* m = json_reader::member(j, "engine")) s.engine = r.string(*m, child(ptr, "engine"));
  if (const auto* m = json_reader::member(j, "source")) s.source = r.string(*m, child(ptr, "source"));
  if (const auto* m = json_reader::member(j, "note")) (void)r.string(*m, child(ptr, "note"));
  if (const auto* m = json_reader::member(j, "vendor"))
    s.vendor = r.enumerator<device_vendor>(*m, child(ptr, "vendor"));
  if (const auto* m = json_reader::member(j, "capabilities")) {
    const auto p = child(ptr, "capabilities");
    const auto& caps = r.list(*m, p, "a non-empty array of compute capabilities");
    for (std::size_t k = 0; k < caps.size(); ++k) s.capabilities.push_back(r.capability(caps[k], child(p, k)));
  }
  if (const auto* m = json_reader::member(j, "env")) {
    const auto p = child(ptr, "env");
    const auto& env = r.list(*m, p, "an array of environment conditions", true);
    for (std::size_t k = 0; k < env.size(); ++k) s.env.push_back(env_condition(r, env[k], child(p, k)));
  }
  if (const auto* m = json_reader::member(j, "requires")) {
    const auto p = child(ptr, "requires");
    const auto& req = r.list(*m, p, "an array of required components", true);
    for (std::size_t k = 0; k < req.size(); ++k) s.requires_components.push_back(requirement(r, req[k], child(p, k)));
  }
  return s;
}

inline std::vector<engine_switch> switch_table(const nlohmann::json& doc) {
  const auto r = switch_table_reader();
  r.object(doc, "", {"format", "version", "description", "switches"});
  const auto& format = r.required(doc, "", "format");
  if (r.string(format, "/format") != "attnsel-switches") r.expected("/format", "\"attnsel-switches\"", format);
  (void)r.uint32(r.required(doc, "", "version"), "/version", 1, 1);
  if (const auto* m = json_reader::member(doc, "description")) (void)r.string(*m, "/description");
  const auto& rows = r.list(r.required(doc, "", "switches"), "/switches", "an array of switches", true);
  std::vector<engine_switch> out;
  for (std::size_t i = 0; i < rows.size(); ++i) out.push_back(switch_row(r, rows[i], child("/switches", i)));
  return out;
}

}  // namespace detail::detect
ATTNSEL_END_NAMESPACE
